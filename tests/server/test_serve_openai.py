"""``/v1/chat/completions`` and ``/v1/models`` of the real server, called by the official ``openai`` client and by
LangChain's ``ChatOpenAI``, plain and streaming; earlier turns of a conversation continue its thread."""

from __future__ import annotations

import re

import httpx
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_openai import ChatOpenAI
from openai import NotFoundError, OpenAI

from lit3r.textutil import fold_space

QUESTION = "How many questions does LocatorQA contain?"
FOLLOW_UP = "How many are unanswerable?"


@pytest.fixture
def openai_client(server) -> OpenAI:
    return OpenAI(base_url=f"{server.base_url}/v1", api_key="not-needed-on-loopback", timeout=60, max_retries=0)


def check_reply(content: str, citations: list[dict], client: httpx.Client) -> None:
    """The content has [n] markers, a Sources block naming each citation, and the citations resolve."""
    text, _, sources = content.partition("\n\nSources:\n")
    assert re.search(r"\[\d+\]", text) and sources
    assert {int(n) for n in re.findall(r"\[(\d+)\]", text)} == {c["number"] for c in citations}
    lines = sources.splitlines()
    assert len(lines) == len(citations)
    for line, citation in zip(lines, citations, strict=True):
        assert line.startswith(f"[{citation['number']}] ") and f"({citation['paper_id']})" in line
        chunk = client.get(f"/v1/chunks/{citation['chunk_id']}").json()
        assert fold_space(citation["quote"]) in fold_space(chunk["text"])


def test_models(openai_client: OpenAI) -> None:
    assert [m.id for m in openai_client.models.list()] == ["lit3r"]


def test_openai_client_plain_and_a_follow_up(openai_client: OpenAI, client: httpx.Client) -> None:
    first = openai_client.chat.completions.create(model="lit3r", messages=[{"role": "user", "content": QUESTION}])
    content = first.choices[0].message.content
    assert first.choices[0].finish_reason == "stop" and first.usage.total_tokens == 0
    extra = first.model_extra
    check_reply(content, extra["citations"], client)
    thread_id = extra["lit3r"]["thread_id"]
    history = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": content},
        {"role": "user", "content": FOLLOW_UP},
    ]
    second = openai_client.chat.completions.create(model="lit3r", messages=history)
    lit3r = second.model_extra["lit3r"]
    assert lit3r["thread_id"] == thread_id, "the conversation continues its thread"
    assert lit3r["question"] != FOLLOW_UP and "LocatorQA" in lit3r["question"]
    turns = client.get(f"/v1/threads/{thread_id}").json()["history"]
    assert [t["message"] for t in turns] == [QUESTION, FOLLOW_UP]


def test_openai_client_streaming(openai_client: OpenAI, client: httpx.Client) -> None:
    stream = openai_client.chat.completions.create(
        model="lit3r",
        messages=[{"role": "user", "content": "Which reranker budget is recommended?"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    finished = [c for c in chunks if c.choices and c.choices[0].finish_reason == "stop"]
    assert len(finished) == 1
    check_reply(content, finished[0].model_extra["citations"], client)
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens == 0


def test_an_unseen_conversation_is_replayed_into_a_thread(openai_client: OpenAI, client: httpx.Client) -> None:
    history = [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": "An answer written elsewhere."},
        {"role": "user", "content": FOLLOW_UP},
    ]
    reply = openai_client.chat.completions.create(model="lit3r", messages=history)
    lit3r = reply.model_extra["lit3r"]
    assert "LocatorQA" in lit3r["question"]
    turns = client.get(f"/v1/threads/{lit3r['thread_id']}").json()["history"]
    assert [t["message"] for t in turns] == [QUESTION, FOLLOW_UP]


def test_chat_openai_plain_and_streaming(server, client: httpx.Client) -> None:
    model = ChatOpenAI(base_url=f"{server.base_url}/v1", api_key="unused", model="lit3r", timeout=60, max_retries=0)
    answer = model.invoke([HumanMessage(QUESTION)])
    assert re.search(r"\[\d+\]", answer.content) and "\n\nSources:\n[1] " in answer.content
    follow = model.invoke([HumanMessage(QUESTION), AIMessage(answer.content), HumanMessage(FOLLOW_UP)])
    assert "Sources:" in follow.content
    streamed = "".join(chunk.content for chunk in model.stream([HumanMessage(QUESTION)]))
    assert streamed.partition("\n\nSources:")[0] == answer.content.partition("\n\nSources:")[0]


def test_openai_errors(openai_client: OpenAI, server) -> None:
    with pytest.raises(NotFoundError, match="no model"):
        openai_client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": QUESTION}])
    bad = httpx.post(
        f"{server.base_url}/v1/chat/completions",
        json={"model": "lit3r", "messages": [{"role": "assistant", "content": "hi"}]},
        timeout=30,
    )
    assert bad.status_code == 422 and "last message" in bad.json()["error"]["message"]
    images = httpx.post(
        f"{server.base_url}/v1/chat/completions",
        json={"model": "lit3r", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
        timeout=30,
    )
    assert images.status_code == 422 and "text parts" in images.json()["error"]["message"]


def test_chat_openai_keeps_the_structured_citations_in_response_metadata(server) -> None:
    """LangChain drops the completion's top-level fields; the answer document rides in the choice's logprobs,
    which ChatOpenAI copies into response_metadata, plain and streaming."""
    model = ChatOpenAI(base_url=f"{server.base_url}/v1", api_key="unused", model="lit3r", timeout=60, max_retries=0)
    answer = model.invoke([HumanMessage(QUESTION)])
    document = answer.response_metadata["logprobs"]["lit3r"]
    citations = document["citations"]
    assert citations and all(f"[{c['number']}]" in answer.content for c in citations)
    assert all(c["quote"] and c["chunk_id"] and c["locator"] for c in citations) and document["trace_id"]
    streamed = None
    for piece in model.stream([HumanMessage(QUESTION)]):
        streamed = piece if streamed is None else streamed + piece
    assert streamed.response_metadata["logprobs"]["lit3r"]["citations"]
