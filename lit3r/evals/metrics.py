"""Retrieval metrics: recall at k of papers and of gold evidence, reciprocal rank, medians."""

from __future__ import annotations

import statistics
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

KS = (1, 5, 10, 20, 50)


def hit_at(ranking: Sequence[str], gold: Collection[str], k: int) -> float:
    """1.0 when any gold id is among the first ``k`` of ``ranking``."""
    return 1.0 if any(item in gold for item in ranking[:k]) else 0.0


def reciprocal_rank(ranking: Sequence[str], gold: Collection[str], depth: int = 50) -> float:
    """1/rank of the first gold id within ``depth``, else 0."""
    for rank, item in enumerate(ranking[:depth], start=1):
        if item in gold:
            return 1.0 / rank
    return 0.0


@dataclass
class QuestionResult:
    """What one configuration retrieved for one question, and how long it took."""

    question_id: str
    papers: list[str]
    chunks: list[str]
    gold_paper: str
    gold_chunks: set[str]
    latency_ms: float
    stages: dict[str, float] | None = None
    """Milliseconds per pipeline stage, where the configuration reports them."""


def summarise(results: Iterable[QuestionResult], ks: Sequence[int] = KS) -> dict[str, Any]:
    """Averages over questions: ``paper_recall@k``, ``evidence_recall@k``, ``mrr`` (evidence), ``paper_mrr``."""
    results = list(results)
    if not results:
        return {"questions": 0}
    report: dict[str, Any] = {"questions": len(results)}
    for k in ks:
        report[f"paper_recall@{k}"] = _mean(hit_at(r.papers, {r.gold_paper}, k) for r in results)
    for k in ks:
        report[f"evidence_recall@{k}"] = _mean(hit_at(r.chunks, r.gold_chunks, k) for r in results)
    report["mrr"] = _mean(reciprocal_rank(r.chunks, r.gold_chunks, max(ks)) for r in results)
    report["paper_mrr"] = _mean(reciprocal_rank(r.papers, {r.gold_paper}, max(ks)) for r in results)
    report["latency_ms_median"] = round(statistics.median(r.latency_ms for r in results), 1)
    staged = [r.stages for r in results if r.stages is not None]
    if staged:
        names = dict.fromkeys(name for stages in staged for name in stages)
        report["stage_latency_ms_median"] = {
            name: round(statistics.median(stages.get(name, 0.0) for stages in staged), 1) for name in names
        }
    return report


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return round(sum(values) / len(values), 4)
