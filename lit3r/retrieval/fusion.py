"""Pure ranking, fusion and pooling rules of the Lit3R retriever (seed §2.1.2–2.1.3).

Plain Python over plain types: ids are strings, a *ranking* is a sequence of ids
best first, and a *scored result* is a list of ``(id, score)`` pairs best first.
Nothing here touches an index, a model or LangGraph, so every rule of the seed
can be tested by hand.

Determinism: whenever two items score the same, the one that appeared first wins.
"First appearance" means the order in which the inputs are read: rankings in the
order given, each from its best position down (for a pool: its insertion order).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

__all__ = [
    "ab_fusion",
    "best_chunk_per_paper",
    "blend_rerank",
    "coupling_scores",
    "rank_coupled",
    "fuse_ranking_b",
    "merge_pool",
    "rank_papers_by_max",
    "round_robin",
    "rrf",
    "top_chunks_per_paper",
]


def _unique(ids: Iterable[str]) -> list[str]:
    """The ids in order, each kept at its first (best) position only."""
    return list(dict.fromkeys(ids))


def _sorted_desc(scores: Mapping[str, float]) -> list[tuple[str, float]]:
    """Pairs sorted by score, highest first; ties keep the mapping's insertion order (stable sort)."""
    return sorted(scores.items(), key=lambda item: -item[1])


def _check_limit(limit: int | None, name: str = "limit") -> None:
    if limit is not None and limit < 0:
        raise ValueError(f"{name} must be >= 0 or None, got {limit}")


def rrf(
    rankings: Sequence[Sequence[str]],
    k: int = 60,
    weights: Sequence[float] | None = None,
    limit: int | None = None,
) -> list[tuple[str, float]]:
    """Reciprocal rank fusion (Cormack et al., 2009), the fusion rule used throughout the seed.

    ``score(d) = sum_i w_i / (k + rank_i(d))`` over the rankings that contain ``d``, with
    1-based ranks; a ranking that lacks ``d`` contributes nothing. Weights default to 1 for
    every ranking (the seed's "equal-weight RRF").

    An id repeated inside one ranking counts once, at its first position; the repeat is
    dropped and the items after it move up (a ranking is treated as a list of unique ids).

    Args:
        rankings: The rankings to fuse, each best first.
        k: The RRF constant (60 for index and source fusion, 10 for A/B fusion).
        weights: One non-negative weight per ranking; ``None`` means all 1.
        limit: Keep only the first ``limit`` results; ``None`` keeps all.

    Returns:
        ``(id, fused score)`` pairs, highest first, ties by first appearance.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    _check_limit(limit)
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError(f"got {len(weights)} weights for {len(rankings)} rankings")
    if any(w < 0 for w in weights):
        raise ValueError(f"weights must be non-negative, got {list(weights)}")
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, item in enumerate(_unique(ranking), start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    fused = _sorted_desc(scores)
    return fused if limit is None else fused[:limit]


def best_chunk_per_paper(chunk_ranking: Sequence[tuple[str, str]]) -> list[str]:
    """The paper ranking of one index's chunk ranking (seed §2.1.2).

    "For each index output, we form a paper-level ranking by using the highest-ranked
    chunk to represent each paper": a paper takes the position of its best chunk.

    Args:
        chunk_ranking: ``(chunk_id, paper_id)`` pairs, best chunk first.

    Returns:
        Paper ids, each once, in the order of their highest-ranked chunk.
    """
    return _unique(paper_id for _chunk_id, paper_id in chunk_ranking)


def _reranker_ranks(candidates: Sequence[str], reranker_scores: Mapping[str, float]) -> dict[str, int]:
    """1-based rank of each candidate by reranker score, highest first.

    Ties, and candidates the reranker did not score (ranked after every scored one), keep
    their retrieval order.
    """
    scored = [c for c in candidates if c in reranker_scores]
    unscored = [c for c in candidates if c not in reranker_scores]
    by_score = sorted(scored, key=lambda c: -reranker_scores[c])  # stable: ties stay in retrieval order
    return {chunk: rank for rank, chunk in enumerate(by_score + unscored, start=1)}


def blend_rerank(
    retrieval_ranking: Sequence[str],
    reranker_scores: Mapping[str, float],
    k: int = 60,
    w_ret: float = 0.6,
    w_rr: float = 0.4,
    pinned: int = 20,
    keep: int = 20,
    max_candidates: int = 200,
    pin_bonus: float = 1.0,
) -> list[tuple[str, float]]:
    """The Lit3R chunk reranking of one subquery (seed §2.1.2).

    "We score up to 200 chunks of the fused [...] ranking [...] and rank them by
    s = 0.6/(k+r_ret) + 0.4/(k+r_rr) with k=60 [...]. The top 20 chunks of the retrieval
    ranking are pinned above all others [...] and the 20 highest-scoring chunks go to the pool."

    * Candidates are the first ``max_candidates`` distinct ids of ``retrieval_ranking``;
      ``r_ret`` is the 1-based position among them. Scores for other ids are ignored.
    * ``r_rr`` is the 1-based rank by reranker score (higher is better), ties by retrieval
      order. A candidate missing from ``reranker_scores`` ranks after every scored one.
    * ``s = w_ret/(k + r_ret) + w_rr/(k + r_rr)``.
    * The first ``pinned`` candidates (by retrieval rank) are pinned: they come before every
      other candidate and are ordered among themselves by ``s`` (ties by retrieval rank),
      exactly like the rest. So a pinned chunk the reranker puts last still precedes all
      unpinned chunks, but need not keep its retrieval position.

    Score carried by the returned pairs: the blended ``s``, plus ``pin_bonus`` for pinned
    chunks. The pool (:func:`merge_pool`) keeps this value, not the raw reranker score: the
    seed's "highest reranker score" is read as the score of this reranking step. ``s``
    depends only on ranks, so it is comparable across subqueries, whereas raw cross-encoder
    logits or ColBERT MaxSim sums shift with the query. ``pin_bonus`` must exceed the
    largest possible unpinned ``s``, ``(w_ret + w_rr)/(k + 1)``, so the pins survive the
    pool's max-merge and the paper ranking built from it (Ranking A). The relevance gate
    should use the raw best reranker score, not these values.

    Args:
        retrieval_ranking: Chunk ids of the fused (PRF-expanded) retrieval ranking, best first.
        reranker_scores: Raw reranker score per chunk id, higher is better.
        k: RRF-style constant of the blend.
        w_ret: Weight of the retrieval rank.
        w_rr: Weight of the reranker rank.
        pinned: How many top retrieval chunks are pinned (0 disables pinning).
        keep: How many chunks to return (the pool's share of this subquery).
        max_candidates: How many retrieval chunks are scored at most.
        pin_bonus: Added to a pinned chunk's ``s``.

    Returns:
        Up to ``keep`` ``(chunk_id, s or s + pin_bonus)`` pairs in final order.
    """
    _check_blend_args(k, w_ret, w_rr, pinned, keep, max_candidates, pin_bonus)
    candidates = _unique(retrieval_ranking)[:max_candidates]
    rr_rank = _reranker_ranks(candidates, reranker_scores)
    scored: dict[str, float] = {}
    for r_ret, chunk in enumerate(candidates, start=1):
        s = w_ret / (k + r_ret) + w_rr / (k + rr_rank[chunk])
        scored[chunk] = s + pin_bonus if r_ret <= pinned else s
    return _sorted_desc(scored)[:keep]


def _check_blend_args(
    k: int, w_ret: float, w_rr: float, pinned: int, keep: int, max_candidates: int, pin_bonus: float
) -> None:
    if k < 0 or w_ret < 0 or w_rr < 0:
        raise ValueError(f"k, w_ret and w_rr must be >= 0, got k={k}, w_ret={w_ret}, w_rr={w_rr}")
    if pinned < 0 or keep < 0 or max_candidates < 0:
        raise ValueError(f"pinned, keep, max_candidates must be >= 0, got {pinned}, {keep}, {max_candidates}")
    ceiling = (w_ret + w_rr) / (k + 1)
    if pinned and pin_bonus <= ceiling:
        raise ValueError(f"pin_bonus must exceed the largest unpinned score {ceiling:.6g}, got {pin_bonus}")


def merge_pool(pool: Mapping[str, float], new: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Add one subquery's reranked chunks to the shared pool (seed §2.1.2).

    "A chunk's score in the pool is the maximum of the scores it received, taken over every
    subquery that returned it. The number of subqueries that returned a chunk therefore plays
    no part": duplicates keep the maximum, nothing is summed or counted.

    Args:
        pool: The current pool, chunk id -> score. Not modified.
        new: ``(chunk_id, score)`` pairs, e.g. the output of :func:`blend_rerank`.

    Returns:
        A new dict: existing chunks first (in pool order), then new chunks in arrival order.
    """
    merged = dict(pool)
    for chunk, score in new:
        merged[chunk] = max(score, merged[chunk]) if chunk in merged else score
    return merged


def _paper(chunk: str, paper_of: Mapping[str, str]) -> str:
    try:
        return paper_of[chunk]
    except KeyError:
        raise KeyError(f"chunk {chunk!r} of the pool has no paper in paper_of") from None


def _chunks_by_paper(pool: Mapping[str, float], paper_of: Mapping[str, str]) -> dict[str, list[tuple[str, float]]]:
    """Pool chunks grouped by paper (papers and chunks in pool order)."""
    groups: dict[str, list[tuple[str, float]]] = {}
    for chunk, score in pool.items():
        groups.setdefault(_paper(chunk, paper_of), []).append((chunk, score))
    return groups


def rank_papers_by_max(pool: Mapping[str, float], paper_of: Mapping[str, str]) -> list[tuple[str, float]]:
    """Ranking A (seed §2.1.2): pool chunks grouped by paper, each paper scored by its best chunk.

    "We form Ranking A by grouping chunks in the shared pool by paper and assigning each
    paper the highest score among its chunks."

    Args:
        pool: Chunk id -> pool score.
        paper_of: Chunk id -> paper id; every pool chunk must be present (``KeyError`` otherwise).

    Returns:
        ``(paper_id, max chunk score)`` pairs, highest first; ties by the paper's first chunk in pool order.
    """
    groups = _chunks_by_paper(pool, paper_of)
    return _sorted_desc({paper: max(score for _c, score in chunks) for paper, chunks in groups.items()})


def top_chunks_per_paper(
    pool: Mapping[str, float], paper_of: Mapping[str, str], papers: int = 20, per_paper: int = 2
) -> list[tuple[str, list[str]]]:
    """What the verifier sees (seed §2.1.2): the top pool papers, each with its best chunks.

    "The top 20 papers in the shared pool, ranked according to the maximum score among their
    corresponding chunks. Each paper is represented by its two highest-scoring chunks."
    Truncating the chunk text to 1,800 characters is left to the caller.

    Returns:
        ``(paper_id, [chunk ids best first])`` for the first ``papers`` papers of
        :func:`rank_papers_by_max`; chunk ties keep pool order.
    """
    _check_limit(papers, "papers")
    _check_limit(per_paper, "per_paper")
    groups = _chunks_by_paper(pool, paper_of)
    ranked = rank_papers_by_max(pool, paper_of)[:papers]
    return [(paper, [c for c, _s in _sorted_desc(dict(groups[paper]))[:per_paper]]) for paper, _score in ranked]


def round_robin(lists: Sequence[Sequence[str]], exclude: Collection[str] = ()) -> list[str]:
    """Merge per-seed neighbour lists by round-robin rank (seed §2.1.3).

    "We take each seed paper's first unseen neighbor before considering any seed paper's
    second neighbor." Each round takes, from each list in turn, its first id that is neither
    already merged nor excluded. A list whose next entry was already taken therefore gives
    its next unseen one in the same round (``[x, y]`` and ``[x, z]`` merge to ``x, z, y``,
    not ``x, y, z``); an exhausted list drops out.

    Args:
        lists: One ranked neighbour list per seed, in seed order.
        exclude: Ids never emitted (e.g. the seeds themselves).

    Returns:
        The merged ids, each once.
    """
    skip = set(exclude)
    merged: dict[str, None] = {}
    cursors = [0] * len(lists)
    while any(cursor < len(lst) for cursor, lst in zip(cursors, lists, strict=True)):
        for i, lst in enumerate(lists):
            while cursors[i] < len(lst):
                item = lst[cursors[i]]
                cursors[i] += 1
                if item not in skip and item not in merged:
                    merged[item] = None
                    break
    return list(merged)


def coupling_scores(
    seed_refs: Collection[str],
    refs_by_paper: Mapping[str, Collection[str]],
    min_shared: int = 2,
    exclude: Collection[str] = (),
) -> list[tuple[str, float]]:
    """Bibliographic-coupling neighbours of one seed paper (Kessler, 1963; seed §2.1.3).

    "We compare the sets of cited paper identifiers using Jaccard similarity and require at
    least two shared references": a paper sharing fewer than ``min_shared`` cited ids is left
    out however high its Jaccard (a one-reference seed and a one-reference paper citing the
    same work have Jaccard 1.0 and still do not qualify).

    Args:
        seed_refs: Ids of the papers the seed cites.
        refs_by_paper: Paper id -> ids of the papers it cites.
        min_shared: Minimum number of shared cited ids (>= 1).
        exclude: Paper ids never returned; pass the seed itself here.

    Returns:
        ``(paper_id, jaccard)`` pairs sorted by Jaccard desc, then shared count desc, then id.
    """
    seed = set(seed_refs)
    shared = {paper: len(seed & set(refs)) for paper, refs in refs_by_paper.items()}
    sizes = {paper: len(set(refs)) for paper, refs in refs_by_paper.items()}
    return rank_coupled(len(seed), shared, sizes.__getitem__, min_shared=min_shared, exclude=exclude)


def rank_coupled(
    seed_size: int,
    shared: Mapping[str, int],
    size_of: Callable[[str], int],
    min_shared: int = 2,
    exclude: Collection[str] = (),
) -> list[tuple[str, float]]:
    """:func:`coupling_scores` from counts: ``shared`` maps a paper to how many of the seed's ``seed_size``
    references it cites, ``size_of`` gives a paper's reference count; Jaccard is then
    ``shared / (seed_size + size - shared)``. Same filter, scores and order as :func:`coupling_scores`."""
    if min_shared < 1:
        raise ValueError(f"min_shared must be >= 1, got {min_shared}")
    skip = set(exclude)
    found: list[tuple[str, float, int]] = []
    for paper, count in shared.items():
        if paper not in skip and count >= min_shared:
            found.append((paper, count / (seed_size + size_of(paper) - count), count))
    found.sort(key=lambda row: (-row[1], -row[2], row[0]))
    return [(paper, score) for paper, score, _count in found]


def fuse_ranking_b(
    seeds: Sequence[str],
    neighbours_by_source: Mapping[str, Sequence[Sequence[str]]],
    k: int = 60,
    limit: int = 100,
) -> list[str]:
    """Ranking B, paper-anchored (seed §2.1.3).

    "We merge their neighbor lists separately within each source by round-robin rank [...]
    then fuse the three source-specific lists using equal-weight RRF with k=60, retain the
    top 100 papers, and place the seed papers at the front of Ranking B."

    Seeds are excluded from every neighbour list, so they appear only at the front, in the
    given order without duplicates. They are not counted in ``limit``: the result holds the
    seeds plus up to ``limit`` neighbours. Sources fuse in mapping order (ties by source order).

    Args:
        seeds: Seed paper ids (top paper of Ranking A, then the verifier's evidence papers).
        neighbours_by_source: Source name (e.g. "specter2", "coupling", "bm25") -> one ranked
            neighbour list per seed.
        k: RRF constant for the source fusion.
        limit: How many fused neighbours to keep after the seeds.

    Returns:
        Paper ids: seeds first, then neighbours by fused score.
    """
    _check_limit(limit)
    front = _unique(seeds)
    merged = [round_robin(lists, exclude=front) for lists in neighbours_by_source.values()]
    return front + [paper for paper, _score in rrf(merged, k=k, limit=limit)]


def ab_fusion(a: Sequence[str], b: Sequence[str], k: int = 10, limit: int = 50) -> list[tuple[str, float]]:
    """A/B rank fusion (seed §2.1.3): equal-weight RRF with k=10 over Ranking A (full length) and B.

    A paper at position ``r`` in both rankings scores ``2/(k+r)`` against ``1/(k+1)`` for the
    top paper of A alone; at k=10 the former is strictly ahead iff ``r <= 11``, ties at
    ``r = 12`` (and then loses the tie, A's top appearing first), and is behind from ``r = 13``.

    Returns:
        The first ``limit`` ``(paper_id, fused score)`` pairs, the reader's candidates.
    """
    return rrf([a, b], k=k, limit=limit)
