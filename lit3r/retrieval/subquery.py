"""Question-anchored retrieval of one subquery (seed §2.1.2): hybrid search, paper fusion, PRF, reranking.

One call of :func:`retrieve_subquery` runs, for one subquery:

1. A *sweep*: chunk BM25, paper BM25 and the dense chunk index, each turned into a paper
   ranking (a chunk index ranks a paper by its best chunk, :func:`fusion.best_chunk_per_paper`),
   fused by equal-weight RRF (k=60).
2. Pseudo-relevance feedback, once: the subquery plus the first 512 characters of the top
   paper's title-abstract is swept again, and the original and expanded paper rankings are
   fused with equal weights.
3. Candidate chunks for reranking, up to 200, ordered by the fused paper ranking (see
   :func:`candidate_chunks` for the rule and why).
4. :func:`fusion.blend_rerank`: the blended score with the top 20 retrieval chunks pinned;
   20 chunks go to the pool. Without a reranker the same rule runs with no reranker scores,
   so the pool keeps the retrieval order with rank-based scores on the same scale.

Everything is a pure function of the index and its arguments; nothing here knows about
rounds, LLMs or LangGraph.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from lit3r.index.corpus_index import CorpusIndex
from lit3r.retrieval import fusion, learned
from lit3r.retrieval.rerankers import Reranker
from lit3r.retrieval.search import allowed_chunks, rank_chunks
from lit3r.settings.retrieval import CandidateOrder, RetrieverSettings

Scored = list[tuple[str, float]]
CHUNK_INDEXES = ("bm25_chunks", "dense")
"""The chunk-level indexes; their hits are also the reranking candidates."""
INDEXES = ("bm25_chunks", "bm25_papers", "dense")
"""The three indexes of a sweep, in fusion order."""


class SubqueryResult(BaseModel):
    """What one subquery adds: its pool entries, its paper ranking, and the trace of every ranking."""

    subquery: str = Field(description="The subquery as retrieved (before PRF).")
    pool: list[tuple[str, float]] = Field(description="(chunk id, blended score) going to the pool, best first.")
    papers: list[tuple[str, float]] = Field(description="Fused paper ranking (original + PRF), best first.")
    best_reranker_score: float | None = Field(
        description="Highest raw reranker score over the scored candidates (the gate's input); None unreranked."
    )
    trace: dict[str, Any] = Field(default_factory=dict, description="Every ranking with ids and scores.")


@dataclass
class Sweep:
    """One pass of a query over the three indexes."""

    query: str
    dense_query: str
    dense_vector: np.ndarray | None = None
    """The dense query's vector (the learned fusion reads candidates' cosines with it)."""
    chunk_hits: dict[str, Scored] = field(default_factory=dict)
    """Raw hits of the chunk-level indexes, ``(chunk id, score)`` best first."""
    paper_rankings: dict[str, Scored] = field(default_factory=dict)
    """Per index, ``(paper id, score of its best hit)`` best first."""
    fused: Scored = field(default_factory=list)
    """Equal-weight RRF of the three paper rankings."""

    def trace(self) -> dict[str, Any]:
        """The sweep as plain data for the trace."""
        return {
            "query": self.query,
            "dense_query": self.dense_query,
            "chunks": {name: _pairs(hits) for name, hits in self.chunk_hits.items()},
            "papers": {name: _pairs(ranking) for name, ranking in self.paper_rankings.items()},
            "fused": _pairs(self.fused),
        }


def _pairs(scored: Scored) -> list[list[Any]]:
    return [[item, float(score)] for item, score in scored]


def _papers_of_chunks(index: CorpusIndex, hits: Scored) -> Scored:
    """A chunk index's paper ranking: each paper at its best chunk's position, with that chunk's score."""
    first: dict[str, float] = {}
    pairs = []
    for chunk_id, score in hits:
        paper = index.chunk_by_id[chunk_id].paper_id
        first.setdefault(paper, score)
        pairs.append((chunk_id, paper))
    return [(paper, first[paper]) for paper in fusion.best_chunk_per_paper(pairs)]


def fuse_papers(rankings: Sequence[Sequence[str]], k: int = 60) -> Scored:
    """Equal-weight reciprocal rank fusion of paper rankings (seed: RRF, k=60)."""
    return fusion.rrf(rankings, k=k)


def sweep(
    index: CorpusIndex,
    query: str,
    depth: int,
    allowed_papers: Collection[str] | None = None,
    dense_query: str | None = None,
    rrf_k: int = 60,
) -> Sweep:
    """Run ``query`` over the three indexes and fuse their paper rankings.

    Args:
        index: The corpus index.
        query: Text for both BM25 indexes (and the dense index unless ``dense_query`` is given).
        depth: Results taken from each index.
        allowed_papers: Restrict every index to these papers (``ValueError`` for unknown ids).
        dense_query: Text for the dense index instead of ``query`` (HyDE).
        rrf_k: RRF constant of the fusion.
    """
    dense_text = dense_query or query
    result = Sweep(query=query, dense_query=dense_text)
    result.chunk_hits["bm25_chunks"] = rank_chunks(index, query, "bm25", depth, allowed_papers)
    result.dense_vector = np.asarray(index.encoder.encode_queries([dense_text])[0], dtype=np.float32)
    within = allowed_chunks(index, allowed_papers)
    result.chunk_hits["dense"] = index.dense.search(result.dense_vector, depth, allowed=within)
    allowed = None if allowed_papers is None else set(allowed_papers)
    rankings = {
        "bm25_chunks": _papers_of_chunks(index, result.chunk_hits["bm25_chunks"]),
        "bm25_papers": index.bm25_papers.search(query, depth, allowed=allowed),
        "dense": _papers_of_chunks(index, result.chunk_hits["dense"]),
    }
    result.paper_rankings = {name: rankings[name] for name in INDEXES}
    result.fused = fuse_papers([[p for p, _s in rankings[name]] for name in INDEXES], k=rrf_k)
    return result


def title_abstract_text(index: CorpusIndex, paper_id: str) -> str:
    """The paper's title-abstract chunk text (all such chunks joined, in order, for window chunkers).

    Falls back to the paper's indexed text when it has no title-abstract chunk.
    """
    chunks = index.chunks_by_paper.get(paper_id, [])
    parts = [c.text for c in chunks if c.type == "title_abstract"]
    return "\n\n".join(parts) if parts else index.paper_text(paper_id)


def prf_query(index: CorpusIndex, query: str, top_paper: str, chars: int = 512) -> str:
    """The PRF-expanded query: ``query``, a space, then the first ``chars`` characters of the
    top paper's title-abstract (seed: "append the first 512 characters of the title and abstract")."""
    return f"{query} {title_abstract_text(index, top_paper)[:chars]}"


def candidate_chunks(
    paper_ranking: Sequence[str],
    chunks_of: Mapping[str, Sequence[str]],
    order: CandidateOrder = "round_robin",
    limit: int = 200,
) -> list[str]:
    """The retrieval ranking of chunks that the reranker scores, derived from the fused paper ranking.

    The seed reranks "up to 200 chunks of the fused and PRF-expanded ranking", a *paper*
    ranking, so the chunk order must follow the papers' fused ranks. Within a paper, chunks
    keep the order of ``chunks_of`` (the caller passes each paper's chunks by their own RRF
    rank over the chunk-level hits).

    * ``"round_robin"`` (default): each paper's best chunk, papers in fused order; then each
      paper's second chunk; and so on. Reason: the top 20 retrieval chunks are pinned and
      the pool takes 20, so the pinned chunks *are* the subquery's pool share. Grouping all
      of the top paper's chunks first would fill the pool with one or two papers and Ranking
      A (pool papers by max chunk) would lose the fused paper ranking's recall; round robin
      makes the 20 pinned chunks the best chunk of each of the top 20 fused papers.
    * ``"grouped"``: every chunk of the first paper, then of the second, and so on.

    Papers without chunks are skipped; at most ``limit`` chunks are returned.
    """
    lists = [list(chunks_of.get(paper, ())) for paper in paper_ranking]
    if order == "grouped":
        flat = [chunk for chunks in lists for chunk in chunks]
    elif order == "round_robin":
        flat = [lst[depth] for depth in range(max(map(len, lists), default=0)) for lst in lists if depth < len(lst)]
    else:
        raise ValueError(f"unknown candidate order {order!r}; use 'round_robin' or 'grouped'")
    return list(dict.fromkeys(flat))[:limit]


def _chunks_by_paper(index: CorpusIndex, chunk_ranking: Sequence[str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for chunk_id in chunk_ranking:
        grouped.setdefault(index.chunk_by_id[chunk_id].paper_id, []).append(chunk_id)
    return grouped


def _representatives(index: CorpusIndex, query: str, papers: Sequence[str]) -> dict[str, list[str]]:
    """A chunk for each paper that only paper-level BM25 found: its best chunk-BM25 match, else chunk 0.

    One BM25 search restricted to these papers' chunks; a paper none of whose chunks matches
    (its match spans chunks) is represented by its first chunk (the title-abstract).
    """
    allowed = {c.id for paper in papers for c in index.chunks_by_paper.get(paper, [])}
    best: dict[str, list[str]] = {}
    for chunk_id, _score in index.bm25_chunks.search(query, len(allowed), allowed=allowed) if allowed else []:
        best.setdefault(index.chunk_by_id[chunk_id].paper_id, [chunk_id])
    for paper in papers:
        chunks = index.chunks_by_paper.get(paper, [])
        if paper not in best and chunks:
            best[paper] = [chunks[0].id]
    return best


def _retrieval_order(
    index: CorpusIndex, subquery: str, sweeps: Sequence[Sweep], papers: Sequence[str], settings: RetrieverSettings
) -> list[str]:
    """Candidate chunk ids: chunk-level hits of every sweep, RRF-fused per chunk, laid out by paper rank."""
    chunk_rankings = [[c for c, _s in s.chunk_hits[name]] for s in sweeps for name in CHUNK_INDEXES]
    fused_chunks = [c for c, _s in fusion.rrf(chunk_rankings, k=settings.rrf_k)]
    chunks_of = _chunks_by_paper(index, fused_chunks)
    window = papers[: settings.rerank_candidates]
    missing = [p for p in window if p not in chunks_of]
    if missing:
        chunks_of.update(_representatives(index, subquery, missing))
    if settings.candidate_order == "fused":
        extra = [c for p in missing for c in chunks_of.get(p, [])]
        ranking = list(dict.fromkeys([*fused_chunks, *extra]))
        paper_of = {c: index.chunk_by_id[c].paper_id for c in ranking}
        return chunk_and_paper_fusion(papers, ranking, paper_of, settings.rrf_k, settings.rerank_candidates)
    return candidate_chunks(papers, chunks_of, settings.candidate_order, settings.rerank_candidates)


def chunk_and_paper_fusion(
    paper_ranking: Sequence[str],
    chunk_ranking: Sequence[str],
    paper_of: Mapping[str, str],
    k: int = 60,
    limit: int = 200,
) -> list[str]:
    """Chunks ranked by RRF of their own rank and their paper's rank: 1/(k + r_chunk) + 1/(k + r_paper).

    ``r_chunk`` is the chunk's rank in the fused chunk-level ranking, ``r_paper`` its paper's
    rank in the fused paper ranking. A chunk is credited both for matching the query itself and
    for lying in a paper that matches as a whole (paper BM25, PRF); neither signal alone decides,
    so the candidates are neither all from one paper nor one chunk from each paper. A paper
    outside ``paper_ranking`` adds no paper term. Ties keep the chunk ranking's order.
    """
    paper_rank = {paper: rank for rank, paper in enumerate(paper_ranking, start=1)}
    scores = {}
    for rank, chunk in enumerate(chunk_ranking, start=1):
        paper = paper_of[chunk]
        scores[chunk] = 1.0 / (k + rank) + (1.0 / (k + paper_rank[paper]) if paper in paper_rank else 0.0)
    return sorted(scores, key=lambda c: -scores[c])[:limit]


def _reranker_scores(
    index: CorpusIndex, subquery: str, candidates: list[str], reranker: Reranker | None
) -> dict[str, float] | None:
    """The reranker's raw score of each candidate; ``None`` without a reranker or candidates."""
    if reranker is None or not candidates:
        return None
    scores = reranker.score(subquery, [index.chunk_by_id[c].text for c in candidates])
    if len(scores) != len(candidates):
        raise ValueError(f"reranker {reranker.name!r} returned {len(scores)} scores for {len(candidates)} chunks")
    return {c: float(s) for c, s in zip(candidates, scores, strict=True)}


@lru_cache(maxsize=4)
def _model(path: str | None) -> learned.FusionModel:
    return learned.load_model(path)


def features_of(
    index: CorpusIndex,
    subquery: str,
    original: Sweep,
    papers: Scored,
    candidates: Sequence[str],
    raw: Mapping[str, float] | None,
) -> np.ndarray:
    """The learned fusion's feature matrix of ``candidates`` (:func:`lit3r.retrieval.learned.candidate_features`),
    from the subquery's own sweep, the fused paper ranking and the reranker's scores."""
    chunks = [index.chunk_by_id[c] for c in candidates]
    vectors = index.dense.vectors_for(list(candidates))
    cosines = vectors @ original.dense_vector if original.dense_vector is not None else np.zeros(len(chunks))
    return learned.candidate_features(
        candidates,
        chunk_text={c.id: c.text for c in chunks},
        chunk_paper={c.id: c.paper_id for c in chunks},
        chunk_type={c.id: c.type for c in chunks},
        chunk_section={c.id: c.locator.section for c in chunks},
        bm25_hits=original.chunk_hits["bm25_chunks"],
        dense_hits=original.chunk_hits["dense"],
        dense_cosines=[float(x) for x in cosines],
        paper_ranking=[p for p, _s in papers],
        paper_bm25=[p for p, _s in original.paper_rankings["bm25_papers"]],
        reranker_scores=raw,
        query=subquery,
    )


def _blend(candidates: list[str], raw: Mapping[str, float] | None, settings: RetrieverSettings) -> Scored:
    """Blend retrieval and reranker ranks (pins and pool share per settings); no reranker: ranks only."""
    return fusion.blend_rerank(
        candidates,
        raw or {},
        k=settings.blend_k,
        w_ret=settings.w_ret,
        w_rr=settings.w_rr,
        pinned=settings.pinned,
        keep=settings.pool_per_subquery,
        max_candidates=settings.rerank_candidates,
        pin_bonus=settings.pin_bonus,
    )


def _prf_sweep(
    index: CorpusIndex,
    subquery: str,
    top_paper: str,
    settings: RetrieverSettings,
    allowed_papers: Collection[str] | None,
    dense_query: str | None,
) -> Sweep:
    """The PRF sweep: the subquery (and the HyDE dense query, if any) with the top paper's opening appended."""
    expanded = prf_query(index, subquery, top_paper, settings.prf_chars)
    expanded_dense = prf_query(index, dense_query, top_paper, settings.prf_chars) if dense_query else None
    return sweep(index, expanded, settings.depth, allowed_papers, expanded_dense, settings.rrf_k)


def prf_skip_reason(original: Sweep, settings: RetrieverSettings, allowed_papers: Collection[str] | None) -> str | None:
    """Why the PRF sweep does not run for this sweep (``None``: it runs).

    * PRF off, or nothing found.
    * ``prf_when="agree"`` (with ``"always"``, the seed's rule, PRF runs in every other case):

      * one allowed paper: the feedback paper is that paper, and the paper ranking PRF would change has one
        entry; its expanded chunk hits only pull the abstract's look-alikes up;
      * the three indexes do not all rank the same paper first: the feedback paper is only the fusion's guess,
        and expanding with a wrong paper's opening pulls that paper and its neighbours up.
    """
    if not settings.prf:
        return "prf off"
    if not original.fused:
        return "nothing found"
    if settings.prf_when == "agree":
        if allowed_papers is not None and len(set(allowed_papers)) == 1:
            return "one allowed paper"
        tops = {name: ranking[0][0] if ranking else None for name, ranking in original.paper_rankings.items()}
        if len(set(tops.values())) != 1:
            return "the indexes disagree on the top paper"
    return None


class StageClock:
    """Milliseconds spent in each named stage, measured lap by lap."""

    def __init__(self) -> None:
        self.laps: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.laps[stage] = round((now - self._last) * 1000, 3)
        self._last = now


@dataclass
class Gathered:
    """One subquery's retrieval before its candidates are ordered for the pool."""

    original: Sweep
    papers: Scored
    """The fused paper ranking (with the PRF sweep's, when it ran)."""
    candidates: list[str]
    raw: dict[str, float] | None
    """The reranker's raw score per candidate; None unreranked."""
    trace: dict[str, Any]
    clock: StageClock


def gather(
    index: CorpusIndex,
    subquery: str,
    reranker: Reranker | None,
    settings: RetrieverSettings,
    allowed_papers: Collection[str] | None = None,
    dense_query: str | None = None,
) -> Gathered:
    """Sweep, PRF sweep (:func:`prf_skip_reason`), paper fusion, candidates and their reranker scores."""
    if not subquery.strip():
        raise ValueError("the subquery is empty")
    clock = StageClock()
    original = sweep(index, subquery, settings.depth, allowed_papers, dense_query, settings.rrf_k)
    clock.lap("sweep")
    sweeps, papers = [original], original.fused
    trace: dict[str, Any] = {"subquery": subquery, "sweeps": {"original": original.trace()}, "prf": None}
    skip = prf_skip_reason(original, settings, allowed_papers)
    if skip is None:
        top = original.fused[0][0]
        expanded = _prf_sweep(index, subquery, top, settings, allowed_papers, dense_query)
        if settings.prf_chunks:
            sweeps.append(expanded)
        rankings = [[p for p, _s in original.fused], [p for p, _s in expanded.fused]]
        papers = fusion.rrf(rankings, k=settings.rrf_k, weights=[1.0, settings.prf_weight])
        trace["sweeps"]["expanded"] = expanded.trace()
        trace["prf"] = {"top_paper": top, "appended": expanded.query[len(subquery) + 1 :]}
        clock.lap("prf")
    elif settings.prf:
        trace["prf_skipped"] = skip
    candidates = _retrieval_order(index, subquery, sweeps, [p for p, _s in papers], settings)
    clock.lap("candidates")
    raw = _reranker_scores(index, subquery, candidates, reranker if settings.rerank else None)
    trace["reranker_name"] = getattr(reranker, "name", None) if settings.rerank else None
    return Gathered(original, papers, candidates, raw, trace, clock)


def retrieve_subquery(
    index: CorpusIndex,
    subquery: str,
    reranker: Reranker | None,
    settings: RetrieverSettings,
    allowed_papers: Collection[str] | None = None,
    dense_query: str | None = None,
) -> SubqueryResult:
    """Retrieve one subquery: sweep, PRF sweep, fuse, rerank; return its pool share and trace.

    Args:
        index: The corpus index.
        subquery: The subquery text (BM25 query, reranker query, PRF base).
        reranker: Scores (query, passage) pairs; ``None`` (or ``settings.rerank`` off) keeps
            the retrieval order with rank-based scores, and the reranker is never called.
        settings: Depths, PRF, pinning, blend and fusion parameters.
        allowed_papers: Restrict everything to these papers (in-paper evaluation).
        dense_query: Text for the dense index instead of ``subquery`` (a HyDE passage). The
            PRF sweep's dense query is this text plus the same appended title-abstract.
    """
    found = gather(index, subquery, reranker, settings, allowed_papers, dense_query)
    candidates, raw = found.candidates, found.raw
    if settings.fusion == "learned":
        rows = features_of(index, subquery, found.original, found.papers, candidates, raw)
        paper_of = {c: index.chunk_by_id[c].paper_id for c in candidates}
        head = [p for p, _s in found.papers[: settings.pool_papers]]
        model = _model(settings.fusion_model)
        pool = learned.learned_order(candidates, rows, model, settings.pool_per_subquery, paper_of, head)
    else:
        pool = _blend(candidates, raw, settings)
    found.clock.lap("rerank")
    best = max(raw.values()) if raw else None
    trace = found.trace
    trace.update(
        timings_ms=found.clock.laps,
        papers=_pairs(found.papers),
        candidates=candidates,
        reranker=None if raw is None else _pairs(list(raw.items())),
        pool=_pairs(pool),
        best_reranker_score=best,
    )
    return SubqueryResult(subquery=subquery, pool=pool, papers=found.papers, best_reranker_score=best, trace=trace)
