"""lit3r inside a host LangGraph agent: the integration guide's example host agent run as written with a scripted
model (the six tools, then the whole agent as a subgraph), the toolkit's shared pool, the subgraph's narrow
input and output with its custom events, and the LangGraph Platform graph."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, ToolMessage

from lit3r.app.session import Session
from lit3r.app.traces import load_trace
from lit3r.platform import agent_subgraph, corpus_tools
from lit3r.platform.graph import PlatformContext, close_sessions, make_graph, session_for
from lit3r.settings import load_settings

from fakes.agent import assert_grounded
from fakes.chat import FakeToolCallingModel, tool_call
from fakes.corpus import QUESTION
from fakes.demo import DEMO_QUESTION

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "INTEGRATION.md"


def guide_example(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The guide's host-agent code block, executed as a module (its annotations resolve against it)."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    (code,) = [b for b in blocks if "def build_host_agent" in b]
    module = types.ModuleType("integration_guide_example")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, str(GUIDE), "exec"), module.__dict__)  # noqa: S102 (our own documentation)
    return module


@pytest.fixture
def session(memory_index):
    settings = memory_index.settings.model_copy(update={"reranker": "lexical"})
    with Session(settings, index=memory_index) as opened:
        yield opened


def test_the_guides_host_agent_researches_with_the_six_tools_then_runs_the_whole_agent(session, monkeypatch) -> None:
    model = FakeToolCallingModel(
        script=[
            tool_call("search_chunks", query="okapi lexical saturation"),
            [tool_call("verify_sufficiency", question=QUESTION), tool_call("expand_neighbors")],
            tool_call("synthesize_answer", question=QUESTION),
            "The sparse paper studies it; see the citations.",
        ]
    )
    graph, toolkit = guide_example(monkeypatch).build_host_agent(session, model)
    state = graph.invoke({"question": QUESTION, "messages": [HumanMessage(QUESTION)]})
    assert model.remaining == 0
    assert [t.name for t in toolkit.tools] == [
        "search_chunks",
        "rerank",
        "expand_neighbors",
        "read_paper",
        "verify_sufficiency",
        "synthesize_answer",
    ]
    statuses = {m.name: m.text for m in state["messages"] if isinstance(m, ToolMessage)}
    assert "top papers: sparse" in statuses["search_chunks"] and statuses["verify_sufficiency"].startswith("sufficient")
    assert toolkit.answer is not None and toolkit.answer.sufficient
    assert_grounded(toolkit.answer, session.index)
    assert toolkit.answer.text.splitlines()[0] in statuses["synthesize_answer"]
    trace = load_trace(toolkit.answer.trace_path)  # the toolkit's run has its trace, like ask
    assert [e["name"] for e in trace["events"] if e["type"] == "ranking"][0] == "retrieve_subquery"
    # then the subgraph answered into the host's state
    assert state["sufficient"] and state["candidate_papers"][0] == "sparse" and state["trace_id"]
    assert [c["chunk_id"] for c in state["citations"]] and all(
        f"[{c['number']}]" in state["answer"] for c in state["citations"]
    )


def test_the_toolkit_pool_merges_searches_and_stales_the_final_papers(session) -> None:
    toolkit = corpus_tools(session)
    tools = {t.name: t for t in toolkit.tools}
    tools["search_chunks"].invoke({"query": "okapi lexical saturation"})
    first = dict(toolkit.state["pool"])
    tools["expand_neighbors"].invoke({})
    assert toolkit.state["final_papers"] and not toolkit.stale
    tools["search_chunks"].invoke({"query": "okapi inverted index"})
    pool = toolkit.state["pool"]
    assert set(first) <= set(pool) and all(pool[c] >= s for c, s in first.items())
    assert (
        toolkit.stale
        and toolkit.state["round"] == 2
        and toolkit.state["subqueries"]
        == [
            "okapi lexical saturation",
            "okapi inverted index",
        ]
    )
    assert "okapi" in tools["read_paper"].invoke({"paper_id": "sparse"}).lower()
    with pytest.raises(Exception, match="the pool is empty"):
        corpus_tools(session).tools[2].invoke({})


def test_the_subgraph_has_a_narrow_input_and_output_and_streams_trace_steps(session) -> None:
    graph = agent_subgraph(session)
    assert set(graph.get_input_jsonschema()["properties"]) == {"question", "options", "papers"}
    assert set(graph.get_output_jsonschema()["properties"]) == {
        "answer",
        "citations",
        "sufficient",
        "candidate_papers",
        "trace_id",
        "document",
    }
    custom, values = [], {}
    for mode, part in graph.stream({"question": QUESTION, "papers": ["sparse"]}, stream_mode=["custom", "values"]):
        if mode == "custom":
            custom.append(part)
        else:
            values = part
    assert {(e["type"], e["name"]) for e in custom} >= {("tool", "search_chunks"), ("node", "synthesize_answer")}
    assert values["candidate_papers"] == ["sparse"] and values["sufficient"]
    assert values["document"]["answer"] == values["answer"] and values["document"]["trace_id"] == values["trace_id"]
    assert all(e["summary"] and "started_at" in e for e in custom)  # the one stream-step view


def test_the_toolkit_and_the_graph_reach_the_same_pool_and_answer_on_the_demo_corpus(demo_home) -> None:
    """The graph's own tool calls (the fixed Lit3R sequence), replayed through the toolkit one by one."""
    with Session(load_settings(None, home=demo_home)) as opened:
        retrieval = opened.retrieve(DEMO_QUESTION)
        graph_answer = opened.ask(DEMO_QUESTION)
        calls = [
            (e["name"], e["data"]["args"]) for e in load_trace(graph_answer.trace_path)["events"] if e["type"] == "tool"
        ]
        assert [name for name, _args in calls].count("search_chunks") >= 2
        toolkit = corpus_tools(opened)
        tools = {t.name: t for t in toolkit.tools}
        for name, args in calls:
            tools[name].invoke({"question": DEMO_QUESTION} if name == "verify_sufficiency" else args)
        tools["expand_neighbors"].invoke({})  # the answer path the graph runs as nodes
        tools["synthesize_answer"].invoke({"question": DEMO_QUESTION})
    state, answer = toolkit.state, toolkit.answer
    assert state["pool"] == pytest.approx(dict(retrieval.pool)) and state["subqueries"] == retrieval.subqueries
    assert [{k: v for k, v in r.items() if k != "round"} for r in state["verdicts"]] == [
        v.model_dump() for v in retrieval.verdicts
    ]
    assert state["round"] == retrieval.rounds == graph_answer.rounds
    assert [p for p, _s in state["final_papers"]] == [p for p, _s in retrieval.final_papers]
    assert [s for _p, s in state["final_papers"]] == pytest.approx([s for _p, s in retrieval.final_papers])
    assert answer is not None and answer.text == graph_answer.text and answer.sufficient == graph_answer.sufficient
    assert answer.citations == graph_answer.citations and answer.candidate_papers == graph_answer.candidate_papers
    assert answer.claims == graph_answer.claims and answer.rounds == graph_answer.rounds


def test_the_platform_graph_takes_a_json_context_and_opens_one_session_per_context(disk_index, hashing_encoder):
    graph = make_graph()
    assert graph.checkpointer is None
    assert set(graph.get_context_jsonschema()["properties"]) == {"home", "preset", "planner"}
    home = str(disk_index.settings.home)
    try:
        first, again = session_for({"home": home}), session_for(PlatformContext(home=home))
        assert first is again and first.planner == "fixed"
        out = graph.invoke({"question": QUESTION}, context={"home": home})
        assert out["sufficient"] and out["candidate_papers"][0] == "sparse"
        assert (Path(home) / "traces" / f"{out['trace_id']}.json").is_file()
        with pytest.raises(ValueError, match="planner"):
            session_for({"home": home, "planner": "random"})
    finally:
        close_sessions()


@pytest.mark.parametrize(
    ("given", "problem"),
    [({"query": QUESTION}, "no 'question'"), ({"question": "  ", "papers": ["sparse"]}, "an empty 'question'")],
)
def test_a_run_with_a_wrong_input_names_the_expected_input(session, given, problem) -> None:
    """The platform's KeyError: 'question' is now a message naming the input the graph wants and what came."""
    from lit3r.app.errors import UserError

    with pytest.raises(UserError) as caught:
        agent_subgraph(session).invoke(given)
    message = str(caught.value)
    assert problem in message and "{'question': str}" in message and "'options'" in message and "'papers'" in message
    assert "keys received: " in message and ("['papers', 'question']" in message if "papers" in given else True)
