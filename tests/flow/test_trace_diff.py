"""Trace diff: two real runs over the in-memory index compared step by step; rank moves named; identical runs."""

from __future__ import annotations

import json

import pytest

from lit3r.app.session import Session
from lit3r.app.trace_diff import TraceDiff, compare_rankings, diff_traces, final_pool
from lit3r.app.traces import load_trace

from fakes.corpus import QUESTION
from fakes.index import MemoryIndex


def traced_run(index: MemoryIndex, reranker: str, question: str = QUESTION) -> dict:
    """The trace document of one ``ask`` with this reranker."""
    settings = index.settings.model_copy(update={"reranker": reranker})
    with Session(settings, index=index) as session:
        return load_trace(session.ask(question).trace_path)


@pytest.fixture(scope="module")
def lexical(memory_index: MemoryIndex) -> dict:
    return traced_run(memory_index, "lexical")


@pytest.fixture(scope="module")
def bi_encoder(memory_index: MemoryIndex) -> dict:
    return traced_run(memory_index, "bi-encoder")


def test_compare_rankings_names_every_move_entry_and_exit() -> None:
    diff = compare_rankings("r", [["a", 3.0], ["b", 2.0], ["c", 1.0]], [["b", 2.5], ["a", 2.0], ["d", 0.5]])
    moves = {m.id: (m.rank_a, m.rank_b, m.change) for m in diff.moves}
    assert moves == {"b": (2, 1, 1), "a": (1, 2, -1), "d": (None, 3, None), "c": (3, None, None)}
    assert (
        not diff.same and diff.max_score_change == pytest.approx(1.0) and diff.overlap == pytest.approx(2 / 3, abs=1e-4)
    )
    same = compare_rankings("r", ["x", "y"], [["x", 1.0], ["y", 0.5]])
    assert same.same and same.moves == [] and same.max_score_change is None


def test_a_run_diffed_with_itself_is_identical(lexical: dict) -> None:
    diff = diff_traces(lexical, lexical)
    assert diff.identical and diff.first_difference is None
    assert all(step.same for step in diff.steps) and len(diff.steps) == len(lexical["events"])
    assert diff.rankings and all(r.same and not r.moves for r in diff.rankings)
    assert diff.time_ms["total"].delta == 0 and diff.answer.same and diff.citations.same


def test_two_rerankers_differ_first_in_the_reranker_ranking_and_name_the_rank_moves(lexical, bi_encoder) -> None:
    diff = diff_traces(lexical, bi_encoder)
    assert (diff.a.rerankers, diff.b.rerankers) == (["lexical"], ["bi-encoder"])
    assert diff.subqueries.same and diff.subqueries.a  # the same subqueries, retrieved the same way ...
    sweeps = [r for r in diff.rankings if "sweep" in r.name]
    assert sweeps and all(r.same for r in sweeps)
    assert not diff.identical and diff.first_difference.startswith("ranking reranker scores of subquery")  # ... then
    reranked = next(r for r in diff.rankings if r.name == "reranker scores" and not r.same)
    assert reranked.moves
    # every named move is the rank the id really has in each run's reranker scores
    for side, doc in (("a", lexical), ("b", bi_encoder)):
        record = next(
            e["data"]
            for e in doc["events"]
            if e["name"] == "retrieve_subquery" and e["data"]["subquery"] == reranked.subquery
        )
        order = [c for c, _s in sorted(record["reranker"], key=lambda p: -p[1])]
        for move in reranked.moves:
            rank = getattr(move, f"rank_{side}")
            assert rank is None or order[rank - 1] == move.id


def test_the_pool_is_the_state_merge_of_every_pool_share(lexical: dict) -> None:
    pool = dict(final_pool(lexical))
    shares = [e["data"]["pool"] for e in lexical["events"] if e["name"] == "retrieve_subquery"]
    assert set(pool) == {c for share in shares for c, _s in share}
    assert all(pool[c] >= s for share in shares for c, s in share)


def test_the_diff_is_json_ready_and_round_trips(lexical, bi_encoder) -> None:
    diff = diff_traces(lexical, bi_encoder)
    text = diff.model_dump_json()
    assert TraceDiff.model_validate(json.loads(text)) == diff
    assert set(json.loads(text)) >= {
        "first_difference",
        "steps",
        "subqueries",
        "rankings",
        "pool",
        "verdicts",
        "final_papers",
        "answer",
        "citations",
        "tokens",
        "time_ms",
    }


def test_the_steps_that_fell_back_are_compared_from_the_records_or_an_older_trace_s_lines(lexical: dict) -> None:
    read = {"stage": "read", "reason": "stage 2 call failed", "instead": "the extractive reader answered"}
    fell_back = {**lexical, "answer": {**lexical["answer"], "fallback_steps": [read], "fallbacks": ["read: x; y"]}}
    older = {**lexical, "answer": {k: v for k, v in lexical["answer"].items() if k != "fallback_steps"}}
    older["answer"]["fallbacks"] = ["verify: timeout; the evidence counted as insufficient for that round"]
    assert lexical["answer"]["fallback_steps"] == [] and diff_traces(lexical, lexical).fallbacks.same
    diff = diff_traces(lexical, fell_back)
    assert (diff.fallbacks.a, diff.fallbacks.b, diff.fallbacks.only_b) == ([], ["read"], ["read"])
    assert diff.identical  # what the runs found and answered is the same; only how they got there differs
    assert diff_traces(older, fell_back).fallbacks.a == ["verify"]
