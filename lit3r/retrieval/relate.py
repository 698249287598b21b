"""Paper-anchored expansion (seed §2.1.3): Ranking B from seed papers, and the A/B fusion.

Per seed, three neighbour lists, each best first and without the seed itself:

* ``paper_vectors``: papers whose title-abstract vector (SPECTER2 proximity, or the chunk
  embedder) is closest to the seed's own stored vector;
* ``coupling``: bibliographic coupling, Jaccard over cited corpus papers, at least two shared;
* ``bm25``: paper-level BM25 queried with the first 1,200 characters of the seed's indexed
  text, passed unchanged.

:func:`fusion.fuse_ranking_b` merges each source across seeds by round robin, fuses the three by
RRF (k=60), keeps 100 and puts the seeds first; :func:`final_ranking` is the A/B fusion.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from pydantic import BaseModel, Field

from lit3r.index.corpus_index import CorpusIndex
from lit3r.retrieval import fusion
from lit3r.settings.retrieval import RetrieverSettings

SOURCES = ("paper_vectors", "coupling", "bm25")
"""The three neighbour sources, in fusion order."""


class RankingB(BaseModel):
    """Ranking B and the neighbour lists it was fused from (for the trace)."""

    papers: list[str] = Field(description="Seeds first, then up to ranking_b_limit fused neighbours.")
    seeds: list[str] = Field(description="The seed papers, in order.")
    neighbours: dict[str, list[list[str]]] = Field(
        default_factory=dict, description="Source name -> one neighbour list per seed (seed order)."
    )


def _allowed_set(allowed_papers: Collection[str] | None) -> set[str] | None:
    return None if allowed_papers is None else set(allowed_papers)


def vector_neighbours(
    index: CorpusIndex, seed: str, depth: int, allowed_papers: Collection[str] | None = None
) -> list[str]:
    """Papers nearest to the seed's stored paper vector, best first (the seed itself left out)."""
    if seed not in index.papers:
        return []
    try:
        vector = index.paper_vectors.vectors_for([seed])[0]
    except KeyError:
        return []
    hits = index.paper_vectors.search(vector, depth + 1, allowed=_allowed_set(allowed_papers))
    return [paper for paper, _score in hits if paper != seed][:depth]


def coupling_neighbours(
    index: CorpusIndex,
    seed: str,
    min_shared: int = 2,
    allowed_papers: Collection[str] | None = None,
) -> list[str]:
    """Bibliographically coupled papers of ``seed`` (Jaccard, at least ``min_shared`` shared refs), best first.

    The rule of :func:`~lit3r.retrieval.fusion.coupling_scores` (same scores, same order), computed from the
    graph's cited-by lists: only papers that cite one of the seed's references are counted, and no paper's
    reference set is copied (scoring every paper of the graph took 157 ms a seed at 36,584 synthetic papers:
    docs/BENCHMARKS.md, "Scale").
    """
    graph = index.citations
    allowed = _allowed_set(allowed_papers)
    shared = {p: n for p, n in graph.co_citing(seed).items() if allowed is None or p in allowed}
    found = fusion.rank_coupled(
        graph.reference_count(seed), shared, graph.reference_count, min_shared=min_shared, exclude=[seed]
    )
    return [paper for paper, _score in found]


def bm25_neighbours(
    index: CorpusIndex, seed: str, chars: int, depth: int, allowed_papers: Collection[str] | None = None
) -> list[str]:
    """Paper BM25 hits for the first ``chars`` characters of the seed's indexed text (unchanged), seed left out."""
    query = index.paper_text(seed)[:chars]
    if not query.strip():
        return []
    hits = index.bm25_papers.search(query, depth + 1, allowed=_allowed_set(allowed_papers))
    return [paper for paper, _score in hits if paper != seed][:depth]


def seed_neighbours(
    index: CorpusIndex,
    seeds: Sequence[str],
    settings: RetrieverSettings,
    allowed_papers: Collection[str] | None = None,
) -> dict[str, list[list[str]]]:
    """Source name -> one neighbour list per seed (seed order), for the three sources."""
    depth = settings.relate_depth
    out: dict[str, list[list[str]]] = {name: [] for name in SOURCES}
    for seed in seeds:
        out["paper_vectors"].append(vector_neighbours(index, seed, depth, allowed_papers))
        out["coupling"].append(coupling_neighbours(index, seed, settings.coupling_min_shared, allowed_papers)[:depth])
        out["bm25"].append(bm25_neighbours(index, seed, settings.relate_seed_chars, depth, allowed_papers))
    return out


def ranking_b(
    index: CorpusIndex,
    seeds: Sequence[str],
    settings: RetrieverSettings,
    allowed_papers: Collection[str] | None = None,
) -> RankingB:
    """Ranking B: seeds first, then neighbours merged per source by round robin and fused by RRF.

    Seeds unknown to the index are dropped (a verifier may name a paper that does not exist).
    """
    known = [s for s in dict.fromkeys(seeds) if s in index.papers]
    if not known:
        return RankingB(papers=[], seeds=[], neighbours={name: [] for name in SOURCES})
    neighbours = seed_neighbours(index, known, settings, allowed_papers)
    papers = fusion.fuse_ranking_b(known, neighbours, k=settings.rrf_k, limit=settings.ranking_b_limit)
    return RankingB(papers=papers, seeds=known, neighbours=neighbours)


def final_ranking(
    a: Sequence[str], b: Sequence[str], settings: RetrieverSettings | None = None
) -> list[tuple[str, float]]:
    """A/B fusion: equal-weight RRF (k=10) of Ranking A at full length and Ranking B, top 50."""
    settings = settings or RetrieverSettings()
    return fusion.ab_fusion(a, b, k=settings.ab_k, limit=settings.final_papers)
