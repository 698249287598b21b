"""Protocol-level LLM tests: ChatOpenAI / AzureChatOpenAI talking HTTP to a scripted server on 127.0.0.1.

Malformed bodies: a 200 whose body is not JSON is a broken or misaddressed endpoint (a web page, a proxy
error), not a passing hiccup, so it raises at once as ``LLMCallError(retryable=False)`` with a message that
says to check ``llm.base_url``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from pydantic import BaseModel, Field

from lit3r.llm.errors import LLMCallError
from lit3r.llm.trace import TraceRecorder
from lit3r.llm.wrapper import LLM, Breaker
from lit3r.settings.llm import LLMSettings

from fakes.openai_server import (
    OpenAIServer,
    dropped,
    error,
    error_object,
    html_page,
    malformed,
    no_choices,
    reply,
    slow,
    tool_call,
)


class Verdict(BaseModel):
    """Whether the evidence answers the question."""

    sufficient: bool = Field(description="True when the evidence answers the question.")
    missing: str = Field(default="", description="What is still missing.")


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    """A scripted OpenAI-compatible server on an ephemeral loopback port, reached without any proxy."""
    for variable in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(variable, "127.0.0.1,localhost")
    with OpenAIServer() as running:
        yield running


def http_llm(server: OpenAIServer, **overrides) -> tuple[LLM, TraceRecorder]:
    """An LLM pointed at ``server`` with small timeouts and back-off."""
    values = {
        "provider": "openai",
        "base_url": server.base_url,
        "api_key": "sk-test",
        "model": "fake-model",
        "timeout_s": 2.0,
        "max_attempts": 3,
        "retry_initial_s": 0.01,
        "retry_max_s": 0.05,
        "max_tokens": 64,
    }
    recorder = TraceRecorder()
    return LLM.from_settings(LLMSettings(**(values | overrides)), recorder=recorder), recorder


def test_a_scripted_reply_is_parsed_and_the_request_is_well_formed(server):
    server.add(reply("BM25 and dense retrieval tie.", usage=(21, 7)))
    llm, recorder = http_llm(server)
    assert llm.invoke("Which retriever wins?", name="chat").content == "BM25 and dense retrieval tie."
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions" and request["headers"]["authorization"] == "Bearer sk-test"
    body = request["body"]
    assert body["model"] == "fake-model" and body["temperature"] == 0 and not body.get("stream")
    assert body["messages"] == [{"role": "user", "content": "Which retriever wins?"}]
    assert 64 in (body.get("max_tokens"), body.get("max_completion_tokens"))
    event = recorder.calls()[0]
    assert (event["prompt_tokens"], event["completion_tokens"], event["attempts"]) == (21, 7, 1)


def test_429_with_retry_after_is_retried_after_the_asked_delay(server):
    server.add(error(429, "rate limited", retry_after=0.3), reply("ok"))
    llm, recorder = http_llm(server)
    started = time.perf_counter()
    assert llm.invoke("q", name="n").content == "ok"
    assert time.perf_counter() - started >= 0.3
    assert recorder.calls()[0]["attempts"] == 2 and len(server.requests) == 2


def test_500_twice_then_success(server):
    server.add(error(500), error(503), reply("ok"))
    llm, recorder = http_llm(server)
    assert llm.invoke("q", name="n").content == "ok"
    assert recorder.calls()[0]["attempts"] == 3 and len(server.requests) == 3


def test_the_client_does_not_retry_on_its_own(server):
    server.add(error(500), reply("never reached"))
    llm, _ = http_llm(server, max_attempts=1)
    with pytest.raises(LLMCallError, match="HTTP 500") as caught:
        llm.invoke("q", name="n")
    assert caught.value.retryable and caught.value.attempts == 1 and len(server.requests) == 1


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_retried(server, status):
    server.add(error(status, "you did something wrong"), reply("never reached"))
    llm, recorder = http_llm(server)
    with pytest.raises(LLMCallError, match=f"HTTP {status}: you did something wrong") as caught:
        llm.invoke("q", name="n")
    assert not caught.value.retryable and caught.value.status_code == status and caught.value.attempts == 1
    assert len(server.requests) == 1 and recorder.calls()[0]["retryable"] is False


def test_a_malformed_body_is_a_clear_non_retryable_error(server):
    server.add(malformed(), reply("never reached"))
    llm, recorder = http_llm(server)
    with pytest.raises(LLMCallError, match="not valid JSON.*base_url") as caught:
        llm.invoke("q", name="n")
    assert not caught.value.retryable and len(server.requests) == 1
    assert "not valid JSON" in recorder.calls()[0]["error"]


def test_slow_answers_time_out_and_give_up_as_retryable(server):
    server.add(slow(5.0), slow(5.0), slow(5.0))
    llm, recorder = http_llm(server, timeout_s=0.3, max_attempts=2)
    started = time.perf_counter()
    with pytest.raises(LLMCallError, match="timed out") as caught:
        llm.invoke("q", name="n")
    elapsed = time.perf_counter() - started
    assert caught.value.retryable and caught.value.attempts == 2 and len(server.requests) == 2
    assert 0.6 <= elapsed < 3.0 and recorder.calls()[0]["attempts"] == 2


def test_structured_output_by_json_schema_with_a_repair(server):
    server.add(reply('{"sufficient": "unsure"}'), reply('{"sufficient": false, "missing": "Table 2"}'))
    llm, recorder = http_llm(server)
    assert llm.structured_method == "json_schema"
    assert llm.structured("Enough?", Verdict, name="verify") == Verdict(sufficient=False, missing="Table 2")
    first, second = (r["body"] for r in server.requests)
    assert first["response_format"]["type"] == "json_schema"
    assert first["response_format"]["json_schema"]["name"] == "Verdict"
    assert '{"sufficient": "unsure"}' in second["messages"][-1]["content"]
    assert [e["name"] for e in recorder.calls()] == ["verify", "verify.repair"]


def test_structured_output_by_function_calling(server):
    server.add(tool_call("Verdict", {"sufficient": True}))
    llm, recorder = http_llm(server, structured_output="function_calling")
    assert llm.structured("Enough?", Verdict, name="verify") == Verdict(sufficient=True)
    body = server.requests[0]["body"]
    assert body["tools"][0]["function"]["name"] == "Verdict"
    assert body["tool_choice"] == {"type": "function", "function": {"name": "Verdict"}}
    assert recorder.calls()[0]["tool_calls"][0]["args"] == {"sufficient": True}


def test_azure_requests_go_to_the_deployment_with_an_api_key_header(server):
    server.add(reply("hello from azure"))
    llm, _ = http_llm(
        server, provider="azure", base_url=server.endpoint, azure_deployment="dep-1", api_version="2024-10-21"
    )
    assert llm.invoke("hi", name="n").content == "hello from azure"
    request = server.requests[0]
    assert request["path"] == "/openai/deployments/dep-1/chat/completions?api-version=2024-10-21"
    assert request["headers"]["api-key"] == "sk-test"


@pytest.mark.parametrize(
    ("scripted", "message"),
    [
        (html_page(), "answered with text/html; charset=utf-8 ('<!DOCTYPE html>"),
        (no_choices([]), "reply has no choices"),
        (no_choices(None), "reply has no choices"),
        (error_object(), "answered with an error object: {'message': 'model overloaded'"),
    ],
)
def test_a_200_that_is_not_the_api_is_a_clear_llm_error_not_a_crash(server, scripted, message):
    server.add(scripted, reply("never reached"))
    llm, recorder = http_llm(server)
    with pytest.raises(LLMCallError, match="after 1 attempt") as raised:
        llm.invoke("q", name="chat")
    assert message in str(raised.value) and not raised.value.retryable
    assert len(server.requests) == 1 and message in recorder.calls()[0]["error"]


def test_a_dropped_connection_is_retried_then_trips_the_breaker_for_the_question(server):
    server.add(dropped(), dropped(), dropped(), reply("never reached"))
    llm, recorder = http_llm(server)
    llm.breaker = Breaker()
    started = time.monotonic()
    with pytest.raises(LLMCallError, match="cannot connect|Connection") as first:
        llm.invoke("q", name="decompose")
    assert first.value.attempts == 3 and first.value.retryable
    with pytest.raises(LLMCallError, match="not sent: the endpoint failed earlier in this question") as second:
        llm.invoke("q", name="verify")
    assert second.value.attempts == 0 and len(server.requests) == 3  # the second call never left the process
    assert time.monotonic() - started < 5 and recorder.calls()[1]["attempts"] == 0
