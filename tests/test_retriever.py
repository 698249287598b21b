"""The retriever's rounds, stop rules, ablation switches, seeds and trace; the model-free plan and verdict."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from test_retrieve import ScriptedReranker, make_index, spy_calls

from lit3r.index.corpus_index import CorpusIndex
from lit3r.retrieval import fusion
from lit3r.retrieval.config import RetrieverSettings
from lit3r.retrieval.gate import GateThreshold
from lit3r.retrieval.planning import (
    Decomposer,
    GateVerifier,
    KeywordDecomposer,
    PaperEvidence,
    Verdict,
    Verifier,
    deterministic_subqueries,
    gate_verifier,
)
from lit3r.retrieval.retriever import HYDE_SKIPPED, Lit3RRetriever, RetrievalResult
from lit3r.retrieval.subquery import retrieve_subquery

LONG_QUESTION = "Which retrieval papers combine okapi lexical ranking with dense encoder embedding models?"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> CorpusIndex:
    return make_index(tmp_path_factory.mktemp("retriever") / "home")[0]


class ScriptedDecomposer:
    """Returns the scripted subqueries for each round (the last entry repeats); records every call."""

    name = "scripted"

    def __init__(self, rounds: list[list[str]]) -> None:
        self.rounds = rounds
        self.calls: list[tuple[str, list[str], str, int]] = []

    def decompose(self, question: str, previous: Sequence[str], missing: str, limit: int) -> list[str]:
        self.calls.append((question, list(previous), missing, limit))
        return self.rounds[min(len(self.calls), len(self.rounds)) - 1]


class ScriptedVerifier:
    """Returns the scripted verdicts in turn (the last repeats); records what it saw."""

    name = "scripted"

    def __init__(self, verdicts: list[Verdict]) -> None:
        self.verdicts = verdicts
        self.seen: list[tuple[list[PaperEvidence], float | None]] = []

    def verify(self, question: str, evidence: Sequence[PaperEvidence], best_score: float | None) -> Verdict:
        self.seen.append((list(evidence), best_score))
        return self.verdicts[min(len(self.seen), len(self.verdicts)) - 1]


class ScriptedHyde:
    name = "scripted-hyde"

    def __init__(self, passage: str) -> None:
        self.passage = passage
        self.asked: list[str] = []

    def write(self, query: str) -> str:
        self.asked.append(query)
        return self.passage


INSUFFICIENT = Verdict(sufficient=False, missing="the dense side")
SUFFICIENT = Verdict(sufficient=True)


def _retriever(index, rounds, verdicts, settings=None, reranker=None, **kwargs) -> Lit3RRetriever:
    decomposer, verifier = ScriptedDecomposer(rounds), ScriptedVerifier(verdicts)
    return Lit3RRetriever(index, reranker, settings or RetrieverSettings(), decomposer, verifier, **kwargs)


def test_doubles_satisfy_the_protocols() -> None:
    assert isinstance(ScriptedDecomposer([]), Decomposer) and isinstance(KeywordDecomposer(), Decomposer)
    assert isinstance(ScriptedVerifier([]), Verifier) and isinstance(GateVerifier(), Verifier)


def test_stops_when_verified_sufficient(index) -> None:
    retriever = _retriever(index, [["okapi lexical"], ["dense encoder"]], [SUFFICIENT])
    result = retriever.retrieve(LONG_QUESTION)
    assert result.rounds == 1 and result.stop_reason == "sufficient"
    assert len(retriever.decomposer.calls) == 1 and result.subqueries == [["okapi lexical"]]
    assert retriever.decomposer.calls[0] == (LONG_QUESTION, [], "", 4)


def test_stops_when_decomposition_gives_nothing_new(index) -> None:
    rounds = [["okapi lexical", "dense encoder"], ["Okapi  lexical", "dense encoder"]]
    retriever = _retriever(index, rounds, [INSUFFICIENT])
    result = retriever.retrieve(LONG_QUESTION)
    assert result.rounds == 1 and result.stop_reason == "no_new_subqueries"
    assert retriever.decomposer.calls[1][1:] == (["okapi lexical", "dense encoder"], "the dense side", 4)


def test_stops_after_three_rounds(index) -> None:
    retriever = _retriever(index, [["okapi"], ["dense"], ["fusion"], ["speech"]], [INSUFFICIENT])
    result = retriever.retrieve(LONG_QUESTION)
    assert result.rounds == 3 and result.stop_reason == "max_rounds"
    assert result.subqueries == [["okapi"], ["dense"], ["fusion"]] and len(result.verdicts) == 3
    assert len(retriever.decomposer.calls) == 3
    two = _retriever(index, [["okapi"], ["dense"], ["fusion"]], [INSUFFICIENT], RetrieverSettings(max_rounds=2))
    assert two.retrieve(LONG_QUESTION).rounds == 2


def test_round_limits_and_fallback_to_the_question(index) -> None:
    many = [f"query {i}" for i in range(6)]
    retriever = _retriever(index, [many, many + ["more"]], [INSUFFICIENT], RetrieverSettings(subqueries_later=1))
    result = retriever.retrieve(LONG_QUESTION)
    assert result.subqueries[0] == many[:4] and result.subqueries[1] == ["query 4"]  # later rounds: only new ones
    empty = _retriever(index, [[]], [SUFFICIENT]).retrieve(LONG_QUESTION)
    assert empty.subqueries == [[LONG_QUESTION]] and empty.rounds == 1


def test_pool_keeps_the_maximum_score_over_subqueries(index) -> None:
    settings = RetrieverSettings()
    reranker = ScriptedReranker(lambda _i, passage: float(len(passage) % 97))
    subqueries = ["reranker logit pairwise", "fusion reciprocal runs"]
    result = _retriever(index, [subqueries], [SUFFICIENT], settings, reranker).retrieve(LONG_QUESTION)
    singles = [retrieve_subquery(index, q, reranker, settings) for q in subqueries]
    expected: dict[str, float] = {}
    for single in singles:
        for chunk, score in single.pool:
            expected[chunk] = max(score, expected.get(chunk, float("-inf")))
    shared = set(dict(singles[0].pool)) & set(dict(singles[1].pool))
    assert shared and any(dict(singles[0].pool)[c] != dict(singles[1].pool)[c] for c in shared)
    assert dict(result.pool) == expected
    assert [s for _c, s in result.pool] == sorted(expected.values(), reverse=True)
    assert result.best_reranker_score == max(s.best_reranker_score for s in singles)
    paper_of = {c: index.chunk_by_id[c].paper_id for c in expected}
    assert result.ranking_a == fusion.rank_papers_by_max(dict(result.pool), paper_of)


def test_verifier_sees_top_papers_with_two_cut_chunks(index) -> None:
    verifier = ScriptedVerifier([SUFFICIENT])
    settings = RetrieverSettings(verify_papers=3, verify_chunk_chars=40)
    Lit3RRetriever(index, None, settings, ScriptedDecomposer([["okapi", "dense"]]), verifier).retrieve(LONG_QUESTION)
    [(evidence, best)] = verifier.seen
    assert best is None and len(evidence) == 3
    assert all(len(e.chunks) == 2 and all(len(c.text) <= 40 for c in e.chunks) for e in evidence)


def test_relate_off_final_is_ranking_a(index) -> None:
    result = _retriever(index, [["okapi lexical"]], [SUFFICIENT], RetrieverSettings(relate=False)).retrieve(
        LONG_QUESTION
    )
    assert result.final == result.ranking_a[:50] and result.ranking_b == []
    assert not any(e["type"] == "relate" for e in result.trace)


def test_relate_seeds_are_top_of_a_plus_named_papers(index) -> None:
    named = Verdict(sufficient=False, papers_with_evidence=["speech", "ghost"], missing="more")
    retriever = _retriever(index, [["okapi lexical"], ["fusion reciprocal"]], [named, SUFFICIENT])
    result = retriever.retrieve(LONG_QUESTION)
    top_a = result.ranking_a[0][0]
    assert top_a == "sparse"
    assert result.seeds == ["sparse", "speech"]  # unknown "ghost" dropped
    assert result.ranking_b[:2] == ["sparse", "speech"]
    assert result.final == fusion.ab_fusion([p for p, _s in result.ranking_a], result.ranking_b, k=10, limit=50)
    assert result.final_papers == [p for p, _s in result.final]
    assert result.final != result.ranking_a  # B adds papers A never pooled or reorders them


def test_prf_off_and_rerank_off_switch_their_stages_off(index, monkeypatch) -> None:
    calls = spy_calls(monkeypatch, index.bm25_papers, "search")
    reranker = ScriptedReranker()
    on = _retriever(index, [["okapi", "dense"]], [SUFFICIENT], RetrieverSettings(relate=False), reranker)
    assert on.retrieve(LONG_QUESTION).best_reranker_score is not None
    assert len(calls) == 4 and len(reranker.calls) == 2
    calls.clear()
    off = RetrieverSettings(relate=False, prf=False, rerank=False)
    result = _retriever(index, [["okapi", "dense"]], [SUFFICIENT], off, reranker).retrieve(LONG_QUESTION)
    assert len(calls) == 2 and len(reranker.calls) == 2  # no PRF sweep, no new reranker call
    assert result.best_reranker_score is None


def test_allowed_papers_restrict_the_whole_result(index) -> None:
    allowed = ["fusion", "rerank", "speech"]
    named = Verdict(sufficient=True, papers_with_evidence=["sparse", "rerank"])
    result = _retriever(index, [["okapi lexical dense"]], [named], reranker=ScriptedReranker()).retrieve(
        LONG_QUESTION, allowed_papers=allowed
    )
    assert {index.chunk_by_id[c].paper_id for c, _s in result.pool} <= set(allowed)
    assert set(result.ranking_b) <= set(allowed) and set(result.final_papers) <= set(allowed)
    assert "sparse" not in result.seeds


def test_hyde_note_without_a_model_and_passage_with_one(index, monkeypatch) -> None:
    short = _retriever(index, [["okapi lexical"]], [SUFFICIENT]).retrieve("okapi lexical")
    notes = [e for e in short.trace if e["type"] == "note" and e["name"] == "hyde"]
    assert [n["data"]["note"] for n in notes] == [HYDE_SKIPPED]
    long = _retriever(index, [[LONG_QUESTION]], [SUFFICIENT]).retrieve(LONG_QUESTION)
    assert not any(e["name"] == "hyde" for e in long.trace)
    seen: list[str] = []
    encode = index.encoder.encode_queries
    monkeypatch.setattr(index.encoder, "encode_queries", lambda texts: seen.extend(texts) or encode(texts))
    hyde = ScriptedHyde("image pixel convolution imagenet")
    result = _retriever(index, [["okapi lexical"]], [SUFFICIENT], hyde=hyde).retrieve("okapi lexical")
    assert hyde.asked == ["okapi lexical"] and seen[0] == "image pixel convolution imagenet"
    retrieve = next(e for e in result.trace if e["type"] == "retrieve")
    assert retrieve["data"]["sweeps"]["original"]["dense_query"] == "image pixel convolution imagenet"


def test_trace_events_are_plain_records(index) -> None:
    result = _retriever(index, [["okapi"], ["dense"]], [INSUFFICIENT, SUFFICIENT]).retrieve(LONG_QUESTION)
    assert all(set(e) == {"type", "name", "round", "duration_ms", "data"} for e in result.trace)
    kinds = [(e["type"], e["round"]) for e in result.trace if e["type"] != "note"]
    per_round = [(step, n) for n in (1, 2) for step in ("decompose", "retrieve", "verify")]
    assert kinds == [*per_round, ("rank", None), ("relate", None), ("fuse", None)]
    retrieve = next(e for e in result.trace if e["type"] == "retrieve")
    assert {"sweeps", "papers", "candidates", "pool"} <= set(retrieve["data"])
    json.dumps(result.trace)  # plain data, ready for a trace writer
    assert RetrievalResult.model_validate_json(result.model_dump_json()) == result


def test_default_retriever_is_model_free_and_runs_one_round(index) -> None:
    result = Lit3RRetriever(index).retrieve(LONG_QUESTION)
    assert result.subqueries == [deterministic_subqueries(LONG_QUESTION)]
    assert result.rounds == 1 and result.stop_reason == "sufficient"
    assert result.final_papers and result.best_reranker_score is None


def test_gate_verifier_with_a_threshold_stops_when_keywords_run_out(index) -> None:
    reranker = ScriptedReranker(lambda _i, _p: 0.1)
    retriever = Lit3RRetriever(index, reranker, verifier=GateVerifier(0.5))
    result = retriever.retrieve(LONG_QUESTION)
    assert result.rounds == 1 and result.stop_reason == "no_new_subqueries"
    assert not result.verdicts[0].sufficient and "relevance gate" in result.verdicts[0].missing


def test_deterministic_subqueries() -> None:
    assert deterministic_subqueries("How does BERT compare with ELMo on SQuAD?") == [
        "How does BERT compare with ELMo on SQuAD?",
        "BERT",
        "ELMo",
        "SQuAD",
    ]
    question = 'Which dataset is "Penn Treebank" style parsing evaluated on?'
    assert deterministic_subqueries(question) == [question, "Penn Treebank dataset style parsing evaluated"]
    question = "Which papers use bibliographic coupling for citation recommendation?"
    assert deterministic_subqueries(question) == [question, "bibliographic coupling citation recommendation"]
    assert deterministic_subqueries("GPT-4 and Llama on MMLU with chain prompting", limit=2) == [
        "GPT-4 and Llama on MMLU with chain prompting",
        "GPT-4 chain prompting",
    ]
    assert deterministic_subqueries("bm25") == ["bm25"]
    assert deterministic_subqueries("   ") == []


def test_gate_verifier_passes_iff_score_reaches_threshold() -> None:
    assert gate_verifier(0.5, 0.5).sufficient and not gate_verifier(0.49, 0.5).sufficient
    assert gate_verifier(None, None).sufficient  # uncalibrated gate
    missing = gate_verifier(None, GateThreshold.fixed(0.2))
    assert not missing.sufficient and "nothing was reranked" in missing.missing
    assert gate_verifier(0.9, 0.5).papers_with_evidence == []
