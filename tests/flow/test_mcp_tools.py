"""The MCP server in process (the SDK's own client over the in-memory index): tool schemas, a cited answer with
progress, the search/fetch pair, lookups, resources, errors that leave the server working, heartbeats."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from lit3r.app.session import Session
from lit3r.mcp import build_server
from lit3r.mcp.schemas import chunk_uri

from fakes.corpus import QUESTION
from fakes.index import MemoryIndex

TOOLS = {"ask", "search", "fetch", "get_chunk", "list_papers", "get_paper", "corpus_status", "get_trace", "check_claim"}


@pytest.fixture
def session(memory_index: MemoryIndex):
    settings = memory_index.settings.model_copy(update={"reranker": "lexical"})
    with Session(settings, index=memory_index) as opened:
        yield opened


def run(session: Session, body, **server: Any) -> Any:
    """Run ``body(client)`` against a server over ``session``; returns what it returns."""

    async def main() -> Any:
        async with Client(build_server(session, **server)) as client:
            return await body(client)

    return anyio.run(main)


def test_every_tool_has_described_typed_inputs_and_an_output_schema(session) -> None:
    async def body(client):
        return (await client.list_tools()).tools

    tools = {t.name: t for t in run(session, body)}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and tool.output_schema and tool.annotations.read_only_hint
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), (tool.name, name)
    ask = tools["ask"]
    assert ask.input_schema["required"] == ["question"] and "ctx" not in ask.input_schema["properties"]
    assert {"answer", "citations", "candidate_papers", "trace_id", "sufficient"} <= set(ask.output_schema["properties"])
    assert tools["search"].input_schema["properties"]["mode"]["enum"] == ["bm25", "dense", "hybrid"]
    assert tools["fetch"].input_schema["required"] == ["id"]  # the search/fetch pair: one string argument each


def test_ask_answers_with_citations_whose_quotes_stand_in_their_chunks_and_reports_progress(session) -> None:
    progress: list[tuple[float, str]] = []

    async def on_progress(value: float, _total: float | None, message: str | None) -> None:
        progress.append((value, message or ""))

    async def body(client):
        answer = await client.call_tool("ask", {"question": QUESTION}, progress_callback=on_progress)
        chunks = [
            await client.call_tool("get_chunk", {"chunk_id": c["chunk_id"]})
            for c in answer.structured_content["citations"]
        ]
        trace = await client.call_tool("get_trace", {"trace_id": answer.structured_content["trace_id"]})
        return answer, chunks, trace

    answer, chunks, trace = run(session, body)
    result = answer.structured_content
    assert not answer.is_error and result["sufficient"] and result["citations"]
    for citation, chunk in zip(result["citations"], chunks, strict=True):
        text = chunk.structured_content["text"]
        assert " ".join(citation["quote"].split()) in " ".join(text.split())
        assert (
            citation["locator"] == chunk.structured_content["locator"] and f"[{citation['number']}]" in result["answer"]
        )
        assert citation["paper_title"] == session.index.papers[citation["paper_id"]].title
    assert result["candidate_papers"][0] == "sparse"
    assert len(progress) >= 5 and [v for v, _m in progress] == sorted(v for v, _m in progress)
    assert any("search_chunks" in m for _v, m in progress) and any("synthesize_answer" in m for _v, m in progress)
    assert "search_chunks" in trace.structured_content["timeline"] and trace.structured_content["events"] is None


def test_a_long_step_still_sends_heartbeats(session, monkeypatch: pytest.MonkeyPatch) -> None:
    original = session.reply

    def slow_reply(*args, **kwargs):
        time.sleep(1.2)  # a model call that takes a while, before any step completes
        return original(*args, **kwargs)

    monkeypatch.setattr(session, "reply", slow_reply)
    messages: list[str] = []

    async def on_progress(_value, _total, message) -> None:
        messages.append(message)

    async def body(client):
        return await client.call_tool("ask", {"question": QUESTION}, progress_callback=on_progress)

    assert not run(session, body, heartbeat_s=0.3).is_error
    assert (
        sum(m.startswith("working (") for m in messages) >= 2
        and messages.index(next(m for m in messages if not m.startswith("working"))) >= 2
    )


def test_search_and_fetch_follow_the_pair_shape_and_carry_locators(session) -> None:
    async def body(client):
        found = await client.call_tool("search", {"query": "okapi lexical saturation", "k": 3})
        first = found.structured_content["results"][0]
        chunk = await client.call_tool("fetch", {"id": first["id"]})
        paper = await client.call_tool("fetch", {"id": first["paper_id"]})
        return found, chunk, paper

    found, chunk, paper = run(session, body)
    results = found.structured_content["results"]
    assert len(results) == 3 and results[0]["paper_id"] == "sparse"
    assert {"id", "title", "url", "text", "locator", "paper_id"} <= set(results[0])
    assert results[0]["url"] == chunk_uri(results[0]["id"]) and '"results"' in found.content[0].text
    assert set(chunk.structured_content) == {"id", "title", "text", "url", "metadata"}
    assert chunk.structured_content["text"] == session.index.chunk_by_id[results[0]["id"]].text
    assert paper.structured_content["title"] == session.index.papers["sparse"].title
    assert all(c.text in paper.structured_content["text"] for c in session.index.chunks_by_paper["sparse"])


def test_papers_status_and_resources(session) -> None:
    async def body(client):
        listed = await client.call_tool("list_papers", {"contains": "retrieval", "limit": 2})
        paper = await client.call_tool("get_paper", {"paper_id": "fusion"})
        status = await client.call_tool("corpus_status", {})
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        chunk = await client.read_resource(chunk_uri("sparse::c0000"))
        whole = await client.read_resource("lit3r://papers/sparse")
        return listed, paper, status, resources, templates, chunk, whole

    listed, paper, status, resources, templates, chunk, whole = run(session, body)
    assert listed.structured_content["total"] == 3 and len(listed.structured_content["papers"]) == 2
    view = paper.structured_content
    assert [r["corpus_paper_id"] for r in view["references"]] == ["sparse", "dense", "rerank"]
    assert sum(len(s["chunk_ids"]) for s in view["sections"]) == len(session.index.chunks_by_paper["fusion"])
    assert status.structured_content["papers"] == 8 and status.structured_content["reranker"] == "lexical"
    assert [str(r.uri) for r in resources] == ["lit3r://papers"]
    assert {t.uri_template for t in templates} == {"lit3r://papers/{paper_id}", "lit3r://chunks/{chunk_id}"}
    assert session.index.chunk_by_id["sparse::c0000"].text in chunk.contents[0].text
    assert whole.contents[0].text.startswith("# Okapi BM25") and whole.contents[0].mime_type == "text/markdown"


def test_bad_arguments_are_mcp_errors_and_the_server_keeps_answering(session) -> None:
    calls = [
        ("ask", {"question": ""}, "at least 1 character"),
        ("ask", {}, "question"),
        ("ask", {"question": QUESTION, "papers": ["nope"]}, "unknown paper id(s): nope"),
        ("ask", {"question": QUESTION, "thread_id": "../x"}, "thread_id"),
        ("search", {"query": 5}, "valid string"),
        ("search", {"query": "x", "k": 0}, "greater than or equal to 1"),
        ("search", {"query": "x", "mode": "fuzzy"}, "mode"),
        ("get_chunk", {"chunk_id": "nope"}, "no chunk 'nope'"),
        ("get_paper", {"paper_id": "nope"}, "no paper 'nope'"),
        ("fetch", {"id": "nope"}, "no chunk or paper 'nope'"),
        ("get_trace", {"trace_id": "../../etc/passwd"}, "is not a trace id"),
        ("get_trace", {"trace_id": "20250101T000000-deadbeef"}, "no trace"),
        ("no_such_tool", {}, "Unknown tool"),
    ]

    async def body(client):
        results = [await client.call_tool(name, args) for name, args, _ in calls]
        try:
            await client.read_resource("lit3r://chunks/nope")
        except MCPError as exc:
            resource_error = exc
        after = await client.call_tool("search", {"query": "okapi"})
        return results, resource_error, after

    results, resource_error, after = run(session, body)
    for (name, _args, expected), result in zip(calls, results, strict=True):
        assert result.is_error and expected in result.content[0].text, (name, result.content[0].text)
    assert "no chunk 'nope'" in str(resource_error)
    assert not after.is_error and after.structured_content["results"]


SNAPSHOT = Path(__file__).parent / "snapshots" / "mcp_tools.json"


def test_the_tool_schemas_hosts_see_match_the_snapshot(session) -> None:
    """The tools' names, descriptions and input and output schemas are a contract with hosts: changing them is
    deliberate (LIT3R_UPDATE_SNAPSHOTS=1 rewrites the snapshot)."""

    async def body(client):
        return (await client.list_tools()).tools

    schema = [
        {"name": t.name, "description": t.description, "input": t.input_schema, "output": t.output_schema}
        for t in run(session, body)
    ]
    if os.environ.get("LIT3R_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    assert schema == json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def test_every_trace_event_reaches_the_client_as_progress_before_the_result(session, monkeypatch) -> None:
    """A fast ask: each of the trace's events is one progress notification, all of them before the tool result,
    call after call, also over a transport slow to take them (a reporter cancelled when the run ended used to
    drop the events it was still sending: 0, 2 or 5 of 19 arrived)."""
    from lit3r.mcp import server as mcp_server

    send = mcp_server._Progress._send
    delays = iter([0.0, 0.1, 0.0, 0.05])
    delay = 0.0

    async def slow_send(self, message: str) -> None:
        if delay:
            await anyio.sleep(delay)
        await send(self, message)

    monkeypatch.setattr(mcp_server._Progress, "_send", slow_send)
    take = mcp_server._Progress.__call__

    def spread(self, event) -> None:  # the run's thread: events spread over several of the reporter's polls
        take(self, event)
        if delay:
            time.sleep(delay / 2)

    monkeypatch.setattr(mcp_server._Progress, "__call__", spread)

    async def body(client):
        nonlocal delay
        counts = []
        for delay in delays:  # noqa: B007 (slow_send reads it: nonlocal)
            steps: list[str] = []

            async def on_progress(_value, _total, message, steps=steps) -> None:
                steps.append(message or "")

            answer = await client.call_tool("ask", {"question": QUESTION}, progress_callback=on_progress)
            received = [m for m in steps if not m.startswith("working (")]
            trace_id = answer.structured_content["trace_id"]
            trace = await client.call_tool("get_trace", {"trace_id": trace_id, "events": True})
            counts.append((len(received), len(trace.structured_content["events"])))
        return counts

    counts = run(session, body)
    assert all(sent == events and events >= 5 for sent, events in counts), counts


def test_ask_refuses_an_unknown_thread_and_starts_one_only_when_asked(session) -> None:
    """An unknown thread_id is a tool error naming it (the HTTP API's 404 unknown_thread); new_thread starts one,
    whose id then continues; new_thread with an id that already has turns is refused."""

    async def body(client):
        unknown = await client.call_tool("ask", {"question": QUESTION, "thread_id": "no-such-thread"})
        started = await client.call_tool("ask", {"question": QUESTION, "new_thread": True})
        thread_id = started.structured_content["thread_id"]
        again = await client.call_tool("ask", {"question": "and the baseline?", "thread_id": thread_id})
        named = await client.call_tool("ask", {"question": QUESTION, "thread_id": "mine-1", "new_thread": True})
        twice = await client.call_tool("ask", {"question": QUESTION, "thread_id": "mine-1", "new_thread": True})
        return unknown, started, again, named, twice

    unknown, started, again, named, twice = run(session, body)
    assert unknown.is_error and "no thread 'no-such-thread'" in unknown.content[0].text
    assert not session.has_thread("no-such-thread")
    assert not started.is_error and started.structured_content["thread_id"] and started.structured_content["turn"] == 0
    assert not again.is_error and again.structured_content["turn"] == 1
    assert not named.is_error and named.structured_content["thread_id"] == "mine-1"
    assert twice.is_error and "thread 'mine-1' already exists" in twice.content[0].text


def test_ask_with_a_format_returns_the_answer_with_its_references(session) -> None:
    """`format` gives the answer with references (markdown) or its bibliography (bibtex) as `export`, listing
    exactly the cited papers, as /v1/ask's parameter does."""
    import bibtexparser

    async def body(client):
        plain = await client.call_tool("ask", {"question": QUESTION})
        bib = await client.call_tool("ask", {"question": QUESTION, "format": "bibtex"})
        markdown = await client.call_tool("ask", {"question": QUESTION, "format": "markdown"})
        return plain.structured_content, bib.structured_content, markdown.structured_content

    plain, bib, markdown = run(session, body)
    assert plain.get("export") is None
    cited = {c["paper_id"] for c in bib["citations"]}
    assert cited, bib
    entries = bibtexparser.parse_string(bib["export"]).entries
    assert len(entries) == len(cited)
    assert "## References" in markdown["export"] and "[1]" not in markdown["export"].split("## References")[0]
