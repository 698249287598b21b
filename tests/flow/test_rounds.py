"""The retrieval rounds through the agent graph, stopped before the reader: stop rules, round limits, the pool,
verification, Relate seeds, ablation switches, HyDE and the trace (the path the retrieval evaluation runs)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lit3r.agent.context import Context
from lit3r.retrieval import fusion
from lit3r.retrieval.planning import Decomposer, GateVerifier, KeywordDecomposer, Verdict, Verifier
from lit3r.retrieval.subquery import retrieve_subquery
from lit3r.settings.retrieval import RetrieverSettings
from lit3r.tools.search_chunks import HYDE_SKIPPED

from fakes.agent import make_context, run_agent
from fakes.index import MemoryIndex
from fakes.retrieval import ScriptedDecomposer, ScriptedHyde, ScriptedReranker, ScriptedVerifier

LONG_QUESTION = "Which retrieval papers combine okapi lexical ranking with dense encoder embedding models?"
INSUFFICIENT = Verdict(sufficient=False, missing="the dense side")
SUFFICIENT = Verdict(sufficient=True)


@pytest.fixture(scope="module")
def index(memory_index: MemoryIndex) -> MemoryIndex:
    return memory_index


def retrieve(
    index: MemoryIndex,
    rounds: list[list[str]] | None,
    verdicts: list[Verdict] | None,
    *,
    settings: RetrieverSettings | None = None,
    question: str = LONG_QUESTION,
    allowed: list[str] | None = None,
    **fields: Any,
) -> tuple[dict[str, Any], Context]:
    """Run the graph's retrieval (fixed planner, stopped before the reader) with scripted rounds and verdicts."""
    if settings is not None:
        fields["settings"] = index.settings.model_copy(update={"retriever": settings})
    fields.setdefault("reranker", None)
    decomposer = ScriptedDecomposer(rounds) if rounds is not None else None
    verifier = ScriptedVerifier(verdicts) if verdicts is not None else GateVerifier(None)
    context = make_context(index, decomposer=decomposer, verifier=verifier, stop_after="retrieval", **fields)
    return run_agent(context, question, allowed_papers=allowed), context


def decompositions(context: Context) -> list[list[str]]:
    """The subqueries each round searched (from the trace's decompose steps)."""
    return [e.data["subqueries"] for e in context.recorder.of_type("decompose")]


def test_doubles_satisfy_the_protocols() -> None:
    assert isinstance(ScriptedDecomposer([]), Decomposer) and isinstance(KeywordDecomposer(), Decomposer)
    assert isinstance(ScriptedVerifier([]), Verifier) and isinstance(GateVerifier(), Verifier)


def test_stops_when_verified_sufficient(index) -> None:
    state, context = retrieve(index, [["okapi lexical"], ["dense encoder"]], [SUFFICIENT])
    assert state["round"] == 1 and state["stop_reason"] == "sufficient" and state["phase"] == "done"
    assert context.decomposer.calls == [(LONG_QUESTION, [], "", 4)] and state["subqueries"] == ["okapi lexical"]
    assert "answer" not in state or state["answer"] is None  # stopped before the reader


def test_stops_when_decomposition_gives_nothing_new(index) -> None:
    rounds = [["okapi lexical", "dense encoder"], ["Okapi  lexical", "dense encoder"]]
    state, context = retrieve(index, rounds, [INSUFFICIENT])
    assert state["round"] == 1 and state["stop_reason"] == "no_new_subqueries"
    assert context.decomposer.calls[1][1:] == (["okapi lexical", "dense encoder"], "the dense side", 4)


def test_stops_after_three_rounds(index) -> None:
    state, context = retrieve(index, [["okapi"], ["dense"], ["fusion"], ["speech"]], [INSUFFICIENT])
    assert state["round"] == 3 and state["stop_reason"] == "max_rounds"
    assert decompositions(context) == [["okapi"], ["dense"], ["fusion"]] and len(state["verdicts"]) == 3
    assert len(context.decomposer.calls) == 3
    two, _ = retrieve(
        index, [["okapi"], ["dense"], ["fusion"]], [INSUFFICIENT], settings=RetrieverSettings(max_rounds=2)
    )
    assert two["round"] == 2 and two["stop_reason"] == "max_rounds"


def test_round_limits_and_fallback_to_the_question(index) -> None:
    many = [f"query {i}" for i in range(6)]
    _state, context = retrieve(
        index, [many, many + ["more"]], [INSUFFICIENT], settings=RetrieverSettings(subqueries_later=1)
    )
    assert decompositions(context)[:2] == [many[:4], ["query 4"]]  # later rounds: only new ones, at most 1
    empty, context = retrieve(index, [[]], [SUFFICIENT])
    assert decompositions(context) == [[LONG_QUESTION]] and empty["round"] == 1


def test_pool_keeps_the_maximum_score_over_subqueries(index) -> None:
    settings = RetrieverSettings()
    reranker = ScriptedReranker(lambda _i, passage: float(len(passage) % 97))
    subqueries = ["reranker logit pairwise", "fusion reciprocal runs"]
    state, _ = retrieve(index, [subqueries], [SUFFICIENT], settings=settings, reranker=reranker)
    singles = [retrieve_subquery(index, q, reranker, settings) for q in subqueries]
    expected: dict[str, float] = {}
    for single in singles:
        for chunk, score in single.pool:
            expected[chunk] = max(score, expected.get(chunk, float("-inf")))
    shared = set(dict(singles[0].pool)) & set(dict(singles[1].pool))
    assert shared and any(dict(singles[0].pool)[c] != dict(singles[1].pool)[c] for c in shared)
    assert state["pool"] == expected
    assert state["best_reranker_score"] == max(s.best_reranker_score for s in singles)
    paper_of = {c: index.chunk_by_id[c].paper_id for c in expected}
    assert state["ranking_a"] == fusion.rank_papers_by_max(state["pool"], paper_of)


def test_verifier_sees_top_papers_with_two_cut_chunks(index) -> None:
    settings = RetrieverSettings(verify_papers=3, verify_chunk_chars=40)
    _state, context = retrieve(index, [["okapi", "dense"]], [SUFFICIENT], settings=settings)
    [(evidence, best)] = context.tools.verifier.seen
    assert best is None and len(evidence) == 3
    assert all(len(e.chunks) == 2 and all(len(c.text) <= 40 for c in e.chunks) for e in evidence)


def test_relate_off_final_is_ranking_a(index) -> None:
    state, _ = retrieve(index, [["okapi lexical"]], [SUFFICIENT], settings=RetrieverSettings(relate=False))
    assert state["final_papers"] == state["ranking_a"][:50] and state["ranking_b"] == []


def test_relate_seeds_are_top_of_a_plus_named_papers(index) -> None:
    named = Verdict(sufficient=False, papers_with_evidence=["speech", "ghost"], missing="more")
    state, _ = retrieve(index, [["okapi lexical"], ["fusion reciprocal"]], [named, SUFFICIENT])
    top = state["ranking_a"][0][0]
    assert top in ("sparse", "fusion")  # the top pooled paper (which one depends on the fusion rule)
    assert state["seeds"] == [top, "speech"]  # unknown "ghost" dropped
    assert state["ranking_b"][:2] == [top, "speech"]
    ids_a = [p for p, _s in state["ranking_a"]]
    assert state["final_papers"] == fusion.ab_fusion(ids_a, state["ranking_b"], k=10, limit=50)
    assert state["final_papers"] != state["ranking_a"]  # B adds papers A never pooled or reorders them


def test_prf_off_and_rerank_off_switch_their_stages_off(index, spy_calls) -> None:
    calls = spy_calls(index.bm25_papers, "search")
    reranker = ScriptedReranker()
    on, _ = retrieve(
        index, [["okapi", "dense"]], [SUFFICIENT], settings=RetrieverSettings(relate=False), reranker=reranker
    )
    assert on["best_reranker_score"] is not None
    assert len(calls) == 4 and len(reranker.calls) == 2
    calls.clear()
    off = RetrieverSettings(relate=False, prf=False, rerank=False)
    state, _ = retrieve(index, [["okapi", "dense"]], [SUFFICIENT], settings=off, reranker=reranker)
    assert len(calls) == 2 and len(reranker.calls) == 2  # no PRF sweep, no new reranker call
    assert state.get("best_reranker_score") is None


def test_allowed_papers_restrict_the_whole_result(index) -> None:
    allowed = ["fusion", "rerank", "speech"]
    named = Verdict(sufficient=True, papers_with_evidence=["sparse", "rerank"])
    state, _ = retrieve(index, [["okapi lexical dense"]], [named], reranker=ScriptedReranker(), allowed=allowed)
    assert {index.chunk_by_id[c].paper_id for c in state["pool"]} <= set(allowed)
    assert set(state["ranking_b"]) <= set(allowed) and {p for p, _s in state["final_papers"]} <= set(allowed)
    assert "sparse" not in state["seeds"]


def test_hyde_note_without_a_model_and_passage_with_one(index, monkeypatch) -> None:
    _state, short = retrieve(index, [["okapi lexical"]], [SUFFICIENT], question="okapi lexical")
    notes = [e for e in short.recorder.of_type("note") if e.name == "hyde"]
    assert [n.data["note"] for n in notes] == [HYDE_SKIPPED]
    _state, long = retrieve(index, [[LONG_QUESTION]], [SUFFICIENT])
    assert not any(e.name == "hyde" for e in long.recorder.events)
    seen: list[str] = []
    encode = index.encoder.encode_queries
    monkeypatch.setattr(index.encoder, "encode_queries", lambda texts: seen.extend(texts) or encode(texts))
    hyde = ScriptedHyde("image pixel convolution imagenet")
    _state, context = retrieve(index, [["okapi lexical"]], [SUFFICIENT], question="okapi lexical", hyde=hyde)
    assert hyde.asked == ["okapi lexical"] and seen[0] == "image pixel convolution imagenet"
    ranking = next(e for e in context.recorder.of_type("ranking") if e.name == "retrieve_subquery")
    assert ranking.data["sweeps"]["original"]["dense_query"] == "image pixel convolution imagenet"
    assert [e.type for e in context.recorder.events if e.name in ("hyde", "scripted-hyde")] == ["hyde"]


def test_trace_records_every_round_step_in_order(index) -> None:
    _state, context = retrieve(index, [["okapi"], ["dense"]], [INSUFFICIENT, SUFFICIENT])
    steps = [
        (e.type, e.name, e.round)
        for e in context.recorder.events
        if e.type in ("decompose", "verdict") or (e.type == "ranking") or (e.type == "tool")
    ]
    per_round = [
        step
        for n in (1, 2)
        for step in (
            ("decompose", "scripted", n),
            ("tool", "search_chunks", n),
            ("ranking", "retrieve_subquery", n),
            ("tool", "verify_sufficiency", n),
            ("verdict", "scripted", n),
        )
    ]
    assert steps == [*per_round, ("ranking", "expand_neighbors", 2)]
    ranking = next(e for e in context.recorder.of_type("ranking") if e.name == "retrieve_subquery")
    assert {"sweeps", "papers", "candidates", "pool", "timings_ms"} <= set(ranking.data)
    expanded = next(e for e in context.recorder.of_type("ranking") if e.name == "expand_neighbors")
    assert set(expanded.data["timings_ms"]) == {"ranking_a", "relate", "fuse"}
    json.dumps([e.model_dump() for e in context.recorder.events])  # plain data, ready for the trace writer


def test_default_planning_is_model_free_and_runs_one_round(index) -> None:
    state, context = retrieve(index, None, None)
    assert isinstance(context.decomposer, KeywordDecomposer)
    assert state["round"] == 1 and state["stop_reason"] == "sufficient"
    assert state["final_papers"] and state.get("best_reranker_score") is None


def test_gate_verifier_with_a_threshold_stops_when_keywords_run_out(index) -> None:
    reranker = ScriptedReranker(lambda _i, _p: 0.1)
    context = make_context(index, reranker=reranker, verifier=GateVerifier(0.5), stop_after="retrieval")
    state = run_agent(context, LONG_QUESTION)
    assert state["round"] == 1 and state["stop_reason"] == "no_new_subqueries"
    verdict = Verdict.model_validate(state["verdicts"][0])
    assert not verdict.sufficient and "relevance gate" in verdict.missing
