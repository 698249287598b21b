"""The agent graph end to end on the in-memory index: fixed planner, LLM planner with a scripted model, the round
cap, forced answers, tool errors, the answer path as nodes, chat threads and prompt injection."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from lit3r.agent.adapters import AGENT_TOOLS
from lit3r.agent.context import Context
from lit3r.graphs.agent import build_graph
from lit3r.llm.budget import Budget
from lit3r.llm.errors import LLMCallError
from lit3r.models import ABSTENTION, Answer
from lit3r.prompts.safety import LEFT_OUT
from lit3r.settings import Settings, load_preset
from lit3r.tools import TOOL_NAMES

from fakes.agent import assert_grounded, make_context, run_agent, tool_messages
from fakes.chat import FakeToolCallingModel, tool_call
from fakes.corpus import INJECTION, PAPERS, QUESTION, hostile_record, paper_record, write_records
from fakes.index import MemoryIndex
from fakes.openai_server import OpenAIServer
from fakes.openai_server import tool_call as http_tool_call
from fakes.retrieval import AlwaysInsufficient, EndlessDecomposer


@pytest.fixture(scope="module")
def index(seed_memory_index: MemoryIndex) -> MemoryIndex:
    return seed_memory_index  # the expected pools below (20 per search, pins) are the seed's retrieval rules


def node_names(context: Context) -> list[str]:
    return [e.name for e in context.recorder.of_type("node")]


def test_graph_wiring_reads_like_its_diagram() -> None:
    graph = build_graph().get_graph()
    edges = {(e.source, e.target) for e in graph.edges}
    assert {
        ("__start__", "start_question"),
        ("start_question", "planner"),
        ("planner", "tools"),
        ("tools", "planner"),
        ("planner", "expand_neighbors"),
        ("planner", "finish"),
        ("expand_neighbors", "synthesize_answer"),
        ("expand_neighbors", "__end__"),
        ("synthesize_answer", "finish"),
        ("finish", "__end__"),
    } == edges
    assert tuple(t.name for t in AGENT_TOOLS) == TOOL_NAMES


def test_reader_papers_caps_the_papers_the_reader_reads(index) -> None:
    def read_event(context: Context) -> dict:
        return next(e.data for e in context.recorder.events if e.type == "read")

    everything = make_context(index)
    run_agent(everything, QUESTION)
    read_all = read_event(everything)["evidence"]
    papers_all = list(dict.fromkeys(index.chunk_by_id[c].paper_id for c in read_all))
    assert len(papers_all) > 1  # without a cap the reader sees several papers' chunks

    settings = index.settings.model_copy(
        update={"retriever": index.settings.retriever.model_copy(update={"reader_papers": 1})}
    )
    capped = make_context(index, settings=settings)
    state = run_agent(capped, QUESTION)
    read_one = read_event(capped)["evidence"]
    assert read_one == [c for c in read_all if index.chunk_by_id[c].paper_id == papers_all[0]]
    assert Answer.model_validate(state["answer"]).candidate_papers == [p for p, _s in state["final_papers"]]


def test_reader_chunks_sets_how_many_pooled_chunks_of_each_paper_the_reader_gets(index) -> None:
    def per_paper(chunks: int) -> dict[str, list[str]]:
        retriever = index.settings.retriever.model_copy(update={"reader_chunks": chunks, "reader_papers": 1})
        context = make_context(index, settings=index.settings.model_copy(update={"retriever": retriever}))
        state = run_agent(context, "What is okapi lexical saturation?")  # a which-paper question adds abstracts
        read = next(e.data for e in context.recorder.events if e.type == "read")["evidence"]
        pool = sorted(state["pool"].items(), key=lambda item: -item[1])
        paper = index.chunk_by_id[read[0]].paper_id
        return {"read": read, "pooled": [c for c, _ in pool if index.chunk_by_id[c].paper_id == paper]}

    three, one = per_paper(3), per_paper(1)
    assert len(three["pooled"]) > 3  # the paper has more pooled chunks than either reader gets
    assert three["read"] == three["pooled"][:3] and one["read"] == one["pooled"][:1]


def test_fixed_planner_answers_with_citations_that_resolve_to_their_quotes(index) -> None:
    context = make_context(index)
    state = run_agent(context, QUESTION)
    answer = Answer.model_validate(state["answer"])
    assert answer.sufficient and answer.rounds == 1
    assert_grounded(answer, index)
    assert {c.paper_id for c in answer.citations} == {"sparse"}
    assert answer.candidate_papers[0] == "sparse"
    assert answer.candidate_papers == [p for p, _s in state["final_papers"]]
    assert state["stop_reason"] == "sufficient" and state["phase"] == "done"
    called = [c["name"] for m in state["messages"] if isinstance(m, AIMessage) for c in m.tool_calls]
    assert called == ["search_chunks", "search_chunks", "verify_sufficiency"]
    nodes = node_names(context)
    assert nodes[-3:] == ["expand_neighbors", "synthesize_answer", "finish"]  # the answer path as nodes
    assert state["messages"][-1].content == answer.text


def test_round_cap_holds_then_the_answer_is_forced(index) -> None:
    verifier, decomposer = AlwaysInsufficient(), EndlessDecomposer()
    context = make_context(index, verifier=verifier, decomposer=decomposer)
    state = run_agent(context, QUESTION)
    assert state["round"] == 3 and verifier.calls == 3
    assert [missing for _prev, missing in decomposer.calls] == ["", "still missing after 1", "still missing after 2"]
    assert state["subqueries"] == [f"okapi lexical saturation variant {i}" for i in (1, 2, 3)]
    assert [v["round"] for v in state["verdicts"]] == [1, 2, 3]
    assert state["stop_reason"] == "max_rounds"
    answer = Answer.model_validate(state["answer"])
    assert answer.rounds == 3
    assert_grounded(answer, index)


def test_llm_planner_runs_scripted_calls_and_a_tool_error_reaches_it(index) -> None:
    model = FakeToolCallingModel(
        script=[
            [tool_call("search_chunks", query="okapi saturation"), tool_call("search_chunks", query="lexical okapi")],
            tool_call("read_paper", paper_id="no-such-paper"),
            tool_call("read_paper", paper_id="sparse"),
            tool_call("verify_sufficiency"),
            tool_call("expand_neighbors"),
            tool_call("synthesize_answer"),
        ]
    )
    state = run_agent(make_context(index, model), QUESTION)
    assert model.remaining == 0 and len(model.calls) == 6  # no model call after the answer
    error = tool_messages(state, "read_paper")[0]
    assert error.status == "error" and "unknown paper id 'no-such-paper'" in error.text
    seen_by_model = model.calls[2]["messages"]
    assert any(isinstance(m, ToolMessage) and "unknown paper id" in m.text for m in seen_by_model)
    assert "<paper" in tool_messages(state, "read_paper")[1].text
    assert state["subqueries"] == ["okapi saturation", "lexical okapi"] and state["round"] == 1
    assert_grounded(Answer.model_validate(state["answer"]), index)
    assert state["stop_reason"] == "planner_answered"


def test_llm_planner_that_stops_without_an_answer_gets_the_answer_step(index) -> None:
    model = FakeToolCallingModel(script=[tool_call("search_chunks", query="okapi saturation"), "The answer is 42."])
    context = make_context(index, model)
    state = run_agent(context, QUESTION)
    assert state["stop_reason"] == "planner_stopped" and "stopped calling tools" in state["stop_detail"]
    assert [m.name for m in tool_messages(state)] == ["search_chunks"]
    assert node_names(context)[-3:] == ["expand_neighbors", "synthesize_answer", "finish"]
    answer = Answer.model_validate(state["answer"])
    assert "42" not in answer.text
    assert_grounded(answer, index)


def test_llm_planner_round_cap_drops_a_fourth_search_round(index) -> None:
    model = FakeToolCallingModel(script=[tool_call("search_chunks", query=f"okapi query {i}") for i in range(5)])
    context = make_context(index, model)
    state = run_agent(context, QUESTION)
    assert state["round"] == 3 and len(state["subqueries"]) == 3
    assert len(model.calls) == 4 and state["stop_reason"] == "max_rounds"
    assert [e.data["dropped"] for e in context.recorder.of_type("note") if e.name == "round_cap"] == [
        [{"query": "okapi query 3"}]
    ]
    assert Answer.model_validate(state["answer"]).rounds == 3


def test_token_budget_exhaustion_forces_the_answer(index) -> None:
    model = FakeToolCallingModel(
        script=[tool_call("search_chunks", query="okapi saturation"), tool_call("search_chunks", query="more okapi")]
    )
    context = make_context(index, model, budget=Budget(max_tokens=5))
    state = run_agent(context, QUESTION)
    assert len(model.calls) == 1 and context.budget.tokens > 5
    assert state["stop_reason"] == "budget" and state["stop_detail"].startswith("tokens: ")
    assert state["subqueries"] == ["okapi saturation"]
    assert_grounded(Answer.model_validate(state["answer"]), index)


def test_time_budget_spent_before_retrieval_abstains(index) -> None:
    clock = iter([0.0] + [10.0] * 100)
    context = make_context(index, budget=Budget(max_seconds=1.0, clock=lambda: next(clock)))
    state = run_agent(context, QUESTION)
    assert state["stop_reason"] == "budget" and state["stop_detail"].startswith("time: ")
    answer = Answer.model_validate(state["answer"])
    assert not answer.sufficient and answer.text == ABSTENTION and not answer.citations


def test_chat_thread_starts_each_question_afresh(index) -> None:
    saver = InMemorySaver()
    first = run_agent(make_context(index), QUESTION, thread_id="t1", checkpointer=saver)
    second = run_agent(
        make_context(index), "Which paper uses molecule graph message passing?", thread_id="t1", checkpointer=saver
    )
    assert [m.text for m in second["messages"] if isinstance(m, HumanMessage)] == [
        QUESTION,
        "Which paper uses molecule graph message passing?",
    ]
    assert QUESTION not in second["subqueries"] and second["round"] == 1
    assert set(first["pool"]) != set(second["pool"])
    assert Answer.model_validate(second["answer"]).citations[0].paper_id == "graph"


@pytest.fixture(scope="module")
def injected_index(tmp_path_factory: pytest.TempPathFactory) -> MemoryIndex:
    folder = tmp_path_factory.mktemp("injected")
    records = write_records(folder / "papers.jsonl", [paper_record(pid) for pid in PAPERS] + [hostile_record()])
    return MemoryIndex(records, Settings(home=folder / "home", retriever=load_preset("seed")["retriever"]))


def test_injected_instructions_do_not_change_the_fixed_answer(injected_index) -> None:
    state = run_agent(make_context(injected_index), QUESTION)
    assert any(c.startswith("hostile::") for c in state["pool"])  # the hostile paper was retrieved
    answer = Answer.model_validate(state["answer"])
    assert "42" not in answer.text and all(c.paper_id == "sparse" for c in answer.citations)
    assert_grounded(answer, injected_index)


def test_injected_instructions_never_reach_the_llm_planner(injected_index) -> None:
    model = FakeToolCallingModel(
        script=[
            tool_call("search_chunks", query="okapi lexical saturation"),
            tool_call("read_paper", paper_id="hostile"),
            tool_call("synthesize_answer"),
        ]
    )
    state = run_agent(make_context(injected_index, model), QUESTION)
    shown = tool_messages(state, "read_paper")[0].text
    assert INJECTION not in shown and LEFT_OUT in shown and "Okapi notes." in shown
    assert shown.startswith("<evidence>") and shown.rstrip().endswith("</evidence>")
    answer = Answer.model_validate(state["answer"])
    assert "42" not in answer.text and {c.paper_id for c in answer.citations} == {"sparse"}


def test_llm_planner_over_the_openai_protocol(index, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tool schemas go out, tool calls come back, and each result returns as a tool message with its call id."""
    for variable in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(variable, "127.0.0.1,localhost")
    with OpenAIServer() as server:
        server.add(
            http_tool_call("search_chunks", {"query": "okapi lexical saturation"}, call_id="call_a"),
            http_tool_call("synthesize_answer", {}, call_id="call_b"),
        )
        chat = ChatOpenAI(base_url=server.base_url, api_key="sk-test", model="fake-model", max_retries=0, timeout=5)
        state = run_agent(make_context(index, chat), QUESTION)
    first, second = (request["body"] for request in server.requests)
    assert [t["function"]["name"] for t in first["tools"]] == list(TOOL_NAMES)
    assert first["messages"][1] == {"role": "user", "content": QUESTION}
    sent = {m["tool_call_id"]: m["content"] for m in second["messages"] if m["role"] == "tool"}
    assert list(sent) == ["call_a"] and sent["call_a"].startswith("'okapi lexical saturation': 20 passages")
    assert_grounded(Answer.model_validate(state["answer"]), index)


def test_llm_planner_tool_calls_that_do_not_parse_hand_over_to_the_fixed_sequence(index) -> None:
    broken = AIMessage(
        content="",
        invalid_tool_calls=[{"name": "search_chunks", "args": '{"query": "okapi', "id": "c1", "error": "bad JSON"}],
    )
    model = FakeToolCallingModel(script=[broken])
    context = make_context(index, model)
    state = run_agent(context, QUESTION)
    answer = Answer.model_validate(state["answer"])
    assert model.remaining == 0 and state["round"] == 1 and state["stop_reason"] == "sufficient"
    assert "did not parse" in state["planner_fallback"]
    assert [f.split(":")[0] for f in answer.fallbacks] == ["planner"] and "fixed Lit3R sequence" in answer.fallbacks[0]
    assert_grounded(answer, index)  # the fixed sequence answered instead of a 0-round abstention
    (fallback,) = context.recorder.fallbacks()
    assert fallback.stage == "planner" and "bad JSON" in fallback.reason
    assert answer.fallback_steps == [fallback] and answer.fallbacks == [fallback.describe()]


def test_llm_planner_whose_model_fails_hands_over_to_the_fixed_sequence(index) -> None:
    failure = LLMCallError("planner: cannot connect to the endpoint", name="planner", retryable=True, attempts=3)
    model = FakeToolCallingModel(script=[tool_call("search_chunks", query="okapi saturation"), failure])
    state = run_agent(make_context(index, model), QUESTION)
    answer = Answer.model_validate(state["answer"])
    assert state["subqueries"][0] == "okapi saturation" and state["round"] == 1  # its own round, then verification
    assert answer.sufficient and "cannot connect" in answer.fallbacks[0]
    assert_grounded(answer, index)


def test_unknown_paper_ids_are_an_error_not_an_abstention(index, capsys) -> None:
    from lit3r.app.errors import NotFound
    from lit3r.app.session import Session

    with Session(index.settings, index=index) as session, pytest.raises(NotFound, match="unknown paper id") as raised:
        session.ask(QUESTION, allowed_papers=["no-such-paper"])
    assert raised.value.code == "unknown_paper"
