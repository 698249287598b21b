"""Retrieval evaluation on QASPER: every configuration side by side, open-domain and within the question's paper.

Configurations:

* ``bm25``, ``dense``, ``hybrid``: chunk search (hybrid = RRF k=60 of the two), the QASPER seed's front end;
  papers ranked by their best chunk.
* ``hybrid_rerank``: the hybrid's top candidates reordered by the reranker's score.
* ``lit3r``: the full Lit3R retriever (subqueries, paper-level fusion, PRF, blended rerank, pool, Relate);
  chunks ranked by pool score, papers by the final A/B ranking.
* ``lit3r_no_prf``, ``lit3r_no_rerank``, ``lit3r_no_relate``: the same with one stage switched off.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lit3r.evals.metrics import QuestionResult, summarise
from lit3r.evals.qasper import QasperQuestion, evidence_chunks
from lit3r.index.corpus_index import CorpusIndex
from lit3r.retrieval.config import RetrieverSettings
from lit3r.retrieval.fusion import best_chunk_per_paper
from lit3r.retrieval.rerankers import Reranker
from lit3r.retrieval.retriever import Lit3RRetriever
from lit3r.retrieval.search import rank_chunks

CONFIGURATIONS = (
    "bm25",
    "dense",
    "hybrid",
    "hybrid_rerank",
    "lit3r",
    "lit3r_no_prf",
    "lit3r_no_rerank",
    "lit3r_no_relate",
)
ABLATIONS = {
    "lit3r": {},
    "lit3r_no_prf": {"prf": False},
    "lit3r_no_rerank": {"rerank": False},
    "lit3r_no_relate": {"relate": False},
}
DEPTH = 100


@dataclass(frozen=True)
class Retrieved:
    papers: list[str]
    chunks: list[str]
    stages: dict[str, float] | None = None
    """Milliseconds per retriever stage (Lit3R configurations only)."""


def stage_timings(events: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Milliseconds per stage of one Lit3R retrieval, summed over rounds and subqueries.

    Stages: ``decompose``, ``hyde``, the four parts of each subquery's retrieval (``sweep``,
    ``prf``, ``candidates``, ``rerank``), ``verify``, ``ranking_a``, ``relate`` (Ranking B) and
    ``fuse`` (A/B fusion).
    """
    totals: dict[str, float] = {}
    for event in events:
        if event["type"] == "retrieve":
            parts = event["data"].get("timings_ms", {})
        elif event["type"] == "rank":
            parts = {"ranking_a": event["duration_ms"]}
        elif event["type"] in ("decompose", "hyde", "verify", "relate", "fuse"):
            parts = {event["type"]: event["duration_ms"]}
        else:
            continue
        for stage, ms in parts.items():
            totals[stage] = round(totals.get(stage, 0.0) + ms, 3)
    return totals


Runner = Callable[[str, list[str] | None], Retrieved]


def make_runner(name: str, index: CorpusIndex, reranker: Reranker | None, settings: RetrieverSettings) -> Runner:
    """A function ``(question, allowed papers) -> Retrieved`` for one configuration."""
    if name in ("bm25", "dense", "hybrid"):
        return lambda question, allowed: _from_chunks(index, rank_chunks(index, question, name, DEPTH, allowed))
    if name == "hybrid_rerank":
        if reranker is None:
            raise ValueError("hybrid_rerank needs a reranker")
        return lambda question, allowed: _reranked(index, reranker, question, allowed, settings.rerank_candidates)
    if name in ABLATIONS:
        retriever = Lit3RRetriever(index, reranker, settings.model_copy(update=ABLATIONS[name]))

        def run(question: str, allowed: list[str] | None) -> Retrieved:
            result = retriever.retrieve(question, allowed_papers=allowed)
            chunks = [chunk_id for chunk_id, _ in result.pool]
            return Retrieved(result.final_papers, chunks, stage_timings(result.trace))

        return run
    raise ValueError(f"unknown configuration {name!r}; choose from {', '.join(CONFIGURATIONS)}")


def _from_chunks(index: CorpusIndex, ranked: Sequence[tuple[str, float]]) -> Retrieved:
    chunks = [chunk_id for chunk_id, _ in ranked]
    papers = best_chunk_per_paper([(c, index.chunk_by_id[c].paper_id) for c in chunks])
    return Retrieved(papers, chunks)


def _reranked(
    index: CorpusIndex, reranker: Reranker, question: str, allowed: list[str] | None, candidates: int
) -> Retrieved:
    ranked = rank_chunks(index, question, "hybrid", max(candidates, DEPTH), allowed)[:candidates]
    texts = [index.chunk_by_id[c].text for c, _ in ranked]
    scores = reranker.score(question, texts) if texts else []
    order = sorted(range(len(ranked)), key=lambda i: (-scores[i], i))
    return _from_chunks(index, [(ranked[i][0], scores[i]) for i in order])


def evaluate(
    index: CorpusIndex,
    questions: Sequence[QasperQuestion],
    configurations: Sequence[str],
    reranker: Reranker | None,
    settings: RetrieverSettings,
    on_question: Callable[[], None] | None = None,
) -> dict[str, dict[str, dict]]:
    """``{configuration: {"open_domain": metrics, "in_paper": metrics}}`` over questions with gold evidence."""
    gold = {q.id: evidence_chunks(q, index.chunks_by_paper.get(q.paper_id, [])) for q in questions}
    runners = {name: make_runner(name, index, reranker, settings) for name in configurations}
    results: dict[str, dict[str, list[QuestionResult]]] = {n: {"open_domain": [], "in_paper": []} for n in runners}
    for question in questions:
        for name, runner in runners.items():
            for setting, allowed in (("open_domain", None), ("in_paper", [question.paper_id])):
                start = time.perf_counter()
                retrieved = runner(question.text, allowed)
                latency = (time.perf_counter() - start) * 1000
                results[name][setting].append(
                    QuestionResult(
                        question.id,
                        retrieved.papers,
                        retrieved.chunks,
                        question.paper_id,
                        gold[question.id],
                        latency,
                        retrieved.stages,
                    )
                )
        if on_question:
            on_question()
    return {
        name: {setting: summarise(rs) for setting, rs in by_setting.items()} for name, by_setting in results.items()
    }
