"""The trace: recorder order, timing and listener, LLM call records, the JSON file a session's ``ask`` writes, the
timeline, and the run context a session builds."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from lit3r.app.ask import ask
from lit3r.app.errors import Unavailable
from lit3r.app.session import Session
from lit3r.app.traces import load_trace, render_timeline, summarize, write_trace
from lit3r.graphs.agent import build_graph
from lit3r.llm.trace import TraceRecorder
from lit3r.models import Answer, Fallback, TraceEvent
from lit3r.reading.reader import ModelReader
from lit3r.retrieval.llm_planning import LLMDecomposer, LLMVerifier
from lit3r.retrieval.rerankers.factory import reranker_for_index
from lit3r.tools import TOOL_NAMES

from fakes.agent import assert_grounded, make_context, run_agent
from fakes.chat import FakeToolCallingModel, tool_call
from fakes.corpus import QUESTION
from fakes.index import MemoryIndex

REQUIRED = {"type", "name", "round", "started_at", "duration_ms", "data"}


@pytest.fixture(scope="module")
def index(memory_index: MemoryIndex) -> MemoryIndex:
    return memory_index


def test_recorder_orders_events_by_start_and_times_steps() -> None:
    recorder = TraceRecorder()
    recorder.round = 2
    with recorder.step("tool", "outer") as data:
        data["args"] = {"q": "x"}
        recorder.add("ranking", "inner", {"pool": [["c1", 1.0]]}, round_=3)
    with pytest.raises(ValueError), recorder.step("tool", "broken"):
        raise ValueError("boom")
    assert [(e.name, e.round) for e in recorder.events] == [("outer", 2), ("inner", 3), ("broken", 2)]
    assert recorder.events[0].data == {"args": {"q": "x"}} and recorder.events[0].duration_ms > 0
    assert recorder.events[2].data["error"] == "ValueError: boom"
    starts = [datetime.fromisoformat(e.started_at) for e in recorder.events]
    assert starts == sorted(starts)


def test_the_listener_sees_each_event_once_it_is_complete_and_cannot_break_the_run() -> None:
    seen: list[tuple[str, float]] = []
    recorder = TraceRecorder(on_event=lambda e: seen.append((e.name, e.duration_ms)))
    with recorder.step("tool", "outer"):
        recorder.add("note", "inner")
        assert seen == [("inner", 0.0)]  # the outer step is not complete yet
    recorder.record({"kind": "llm_call", "name": "planner", "duration_ms": 3.0})
    assert [name for name, _ms in seen] == ["inner", "outer", "planner"] and seen[1][1] > 0

    def broken(_event: TraceEvent) -> None:
        raise RuntimeError("the client went away")

    failing = TraceRecorder(on_event=broken)
    failing.add("note", "still recorded")
    assert [e.name for e in failing.events] == ["still recorded"]


def test_recorder_takes_llm_call_records_and_typed_fallbacks() -> None:
    recorder = TraceRecorder()
    recorder.round = 1
    recorder.record(
        {"kind": "llm_call", "name": "planner", "started_at": "2025-01-01T00:00:00.000+00:00", "duration_ms": 12.5}
        | {"prompt": [{"role": "user", "content": "q"}], "output": "", "prompt_tokens": 7, "completion_tokens": 3}
    )
    recorder.fallback(Fallback(stage="decompose", reason="timeout"), subqueries=["q"])
    recorder.fallback(Fallback(stage="decompose", reason="timeout"))  # the same fallback twice counts once
    recorder.fallback(Fallback(stage="read", reason="stage 2 call failed"))
    llm, fell_back = recorder.events[:2]
    assert (llm.type, llm.name, llm.round, llm.duration_ms) == ("llm", "planner", 1, 12.5)
    assert llm.data["prompt_tokens"] == 7 and llm.data["prompt"][0]["content"] == "q"
    assert (fell_back.type, fell_back.name, fell_back.round) == ("fallback", "decompose.fallback", 1)
    assert fell_back.data == {
        "stage": "decompose", "reason": "timeout", "instead": "the question itself was searched", "subqueries": ["q"]
    }  # fmt: skip
    assert summarize(fell_back.model_dump()) == "fell back: timeout; the question itself was searched"
    assert [f.describe() for f in recorder.fallbacks()] == [
        "decompose: timeout; the question itself was searched",
        "read: stage 2 call failed; the extractive reader answered",
    ]
    assert recorder.calls()[0]["name"] == "planner" and recorder.calls()[0]["prompt_tokens"] == 7


def test_ask_writes_a_trace_file_with_every_step_in_order(index) -> None:
    answer = ask(QUESTION, settings=index.settings, index=index, reranker=reranker_for_index("bi-encoder", index))
    assert_grounded(answer, index)
    path = Path(answer.trace_path)
    assert path.parent == index.settings.home / "traces" and path.exists()
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["question"] == QUESTION and doc["stop_reason"] == "sufficient" and doc["planner"] == "fixed"
    assert Answer.model_validate(doc["answer"]) == answer
    events = doc["events"]
    assert all(set(e) == REQUIRED for e in events)
    starts = [datetime.fromisoformat(e["started_at"]) for e in events]
    assert starts == sorted(starts)
    tools = [e["name"] for e in events if e["type"] == "tool"]
    assert tools == ["search_chunks", "search_chunks", "verify_sufficiency"]
    nodes = [e["name"] for e in events if e["type"] == "node"]
    assert nodes[0] == "start_question" and nodes[-3:] == ["expand_neighbors", "synthesize_answer", "finish"]
    assert [e["data"]["decision"] for e in events if e["name"] == "planner"][-1] == "answer"
    kinds = {e["type"] for e in events}
    assert {"node", "decompose", "tool", "ranking", "verdict", "read"} <= kinds
    search = next(e for e in events if e["name"] == "retrieve_subquery")
    assert search["round"] == 1 and search["data"]["pool"] and search["data"]["sweeps"]["original"]["papers"]
    verdict = next(e for e in events if e["type"] == "verdict")
    assert verdict["data"]["verdict"]["sufficient"] is True


def test_llm_calls_are_in_the_trace_with_prompt_output_and_tokens(index) -> None:
    model = FakeToolCallingModel(script=[tool_call("search_chunks", query="okapi saturation"), "done"])
    context = make_context(index, model)
    state = run_agent(context, QUESTION)
    calls = context.recorder.of_type("llm")
    assert [e.name for e in calls] == ["planner", "planner"]
    first = calls[0]
    assert first.data["prompt"][0]["role"] == "system" and first.data["prompt"][1]["content"] == QUESTION
    assert first.data["tool_calls"][0]["args"] == {"query": "okapi saturation"}
    assert first.data["prompt_tokens"] > 0 and first.data["completion_tokens"] > 0
    assert calls[1].round == 1 and calls[1].data["output"] == "done"
    names = [e.name for e in context.recorder.events]
    assert names.index("planner") < names.index("search_chunks")
    assert state["stop_reason"] == "planner_stopped"


def test_timeline_renders_one_line_per_event(index, tmp_path) -> None:
    context = make_context(index)
    state = run_agent(context, QUESTION)
    answer = Answer.model_validate(state["answer"])
    path = write_trace(tmp_path / "t.json", context.recorder.events, answer)
    for source in (path, str(path), path.read_text(encoding="utf-8"), load_trace(path)):
        text = render_timeline(source)
        lines = text.splitlines()
        assert lines[0] == f"question: {QUESTION}" and "citations" in lines[1]
        assert len(lines) == 2 + len(context.recorder.events)
    body = lines[2:]
    assert body[0].startswith("+      0.0 ms")
    assert any(" tool " in line and "search_chunks" in line and "→" in line for line in body)
    assert any(" node " in line and "synthesize_answer" in line for line in body)
    assert any(" verdict " in line and "sufficient=True" in line for line in body)
    assert render_timeline({"question": "q", "events": []}).endswith("(no events)")


def test_trace_json_survives_numpy_values(tmp_path) -> None:
    np = pytest.importorskip("numpy")
    event = TraceEvent(type="ranking", name="x", started_at="2025-01-01T00:00:00+00:00", data={"s": np.float32(0.5)})
    answer = Answer(question="q", text="none", sufficient=False)
    doc = load_trace(write_trace(tmp_path / "n.json", [event], answer))
    assert doc["events"][0]["data"]["s"] == 0.5


def test_ask_without_a_model_refuses_the_llm_planner_and_wires_llm_pieces_with_one(index) -> None:
    with pytest.raises(Unavailable, match="planner 'llm' needs a chat model"):
        ask(QUESTION, settings=index.settings, index=index, reranker=None, planner="llm")
    with Session(index.settings, index=index, reranker=None, chat_model=FakeToolCallingModel(), planner="llm") as s:
        context = s.context()
        other = s.context()
    assert isinstance(context.decomposer, LLMDecomposer) and isinstance(context.tools.verifier, LLMVerifier)
    assert isinstance(context.tools.reader, ModelReader) and context.planner == "llm"
    bound = [t["function"]["name"] for t in context.planner_model.model.kwargs["tools"]]
    assert tuple(bound) == TOOL_NAMES and context.planner_model.budget is context.budget
    assert context.llm.budget is context.budget and context.llm.recorder is context.recorder
    assert other.recorder is not context.recorder and other.budget is not context.budget  # one per run


def test_ask_in_a_thread_keeps_the_conversation_in_threads_sqlite(index) -> None:
    reranker = reranker_for_index("bi-encoder", index)
    first = ask(QUESTION, settings=index.settings, index=index, reranker=reranker, thread_id="t")
    other = "Which paper uses molecule graph message passing?"
    second = ask(other, settings=index.settings, index=index, reranker=reranker, thread_id="t")
    assert first.citations[0].paper_id == "sparse" and second.citations[0].paper_id == "graph"
    assert first.trace_path != second.trace_path
    with SqliteSaver.from_conn_string(str(index.settings.home / "threads.sqlite")) as saver:
        stored = build_graph(saver).get_state({"configurable": {"thread_id": "t"}}).values
    assert [m.text for m in stored["messages"] if m.type == "human"] == [QUESTION, second.question]
    assert stored["answer"]["text"] == second.text and stored["round"] == 1


def test_a_read_step_says_why_the_reader_read_or_did_not() -> None:
    def read(**data) -> dict:
        return {"type": "read", "name": "extractive", "data": {"evidence": ["p::c0001", "p::c0002"], **data}}

    off_topic = read(sufficient=False, gate=True, papers_coverage=0.0912)
    assert summarize(off_topic) == (
        "2 chunks, papers hold 0.09 of the question; not read: the papers read do not hold the question"
    )
    gated = read(sufficient=False, gate=False, papers_coverage=0.8)
    assert summarize(gated).endswith("not read: below the relevance gate")
    answered = read(sufficient=True, gate=True, papers_coverage=1.0, citations=["p::c0001"])
    assert summarize(answered) == "2 chunks, papers hold 1.00 of the question; read, 1 citation"
    closed = read(sufficient=True, gate=True, papers_coverage=0.7, unmentioned=["MFCC"], citations=["p::c0001"])
    assert summarize(closed) == (
        "2 chunks, papers hold 0.70 of the question; answered No: no paper read mentions MFCC, 1 citation"
    )
    unnamed = read(sufficient=False, gate=True, papers_coverage=0.6, unnamed=["AlphaGo"])
    assert summarize(unnamed) == "2 chunks, papers hold 0.60 of the question; not read: no paper read mentions AlphaGo"
