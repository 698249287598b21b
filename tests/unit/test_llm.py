"""LLM wrapper, settings, factory and budget, against scripted fake chat models (no network)."""

from __future__ import annotations

import json
import logging
from datetime import datetime
from types import SimpleNamespace
from typing import Annotated, TypedDict

import pytest
from langchain_core.exceptions import ModelAPIError, ModelAuthenticationError, ModelRateLimitError
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool
from langchain_openai import AzureChatOpenAI, ChatOpenAI
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import BaseModel, Field, ValidationError
from tenacity import RetryCallState

from lit3r.llm.budget import Budget, Exhaustion
from lit3r.llm.client import PLACEHOLDER_KEY, make_chat_model
from lit3r.llm.errors import LLMCallError, LLMConfigError, LLMOutputError, retry_after_s
from lit3r.llm.structured import REPAIR_PROMPT, json_text
from lit3r.llm.trace import TraceRecorder
from lit3r.llm.wrapper import LLM, retry_wait
from lit3r.settings.llm import LLMSettings

from fakes.chat import FakeToolCallingModel, ScriptExhausted, tool_call


class Verdict(BaseModel):
    """Whether the evidence answers the question."""

    sufficient: bool = Field(description="True when the evidence answers the question.")
    missing: str = Field(default="", description="What is still missing.")


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make_llm(script: list, **settings) -> tuple[LLM, FakeToolCallingModel, TraceRecorder, list[float]]:
    """An LLM over a scripted fake, with a recorder and a sleep that only notes its argument."""
    model = FakeToolCallingModel(script=script)
    recorder, sleeps = TraceRecorder(), []
    base = {"retry_initial_s": 0.5, "retry_max_s": 4.0} | settings
    return LLM(model, LLMSettings(**base), recorder=recorder, sleep=sleeps.append), model, recorder, sleeps


# ---------------------------------------------------------------- settings and factory


def test_settings_describe_every_field_and_read_the_key_from_the_environment(monkeypatch):
    assert all(field.description for field in LLMSettings.model_fields.values())
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert LLMSettings().api_key.get_secret_value() == "sk-env"
    assert LLMSettings(api_key="sk-explicit").api_key.get_secret_value() == "sk-explicit"
    monkeypatch.delenv("OPENAI_API_KEY")
    settings = LLMSettings()
    assert settings.api_key is None and not settings.enabled and settings.temperature == 0
    assert LLMSettings(cost_per_1k_prompt=0.5, cost_per_1k_completion=2).cost(2000, 500) == pytest.approx(2.0)
    with pytest.raises(ValidationError):
        LLMSettings(max_retries=3)  # the field is max_attempts: unknown names are refused


def test_make_chat_model_builds_openai_models_with_their_own_retries_off(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMConfigError, match="provider='none'"):
        make_chat_model(LLMSettings())
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        make_chat_model(LLMSettings(provider="openai"))
    settings = LLMSettings(provider="openai", base_url="http://127.0.0.1:9/v1", model="m", timeout_s=7, max_tokens=99)
    model = make_chat_model(settings)
    assert isinstance(model, ChatOpenAI) and model.max_retries == 0 and model.request_timeout == 7
    assert model.openai_api_key.get_secret_value() == PLACEHOLDER_KEY and model.temperature == 0
    assert model.max_tokens == 99 and model.model_name == "m"
    assert LLM(model).structured_method == "json_schema"


def test_make_chat_model_builds_azure_models(monkeypatch):
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMConfigError, match="azure_deployment"):
        make_chat_model(LLMSettings(provider="azure", base_url="https://x.openai.azure.com/"))
    settings = LLMSettings(
        provider="azure", base_url="https://x.openai.azure.com/", azure_deployment="dep", api_key="k", api_version="v1"
    )
    model = make_chat_model(settings)
    assert isinstance(model, AzureChatOpenAI) and model.max_retries == 0
    assert model.deployment_name == "dep" and model.openai_api_version == "v1"
    assert LLM(model, settings).model_name == "dep"


# ---------------------------------------------------------------- plain calls and records


def test_invoke_returns_the_reply_and_records_tokens_cost_and_prompt():
    llm, model, recorder, _ = make_llm(["Dense retrieval wins."], cost_per_1k_prompt=1.0, cost_per_1k_completion=2.0)
    reply = llm.invoke([SystemMessage("Be brief."), HumanMessage("Which retriever wins?")], name="chat")
    assert reply.content == "Dense retrieval wins."
    (event,) = recorder.calls()
    assert event["name"] == "chat" and event["model"] == "fake-tool-calling"
    assert event["prompt"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Which retriever wins?"},
    ]
    assert event["output"] == "Dense retrieval wins." and event["error"] is None and event["attempts"] == 1
    assert (event["prompt_tokens"], event["completion_tokens"]) == (5, 3)  # words, as the fake counts them
    assert event["cost"] == pytest.approx((5 * 1.0 + 3 * 2.0) / 1000)
    assert datetime.fromisoformat(event["started_at"]).tzinfo is not None and event["duration_ms"] >= 0
    json.dumps(event)  # plain data, ready for a trace file


def test_a_call_lands_in_the_run_trace_as_an_llm_event_of_the_current_round():
    recorder = TraceRecorder()
    recorder.round = 2
    LLM(FakeToolCallingModel(script=["ok"]), recorder=recorder).invoke("a bare string prompt", name="n")
    (event,) = recorder.events
    assert (event.type, event.name, event.round) == ("llm", "n", 2)
    assert event.data["prompt"] == [{"role": "user", "content": "a bare string prompt"}] and "kind" not in event.data


def test_transient_errors_are_retried_with_backoff_and_logged(caplog):
    llm, _, recorder, sleeps = make_llm([ModelRateLimitError("slow down"), ModelAPIError("boom"), "fine"])
    with caplog.at_level(logging.WARNING, logger="lit3r.llm.wrapper"):
        assert llm.invoke("q", name="flaky").content == "fine"
    assert recorder.calls()[0]["attempts"] == 3 and recorder.calls()[0]["error"] is None
    assert len(sleeps) == 2 and 0.5 <= sleeps[0] <= 1.0 and 1.0 <= sleeps[1] <= 1.5  # 0.5 * 2**n + jitter
    assert "'flaky' attempt 1 failed" in caplog.text and "retrying in" in caplog.text


def test_transient_errors_give_up_after_max_attempts_as_retryable():
    llm, model, recorder, sleeps = make_llm([ModelRateLimitError("slow")] * 5, max_attempts=3)
    with pytest.raises(LLMCallError, match="after 3 attempts") as caught:
        llm.invoke("q", name="n")
    assert caught.value.retryable and caught.value.attempts == 3 and len(model.calls) == 3 and len(sleeps) == 2
    assert recorder.calls()[0]["retryable"] is True and "slow" in recorder.calls()[0]["error"]


def test_non_transient_errors_raise_at_once():
    llm, model, recorder, sleeps = make_llm([ModelAuthenticationError("bad key"), "never"])
    with pytest.raises(LLMCallError) as caught:
        llm.invoke("q", name="n")
    assert not caught.value.retryable and caught.value.attempts == 1 and len(model.calls) == 1 and not sleeps
    assert recorder.calls()[0]["retryable"] is False


def test_programming_errors_pass_through_unchanged_but_are_recorded():
    llm, _, recorder, _ = make_llm([KeyError("bug")])
    with pytest.raises(KeyError):
        llm.invoke("q", name="n")
    assert recorder.calls()[0]["error"] == "KeyError: 'bug'" and recorder.calls()[0]["attempts"] == 1


def test_retry_after_is_honoured_when_small_and_ignored_when_large():
    settings = LLMSettings(retry_initial_s=0.5, retry_max_s=4, retry_after_cap_s=10)
    wait = retry_wait(settings)

    def state_after(headers: dict[str, str]) -> RetryCallState:
        error = ModelRateLimitError("429")
        error.response = SimpleNamespace(headers=headers)
        outcome = SimpleNamespace(exception=lambda: error)
        return SimpleNamespace(outcome=outcome, attempt_number=1)

    assert wait(state_after({"retry-after": "3"})) == 3.0
    assert wait(state_after({"retry-after-ms": "250"})) == 0.25
    assert 0.5 <= wait(state_after({"retry-after": "60"})) <= 1.0  # too long: normal back-off
    assert retry_after_s(ValueError()) is None
    assert retry_after_s(SimpleNamespace(response=SimpleNamespace(headers={"retry-after": "Wed, 21 Oct"}))) is None


# ---------------------------------------------------------------- structured output


def test_structured_output_by_function_calling():
    llm, model, recorder, _ = make_llm([tool_call("Verdict", sufficient=True, missing="")])
    assert llm.structured("Enough?", Verdict, name="verify") == Verdict(sufficient=True)
    kwargs = model.calls[0]["kwargs"]
    assert kwargs["tool_choice"] == "Verdict" and kwargs["tools"][0]["function"]["name"] == "Verdict"
    assert recorder.calls()[0]["schema"] == "Verdict" and recorder.calls()[0]["tool_calls"][0]["args"]["sufficient"]


def test_structured_output_by_json_schema_accepts_fenced_json():
    fenced = '```json\n{"sufficient": false, "missing": "a table"}\n```'
    llm, model, _, _ = make_llm([fenced], structured_output="json_schema")
    assert llm.structured("Enough?", Verdict, name="verify") == Verdict(sufficient=False, missing="a table")
    response_format = model.calls[0]["kwargs"]["response_format"]
    assert response_format["type"] == "json_schema" and response_format["json_schema"]["name"] == "Verdict"
    assert "sufficient" in response_format["json_schema"]["schema"]["properties"]


def test_json_mode_puts_the_schema_into_the_system_message():
    llm, model, _, _ = make_llm(['{"sufficient": true}'], structured_output="json_mode")
    llm.structured([SystemMessage("You verify evidence."), HumanMessage("Enough?")], Verdict, name="verify")
    sent = model.calls[0]["messages"]
    assert len(sent) == 2 and sent[0].content.startswith("You verify evidence.") and '"sufficient"' in sent[0].content
    assert model.calls[0]["kwargs"]["response_format"] == {"type": "json_object"}


def test_invalid_structured_output_gets_one_repair_showing_output_and_error():
    llm, model, recorder, _ = make_llm(['{"sufficient": "perhaps"}', tool_call("Verdict", sufficient=True)])
    assert llm.structured("Enough?", Verdict, name="verify").sufficient is True
    repair = model.calls[1]["messages"][-1].content
    assert '{"sufficient": "perhaps"}' in repair and "sufficient: Input should be a valid boolean" in repair
    assert repair.startswith(REPAIR_PROMPT.split("{")[0])
    assert [e["name"] for e in recorder.calls()] == ["verify", "verify.repair"]
    assert recorder.calls()[0]["parse_error"] and recorder.calls()[1]["parse_error"] is None


def test_structured_output_invalid_twice_raises_llm_output_error():
    refusal = AIMessage(content="", additional_kwargs={"refusal": "I cannot help with that."})
    llm, model, recorder, _ = make_llm(["not json at all", refusal])
    with pytest.raises(LLMOutputError, match="not a valid Verdict after one repair") as caught:
        llm.structured("Enough?", Verdict, name="verify")
    assert caught.value.outputs[0] == "not json at all" and "refused" in caught.value.errors[1]
    assert len(model.calls) == 2 and model.remaining == 0 and len(recorder.calls()) == 2


def test_json_text_strips_fences_and_prose():
    assert json_text('Here you go: {"a": 1} hope it helps') == '{"a": 1}'
    assert json_text("```\n[1, 2]\n```") == "[1, 2]"
    with pytest.raises(ValueError, match="empty"):
        json_text("   ")


# ---------------------------------------------------------------- budget


def test_budget_runs_out_of_tokens_through_llm_calls():
    budget = Budget(max_tokens=12)
    model = FakeToolCallingModel(script=["one two three", "four five six"])
    llm = LLM(model, budget=budget)
    llm.invoke("a b c", name="first")  # 3 + 3 words
    assert budget.exhausted is None and budget.tokens == 6 and budget.remaining_tokens == 6
    llm.invoke("d e f", name="second")
    assert budget.exhausted == Exhaustion("tokens", "tokens: 12 of 12 used")
    assert budget.calls == 2 and budget.remaining_tokens == 0


def test_budget_runs_out_of_time_and_money_with_a_typed_reason():
    clock = FakeClock()
    budget = Budget.for_question(LLMSettings(token_budget=None, cost_budget=1.0), max_seconds=30, clock=clock)
    clock.now += 29.9
    assert budget.exhausted is None and budget.elapsed_s == pytest.approx(29.9)
    clock.now += 0.2
    assert budget.exhausted.kind == "time" and budget.exhausted.detail.startswith("time: 30.1 s of 30 s")
    money = Budget(max_cost=0.5)
    money.charge(10, 0.6)
    assert money.exhausted.kind == "cost" and money.snapshot()["exhausted"].startswith("cost:")
    assert Budget().exhausted is None and "rounds" not in Budget().snapshot()["limits"]  # rounds are not a budget


# ---------------------------------------------------------------- the fake itself, driving a LangGraph loop


def test_fake_model_refuses_unbound_tools_and_an_exhausted_script():
    model = FakeToolCallingModel(script=[tool_call("search_chunks", query="x"), "done"])
    with pytest.raises(ValueError, match="not among the bound tools"):
        model.bind_tools([Verdict]).invoke("q")
    assert model.invoke("q").content == "done"
    with pytest.raises(ScriptExhausted):
        model.invoke("q")


@tool
def search_chunks(query: str) -> str:
    """Search the chunk index."""
    return f"3 chunks for {query}"


class GraphState(TypedDict):
    messages: Annotated[list, add_messages]


def test_fake_model_drives_a_tool_calling_graph():
    model = FakeToolCallingModel(script=[tool_call("search_chunks", query="bm25"), "BM25 wins [c1]."])
    bound = model.bind_tools([search_chunks])
    graph = StateGraph(GraphState)
    graph.add_node("planner", lambda state: {"messages": [bound.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode([search_chunks]))
    graph.add_edge(START, "planner")
    graph.add_conditional_edges("planner", tools_condition)
    graph.add_edge("tools", "planner")
    result = graph.compile().invoke({"messages": [HumanMessage("Which sparse method?")]})
    assert [m.type for m in result["messages"]] == ["human", "ai", "tool", "ai"]
    assert result["messages"][2].content == "3 chunks for bm25" and result["messages"][-1].content == "BM25 wins [c1]."
    assert model.calls[1]["messages"][-1].tool_call_id == "call_1_0"
