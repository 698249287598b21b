"""The Lit3R retriever end to end (seed §2.1): rounds of decompose → retrieve → verify, then Relate.

:class:`Lit3RRetriever` runs up to ``max_rounds`` rounds. Each round asks the decomposer for
new subqueries (round 1: the question alone if it gives none), retrieves every subquery
(:func:`lit3r.retrieval.subquery.retrieve_subquery`), merges their chunks into the shared pool
(max score per chunk) and asks the verifier for a verdict on the pool's top papers. Rounds
stop when the verdict is sufficient, when decomposition gives nothing new, or at the limit.
Ranking A is the pool by paper (max chunk score); Ranking B expands from the top paper of A
plus every paper a verifier named; the A/B fusion gives the final papers.

Every step is recorded as a trace event ``{type, name, round, duration_ms, data}``.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import Any, Literal

from pydantic import BaseModel, Field

from lit3r.index.corpus_index import CorpusIndex
from lit3r.retrieval import fusion
from lit3r.retrieval.config import RetrieverSettings
from lit3r.retrieval.planning import (
    Decomposer,
    GateVerifier,
    HydeWriter,
    KeywordDecomposer,
    Verdict,
    Verifier,
    verification_evidence,
)
from lit3r.retrieval.relate import final_ranking, ranking_b
from lit3r.retrieval.rerankers import Reranker
from lit3r.retrieval.subquery import retrieve_subquery

StopReason = Literal["sufficient", "no_new_subqueries", "max_rounds"]
HYDE_SKIPPED = "HyDE skipped: no language model"


class RetrievalResult(BaseModel):
    """Everything the retriever found for one question, with its trace."""

    question: str
    pool: list[tuple[str, float]] = Field(description="Shared pool: (chunk id, max score), best first.")
    ranked_chunks: dict[str, list[str]] = Field(
        description="Pool chunk ids per paper, best first; papers in Ranking A order."
    )
    ranking_a: list[tuple[str, float]] = Field(description="Pool papers by their best chunk score.")
    ranking_b: list[str] = Field(description="Seeds first, then fused neighbours; empty when Relate is off.")
    seeds: list[str] = Field(description="Ranking B seeds: top paper of A, then papers verifiers named.")
    final: list[tuple[str, float]] = Field(description="A/B fusion (or Ranking A when Relate is off), top papers.")
    best_reranker_score: float | None = Field(description="Best raw reranker score over all subqueries (the gate).")
    rounds: int = Field(description="Rounds that retrieved at least one subquery.")
    subqueries: list[list[str]] = Field(description="Subqueries retrieved, per round.")
    verdicts: list[Verdict] = Field(description="The verifier's verdict per round.")
    stop_reason: StopReason
    trace: list[dict[str, Any]] = Field(description="Events {type, name, round, duration_ms, data}, in order.")

    @property
    def final_papers(self) -> list[str]:
        """The final paper ids, best first (what the reader gets)."""
        return [paper for paper, _score in self.final]


class Trace:
    """Collects trace events; :meth:`step` times a block, :meth:`note` records an instant remark."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    @contextmanager
    def step(self, type_: str, name: str, round_: int | None) -> Iterator[dict[str, Any]]:
        """Time the block and record an event whose ``data`` is the yielded dict."""
        data: dict[str, Any] = {}
        start = time.perf_counter()
        yield data
        elapsed = round((time.perf_counter() - start) * 1000, 3)
        self.events.append({"type": type_, "name": name, "round": round_, "duration_ms": elapsed, "data": data})

    def note(self, name: str, round_: int | None, **data: Any) -> None:
        """Record a zero-duration note."""
        self.events.append({"type": "note", "name": name, "round": round_, "duration_ms": 0.0, "data": data})


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


class _Run:
    """Mutable state of one :meth:`Lit3RRetriever.retrieve` call."""

    def __init__(self, question: str, allowed_papers: list[str] | None) -> None:
        self.question = question
        self.allowed = allowed_papers
        self.pool: dict[str, float] = {}
        self.best: float | None = None
        self.rounds: list[list[str]] = []
        self.verdicts: list[Verdict] = []
        self.named: list[str] = []
        self.missing = ""
        self.trace = Trace()

    @property
    def issued(self) -> list[str]:
        return [q for round_ in self.rounds for q in round_]


class Lit3RRetriever:
    """Question-anchored rounds (Ranking A), paper-anchored expansion (Ranking B), A/B fusion.

    Args:
        index: The corpus index.
        reranker: Chunk reranker; ``None`` keeps retrieval order (as does ``settings.rerank=False``).
        settings: Retriever settings (seed defaults).
        decomposer: Subquery generator; default :class:`~lit3r.retrieval.planning.KeywordDecomposer`.
        verifier: Evidence verifier; default :class:`~lit3r.retrieval.planning.GateVerifier` without a
            threshold (always sufficient, so one round).
        hyde: Writes HyDE passages for short subqueries; ``None`` skips HyDE with a trace note.
    """

    def __init__(
        self,
        index: CorpusIndex,
        reranker: Reranker | None = None,
        settings: RetrieverSettings | None = None,
        decomposer: Decomposer | None = None,
        verifier: Verifier | None = None,
        hyde: HydeWriter | None = None,
    ) -> None:
        self.index = index
        self.reranker = reranker
        self.settings = settings or RetrieverSettings()
        self.decomposer = decomposer or KeywordDecomposer()
        self.verifier = verifier or GateVerifier()
        self.hyde = hyde

    def retrieve(self, question: str, allowed_papers: Collection[str] | None = None) -> RetrievalResult:
        """Run the rounds, then Ranking A, Ranking B and the A/B fusion for ``question``."""
        question = question.strip()
        if not question:
            raise ValueError("the question is empty")
        run = _Run(question, None if allowed_papers is None else list(dict.fromkeys(allowed_papers)))
        stop = self._rounds(run)
        return self._rank(run, stop)

    def _rounds(self, run: _Run) -> StopReason:
        """Decompose, retrieve and verify until sufficient, nothing new, or ``max_rounds``."""
        for round_ in range(1, self.settings.max_rounds + 1):
            subqueries = self._decompose(run, round_)
            if not subqueries:
                run.trace.note("stop", round_, reason="no_new_subqueries")
                return "no_new_subqueries"
            run.rounds.append(subqueries)
            for subquery in subqueries:
                self._retrieve(run, subquery, round_)
            verdict = self._verify(run, round_)
            if verdict.sufficient:
                run.trace.note("stop", round_, reason="sufficient")
                return "sufficient"
            run.missing = verdict.missing
        run.trace.note("stop", self.settings.max_rounds, reason="max_rounds")
        return "max_rounds"

    def _decompose(self, run: _Run, round_: int) -> list[str]:
        """New subqueries for this round (case/space-insensitive dedup against every earlier one)."""
        first = round_ == 1
        limit = self.settings.subqueries_first if first else self.settings.subqueries_later
        with run.trace.step("decompose", self.decomposer.name, round_) as data:
            proposed = self.decomposer.decompose(run.question, run.issued, run.missing, limit)
            seen = {_normal(q) for q in run.issued}
            new: list[str] = []
            for subquery in (" ".join(q.split()) for q in proposed):
                if subquery and _normal(subquery) not in seen:
                    seen.add(_normal(subquery))
                    new.append(subquery)
            new = new[:limit]
            if first and not new:
                new = [run.question]
                data["fallback"] = "decomposition gave nothing: the question itself"
            data.update(previous=run.issued, missing=run.missing, proposed=list(proposed), subqueries=new)
        return new

    def _dense_query(self, run: _Run, subquery: str, round_: int) -> str | None:
        """A HyDE passage for a subquery shorter than ``hyde_min_words`` words, when a writer is set."""
        if len(subquery.split()) >= self.settings.hyde_min_words:
            return None
        if self.hyde is None:
            run.trace.note("hyde", round_, subquery=subquery, note=HYDE_SKIPPED)
            return None
        with run.trace.step("hyde", self.hyde.name, round_) as data:
            passage = self.hyde.write(subquery).strip()
            data.update(subquery=subquery, passage=passage)
        return passage or None

    def _retrieve(self, run: _Run, subquery: str, round_: int) -> None:
        """Retrieve one subquery and merge its chunks into the pool (max score per chunk)."""
        dense_query = self._dense_query(run, subquery, round_)
        with run.trace.step("retrieve", "retrieve_subquery", round_) as data:
            result = retrieve_subquery(self.index, subquery, self.reranker, self.settings, run.allowed, dense_query)
            run.pool = fusion.merge_pool(run.pool, result.pool)
            data.update(result.trace)
        if result.best_reranker_score is not None:
            run.best = max(result.best_reranker_score, run.best if run.best is not None else float("-inf"))

    def _verify(self, run: _Run, round_: int) -> Verdict:
        """Ask the verifier about the pool's top papers; remember the papers it names."""
        with run.trace.step("verify", self.verifier.name, round_) as data:
            evidence = verification_evidence(self.index, run.pool, self.settings)
            verdict = self.verifier.verify(run.question, evidence, run.best)
            data.update(
                evidence={e.paper_id: [c.chunk_id for c in e.chunks] for e in evidence},
                best_score=run.best,
                verdict=verdict.model_dump(),
            )
        run.verdicts.append(verdict)
        allowed = None if run.allowed is None else set(run.allowed)
        for paper in verdict.papers_with_evidence:
            if paper in self.index.papers and (allowed is None or paper in allowed) and paper not in run.named:
                run.named.append(paper)
        return verdict

    def _rank(self, run: _Run, stop: StopReason) -> RetrievalResult:
        """Ranking A from the pool, Ranking B from the seeds, and their fusion."""
        paper_of = {chunk: self.index.chunk_by_id[chunk].paper_id for chunk in run.pool}
        with run.trace.step("rank", "ranking_a", None) as data:
            ranking_a = fusion.rank_papers_by_max(run.pool, paper_of)
            data["ranking"] = [[p, s] for p, s in ranking_a]
        ids_a = [paper for paper, _score in ranking_a]
        seeds = list(dict.fromkeys(ids_a[:1] + run.named))
        ranking_b_ids: list[str] = []
        if self.settings.relate and seeds:
            with run.trace.step("relate", "ranking_b", None) as data:
                found = ranking_b(self.index, seeds, self.settings, run.allowed)
                ranking_b_ids, seeds = found.papers, found.seeds
                data.update(seeds=seeds, neighbours=found.neighbours, ranking=ranking_b_ids)
            with run.trace.step("fuse", "ab_fusion", None) as data:
                final = final_ranking(ids_a, ranking_b_ids, self.settings)
                data["ranking"] = [[p, s] for p, s in final]
        else:
            final = ranking_a[: self.settings.final_papers]
            reason = "Relate off" if not self.settings.relate else "no seeds (empty pool)"
            run.trace.note("relate", None, note=f"{reason}: final ranking is Ranking A", seeds=seeds)
        grouped = fusion.top_chunks_per_paper(run.pool, paper_of, papers=len(ranking_a), per_paper=len(run.pool))
        return RetrievalResult(
            question=run.question,
            pool=sorted(run.pool.items(), key=lambda item: -item[1]),
            ranked_chunks=dict(grouped),
            ranking_a=ranking_a,
            ranking_b=ranking_b_ids,
            seeds=seeds,
            final=final,
            best_reranker_score=run.best,
            rounds=len(run.rounds),
            subqueries=run.rounds,
            verdicts=run.verdicts,
            stop_reason=stop,
            trace=run.trace.events,
        )
