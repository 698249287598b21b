"""The six agent tools: the schema the planner sees (snapshot), the state reducers, and each tool's effect
when a scripted planner calls it inside the graph."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from lit3r.agent.adapters import AGENT_TOOLS, agent_tools
from lit3r.agent.state import append_unseen, count, keep_max, reduce_pool
from lit3r.models import Answer
from lit3r.retrieval import fusion
from lit3r.retrieval.gate import GateThreshold
from lit3r.retrieval.planning import Verdict
from lit3r.retrieval.subquery import retrieve_subquery
from lit3r.settings import Settings, load_settings
from lit3r.tools.rerank import RESCORED

from fakes.agent import assert_grounded, make_context, run_agent, tool_messages
from fakes.chat import FakeToolCallingModel, tool_call
from fakes.corpus import QUESTION
from fakes.index import MemoryIndex

SNAPSHOT = Path(__file__).parent / "snapshots" / "agent_tools.json"


@pytest.fixture(scope="module")
def index(seed_memory_index: MemoryIndex) -> MemoryIndex:
    return seed_memory_index  # the expected pools below (20 per search, pins) are the seed's retrieval rules


def run_script(index: MemoryIndex, *turns, **fields) -> tuple[dict, object]:
    """Run the graph with a scripted LLM planner making ``turns`` (then it stops, forcing the answer step)."""
    model = FakeToolCallingModel(script=[*turns, "done"])
    context = make_context(index, model, **fields)
    return run_agent(context, QUESTION), context


def test_tool_schema_matches_the_snapshot_and_hides_injected_arguments() -> None:
    schema = [convert_to_openai_tool(t) for t in AGENT_TOOLS]
    if os.environ.get("LIT3R_UPDATE_SNAPSHOTS"):
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    assert schema == json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    names = [t["function"]["name"] for t in schema]
    assert names == [
        "search_chunks",
        "rerank",
        "expand_neighbors",
        "read_paper",
        "verify_sufficiency",
        "synthesize_answer",
    ]
    visible = {t["function"]["name"]: set(t["function"]["parameters"]["properties"]) for t in schema}
    assert visible == {
        "search_chunks": {"query"},
        "rerank": {"query"},
        "expand_neighbors": set(),
        "read_paper": {"paper_id"},
        "verify_sufficiency": set(),
        "synthesize_answer": set(),
    }
    assert all(t["function"]["description"] for t in schema)


def test_the_contracts_render_the_numbers_of_the_settings_in_force() -> None:
    retriever = {"max_rounds": 5, "rerank_candidates": 64, "pool_per_subquery": 12, "w_ret": 0.7, "w_rr": 0.3}
    changed = {**retriever, "blend_k": 40, "verify_papers": 8, "verify_chunks_per_paper": 1, "fusion": "blend"}
    tools = {t.name: t.description for t in agent_tools(Settings(retriever=changed))}
    assert (
        "(5 rounds at most)" in tools["search_chunks"]
        and "reranks up to 64 candidate passages" in tools["search_chunks"]
    )
    assert "merges the best 12 into the pool" in tools["search_chunks"]
    assert "0.7/(40 + pool rank) + 0.3/(40 + reranker rank)" in tools["rerank"]
    assert "the top 8 pooled papers, 1 best passage each" in tools["verify_sufficiency"]
    assert [convert_to_openai_tool(t)["function"]["parameters"] for t in agent_tools(Settings(retriever=changed))] == [
        convert_to_openai_tool(t)["function"]["parameters"] for t in AGENT_TOOLS
    ]  # only the descriptions change
    off = {t.name: t.description for t in agent_tools(Settings(reranker="none", retriever={"relate": False}))}
    assert "changes nothing" in off["rerank"] and "Relate is off" in off["expand_neighbors"]
    assert "orders up to 200 candidate passages by retrieval rank" in off["search_chunks"]
    seed = {t.name: t.description for t in agent_tools(load_settings("seed"))}
    assert "its top 20 by retrieval rank pinned above the rest" in seed["search_chunks"]
    assert not any(char.isdigit() for char in convert_to_openai_tool(AGENT_TOOLS[3])["function"]["description"])


def test_state_reducers_merge_by_max_and_reset_on_none() -> None:
    pool = reduce_pool({"a": 0.5, "b": 0.2}, [("b", 0.9), ("a", 0.1), ("c", 0.3)])
    assert pool == {"a": 0.5, "b": 0.9, "c": 0.3}
    assert reduce_pool(pool, None) == {} and reduce_pool(None, {"x": 1.0}) == {"x": 1.0}
    assert append_unseen(["p1"], ["p2", "p1", "p3"]) == ["p1", "p2", "p3"]
    assert keep_max(0.4, 0.2) == 0.4 and keep_max(None, 0.2) == 0.2 and keep_max(0.4, None) is None
    assert count(None, 1) == 1 and count(3, 1) == 4 and count(3, None) == 0


def test_a_rerank_update_replaces_scores_in_its_order() -> None:
    pool = {"a": 0.9, "b": 0.5, "c": 0.5, "d": 0.1}
    update = {RESCORED: {"c": [0.5, 0.9], "a": [0.9, 0.5], "b": [0.5, 0.5], "gone": [0.3, 0.3]}}
    replaced = reduce_pool(pool, update)
    assert replaced == {"c": 0.9, "a": 0.5, "b": 0.5, "d": 0.1}  # an unknown chunk is not added
    assert list(replaced) == ["c", "a", "b", "d"]  # equal scores (a, b) rank in the rerank's order
    raised_meanwhile = reduce_pool({**pool, "a": 0.95}, update)  # another call of the step raised "a"
    assert raised_meanwhile["a"] == 0.95


def test_final_papers_go_stale_when_a_later_tool_changes_the_pool(index) -> None:
    search = tool_call("search_chunks", query="okapi lexical saturation")
    state, context = run_script(
        index, search, tool_call("expand_neighbors"), tool_call("search_chunks", query="molecule graph")
    )
    assert state["changes"] == 2 and state["expanded_at"] == 2  # the answer path expanded again after the search
    expansions = [e for e in context.recorder.of_type("ranking") if e.name == "expand_neighbors"]
    assert len(expansions) == 2
    fresh, context = run_script(index, search, tool_call("expand_neighbors"))
    assert fresh["expanded_at"] == fresh["changes"] == 1
    skipped = [e for e in context.recorder.of_type("node") if e.name == "expand_neighbors"]
    assert skipped[0].data["skipped"] == "the final papers are up to date"


def test_pool_of_two_searches_counts_each_chunk_once_with_its_max_score(index) -> None:
    queries = ["okapi lexical saturation", "okapi inverted lexical"]
    state, context = run_script(index, [tool_call("search_chunks", query=q) for q in queries])
    results = [retrieve_subquery(index, q, context.tools.reranker, index.settings.retriever).pool for q in queries]
    shared = set(dict(results[0])) & set(dict(results[1]))
    assert shared  # the two subqueries return some chunks in common
    expected = fusion.merge_pool(fusion.merge_pool({}, results[0]), results[1])
    assert state["pool"] == pytest.approx(expected)
    assert len(state["pool"]) == len(set(dict(results[0])) | set(dict(results[1])))
    for chunk in shared:
        assert state["pool"][chunk] == max(dict(results[0])[chunk], dict(results[1])[chunk])
    second = tool_messages(state, "search_chunks")[1].text
    assert f"{len(results[1])} passages" in second and "(20 not pooled before this turn)" in second  # same turn


def pool_order(pool: dict[str, float]) -> list[str]:
    """The pool's chunks best first, equal scores in pool order (as every reader of the pool ranks them)."""
    return [c for c, _s in sorted(pool.items(), key=lambda item: -item[1])]


def test_rerank_moves_a_passage_up_under_the_default_learned_fusion(memory_index: MemoryIndex) -> None:
    assert memory_index.settings.retriever.fusion == "learned"  # the default settings
    search = tool_call("search_chunks", query="okapi lexical saturation")
    before, _ = run_script(memory_index, search)
    order = pool_order(before["pool"])
    target = order[len(order) // 2]  # a passage in the middle of the pool; its own text is the sharper query
    query = " ".join(memory_index.chunk_by_id[target].text.split()[:40])
    after, context = run_script(memory_index, search, tool_call("rerank", query=query))
    moved = pool_order(after["pool"])
    assert moved.index(target) < order.index(target)  # up, where the old max-merge of ~0.016 could move nothing
    assert sorted(after["pool"].values()) == pytest.approx(sorted(before["pool"].values()))  # the fusion's scale
    assert max(after["pool"].values()) <= 1.0
    event = next(e for e in context.recorder.of_type("ranking") if e.name == "rerank")
    assert [c for c, _s in event.data["pool"]] == moved and event.data["query"] == query
    assert "moved up" in tool_messages(after, "rerank")[0].text


def test_rerank_keeps_pins_above_the_rest_under_the_blend_fusion(index) -> None:
    retriever = index.settings.retriever.model_copy(update={"pinned": 5})  # the seed's blend, fewer pins
    settings = index.settings.model_copy(update={"retriever": retriever})
    searches = [
        tool_call("search_chunks", query="okapi lexical saturation"),
        tool_call("search_chunks", query="molecule graph"),
    ]
    before, _ = run_script(index, *searches, settings=settings)
    pinned = {c for c, s in before["pool"].items() if s >= retriever.pin_bonus}
    assert pinned and len(pinned) < len(before["pool"])
    after, _ = run_script(
        index, *searches, tool_call("rerank", query="graph neural network molecules"), settings=settings
    )
    assert {c for c, s in after["pool"].items() if s >= retriever.pin_bonus} == pinned
    assert sorted(after["pool"].values()) == pytest.approx(sorted(before["pool"].values()))
    assert pool_order(after["pool"]) != pool_order(before["pool"])
    unranked, _ = run_script(index, searches[0], tool_call("rerank", query="fusion"), reranker=None)
    assert tool_messages(unranked, "rerank")[0].text.startswith("no reranker is configured")


def test_tools_that_need_a_pool_report_an_error_and_the_run_goes_on(index) -> None:
    state, context = run_script(index, tool_call("expand_neighbors"), tool_call("rerank", query="x"))
    errors = [m for m in tool_messages(state) if m.status == "error"]
    assert [m.name for m in errors] == ["expand_neighbors", "rerank"]
    assert all("the pool is empty" in m.text for m in errors)
    assert [e.name for e in context.recorder.of_type("tool") if e.data.get("error")] == ["expand_neighbors", "rerank"]
    assert Answer.model_validate(state["answer"]).sufficient is False


class NamingVerifier:
    """Names a real paper, an unknown one, and says the evidence suffices."""

    name = "naming"

    def verify(self, question, evidence, best_score) -> Verdict:
        return Verdict(sufficient=True, papers_with_evidence=["fusion", "not-a-paper"])


def test_verify_records_the_verdict_and_named_papers_seed_the_expansion(index) -> None:
    state, context = run_script(
        index,
        tool_call("search_chunks", query="okapi lexical saturation"),
        tool_call("verify_sufficiency"),
        tool_call("expand_neighbors"),
        verifier=NamingVerifier(),
    )
    verdict = {"sufficient": True, "papers_with_evidence": ["fusion", "not-a-paper"], "missing": "", "round": 1}
    assert state["verdicts"] == [verdict]
    assert state["named_papers"] == ["fusion"]
    assert state["seeds"] == ["sparse", "fusion"]
    assert state["ranking_b"][:2] == ["sparse", "fusion"]
    assert [e.data["verdict"]["sufficient"] for e in context.recorder.of_type("verdict")] == [True]


def test_read_paper_shows_pooled_chunks_with_ids_and_locators(index) -> None:
    state, _ = run_script(
        index,
        tool_call("search_chunks", query="okapi lexical saturation"),
        [tool_call("read_paper", paper_id="sparse"), tool_call("read_paper", paper_id="vision")],
    )
    shown = {m.text.split('id="')[1].split('"')[0]: m.text for m in tool_messages(state, "read_paper")}
    sparse = shown["sparse"]
    best = max((c for c in state["pool"] if c.startswith("sparse::")), key=state["pool"].get)
    assert f'id="{best}"' in sparse and "best pooled passages" in sparse
    assert 'locator="§ ' in sparse and "Okapi BM25 for sparse lexical retrieval" in sparse


def test_synthesize_abstains_below_the_relevance_gate(index) -> None:
    search = tool_call("search_chunks", query="okapi lexical saturation")
    state, context = run_script(index, search, tool_call("synthesize_answer"), gate=GateThreshold.fixed(1e9))
    answer = Answer.model_validate(state["answer"])
    assert not answer.sufficient and not answer.citations
    assert tool_messages(state, "synthesize_answer")[0].text == "abstained: the evidence is insufficient"
    read = context.recorder.of_type("read")[0].data
    assert read["sufficient"] is False and read["evidence"]
    open_gate, _ = run_script(index, search, tool_call("synthesize_answer"), gate=GateThreshold.fixed(-1e9))
    assert_grounded(Answer.model_validate(open_gate["answer"]), index)


def test_every_tool_call_is_one_trace_event_with_arguments_and_status(index) -> None:
    state, context = run_script(index, tool_call("search_chunks", query="okapi lexical saturation"))
    events = context.recorder.of_type("tool")
    messages = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [e.name for e in events] == [m.name for m in messages]
    assert [e.data["status"] for e in events] == [m.text for m in messages]
    assert events[0].data["args"] == {"query": "okapi lexical saturation"} and events[0].duration_ms > 0


class RecordingReader:
    """A reader that records whether it was let read (``sufficient``) and answers nothing."""

    name = "recording"

    def __init__(self) -> None:
        self.calls: list[bool] = []

    def __call__(self, question, evidence_chunks, options, sufficient) -> Answer:
        from lit3r.answers import insufficient_answer

        self.calls.append(sufficient)
        return insufficient_answer(question)


def test_no_reader_reads_a_question_whose_words_the_papers_read_do_not_hold(index) -> None:
    from lit3r.reading.assurance import MIN_PAPER_COVERAGE, papers_coverage
    from lit3r.tools.synthesize_answer import synthesize_answer

    pool = {c.id: 1.0 for c in list(index.chunk_by_id.values())[:6]}
    papers = sorted({index.chunk_by_id[c].paper_id for c in pool})
    for question, let_read in (
        ("What is the boiling point of liquid nitrogen in Kelvin?", False),
        (QUESTION, True),  # "okapi lexical saturation": the seed's papers hold it
    ):
        reader = RecordingReader()
        context = make_context(index, reader=reader, gate=GateThreshold.fixed(-1e9))  # the gate lets everything by
        synthesize_answer(context.tools, question, pool, None, 1.0)
        read = context.recorder.of_type("read")[0].data
        assert reader.calls == [let_read] and read["gate"] is True and read["sufficient"] is let_read
        assert read["papers_coverage"] == round(papers_coverage(question, index, papers), 4)
        assert (read["papers_coverage"] >= MIN_PAPER_COVERAGE) is let_read
    # A question with options is read for its verdict, whose words the papers need not hold
    reader = RecordingReader()
    context = make_context(index, reader=reader, gate=GateThreshold.fixed(-1e9))
    synthesize_answer(context.tools, "Is the boiling point of nitrogen low?", pool, None, 1.0, options=["yes", "no"])
    assert reader.calls == [True] and context.recorder.of_type("read")[0].data["papers_coverage"] < MIN_PAPER_COVERAGE


def test_a_yes_no_question_naming_what_no_paper_read_mentions_is_answered_no_by_any_reader(index) -> None:
    from lit3r.reading.assurance import MIN_PAPER_COVERAGE
    from lit3r.tools.synthesize_answer import synthesize_answer

    from fakes.judges import KeyPhraseJudge

    pool = {c.id: 1.0 for c in index.chunks_by_paper["sparse"]}
    question = "Does their okapi lexical saturation analysis use crowdsourcing?"
    reader = RecordingReader()  # stands for any reader, a language model's too: it is not called
    judge = KeyPhraseJudge()  # the configured judge; lit3r's own quotes get the exact check
    context = make_context(index, reader=reader, gate=GateThreshold.fixed(-1e9), judge=judge)
    answer = synthesize_answer(context.tools, question, pool, None, 1.0)
    read = context.recorder.of_type("read")[0]
    assert read.data["papers_coverage"] >= MIN_PAPER_COVERAGE  # the papers hold the question: it is read
    assert read.name == "unmentioned" and read.data["unmentioned"] == ["crowdsourcing"] and reader.calls == []
    assert answer.sufficient and answer.option == "No" and answer.text.startswith("No — ")
    assert answer.unmentioned == ["crowdsourcing"] and answer.verified_by == "exact" and judge.calls == []
    assert_grounded(answer, index)
    # the same question about what the paper does say goes to the reader
    reader = RecordingReader()
    context = make_context(index, reader=reader, gate=GateThreshold.fixed(-1e9))
    synthesize_answer(context.tools, "Does the okapi lexical saturation analysis show gains?", pool, None, 1.0)
    assert reader.calls == [True] and context.recorder.of_type("read")[0].name == "recording"


def test_a_question_naming_what_no_paper_read_mentions_is_read_by_no_reader(index) -> None:
    from lit3r.reading.assurance import MIN_PAPER_COVERAGE
    from lit3r.tools.synthesize_answer import synthesize_answer

    pool = {c.id: 1.0 for c in index.chunks_by_paper["sparse"]}
    question = "Which okapi lexical saturation settings did the AlphaGo team tune?"
    reader = RecordingReader()  # stands for any reader, a language model's too
    context = make_context(index, reader=reader, gate=GateThreshold.fixed(-1e9))
    answer = synthesize_answer(context.tools, question, pool, None, 1.0)
    read = context.recorder.of_type("read")[0]
    assert read.data["papers_coverage"] >= MIN_PAPER_COVERAGE  # the papers hold the question's other words
    assert read.data["sufficient"] is False and read.data["unnamed"] == ["AlphaGo"] and reader.calls == [False]
    assert not answer.sufficient and answer.unmentioned == ["AlphaGo"] and answer.citations == []
    # without the name, the same question is read
    reader = RecordingReader()
    context = make_context(index, reader=reader, gate=GateThreshold.fixed(-1e9))
    synthesize_answer(context.tools, "Which okapi lexical saturation settings did the team tune?", pool, None, 1.0)
    read = context.recorder.of_type("read")[0]
    assert reader.calls == [True] and "unnamed" not in read.data
