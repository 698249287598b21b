"""``rerank``: re-order the passages already in the pool for a sharper query; retrieves nothing new.

The pool's scores are on the scale of the fusion that put them there: rank blends near 1/60 (plus the pin bonus)
under ``fusion="blend"``, probabilities under ``fusion="learned"``. A re-score on a scale of its own could not be
merged with them (a blend of about 0.016 never beats a probability by the pool's maximum rule), so ``rerank``
decides a new *order* and expresses it in the pool's own scores: the passages are ranked by the blend of their
pool rank and their reranker rank for the query, ``w_ret/(blend_k + pool rank) + w_rr/(blend_k + reranker rank)``,
and the pool's scores, best first, are handed out again in that order. Under the blend fusion a pinned passage
stays pinned: the pinned and the unpinned passages are re-ordered each among themselves. The update replaces the
scores it re-assigned (:data:`RESCORED`, read by :func:`lit3r.agent.state.reduce_pool`), so a passage the query
favours moves up and the passages it passes move down.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from lit3r.retrieval import fusion
from lit3r.settings.retrieval import RetrieverSettings
from lit3r.tools.context import ToolContext

RESCORED = "rescored"
"""The key of a pool update that replaces scores: ``{RESCORED: {chunk id: [score it replaces, new score]}}``, the
chunks in their new order (see :func:`lit3r.agent.state.reduce_pool`)."""


@dataclass(frozen=True)
class RerankResult:
    """The pooled passages in their new order with their new scores, the ones that moved up, the best raw score."""

    query: str
    pool: list[tuple[str, float]]
    raised: list[str]
    best_reranker_score: float | None
    previous: dict[str, float] = field(default_factory=dict)
    """The scores the new ones replace."""

    @property
    def pool_update(self) -> dict[str, dict[str, list[float]]]:
        """The pool update that replaces the re-scored passages' scores (empty when nothing was re-scored)."""
        if not self.pool:
            return {RESCORED: {}}
        return {RESCORED: {c: [self.previous[c], s] for c, s in self.pool}}


def tiers(order: Sequence[str], pool: Mapping[str, float], settings: RetrieverSettings) -> list[list[str]]:
    """The groups re-ordered each among themselves: the pinned passages, then the rest, under the blend fusion
    (a pinned passage's score is at least ``pin_bonus``); the whole pool under the learned fusion (nothing pinned)."""
    if settings.fusion != "blend":
        return [list(order)]
    pinned = [c for c in order if pool[c] >= settings.pin_bonus]
    rest = [c for c in order if pool[c] < settings.pin_bonus]
    return [group for group in (pinned, rest) if group]


def reassigned(
    order: Sequence[str], pool: Mapping[str, float], raw: Mapping[str, float], settings: RetrieverSettings
) -> list[tuple[str, float]]:
    """Each tier ranked by the blend of pool rank and reranker rank, given the tier's own scores best first."""
    out: list[tuple[str, float]] = []
    for group in tiers(order, pool, settings):
        blended = fusion.blend_rerank(
            group, {c: raw[c] for c in group}, k=settings.blend_k, w_ret=settings.w_ret, w_rr=settings.w_rr,
            pinned=0, keep=len(group), max_candidates=len(group),
        )  # fmt: skip
        scores = sorted((pool[c] for c in group), reverse=True)
        out.extend((c, score) for (c, _blend), score in zip(blended, scores, strict=True))
    return out


def rerank(tools: ToolContext, query: str, pool: Mapping[str, float]) -> RerankResult:
    """The pool re-ordered for ``query`` (see the module docstring). Without a reranker (or with reranking off)
    nothing changes.

    Raises:
        ValueError: the pool is empty.
    """
    if not pool:
        raise ValueError("the pool is empty: call search_chunks first")
    settings = tools.settings.retriever
    if tools.reranker is None or not settings.rerank:
        return RerankResult(query, [], [], None)
    order = [c for c, _s in sorted(pool.items(), key=lambda item: -item[1])]
    raw = tools.reranker.score(query, [tools.index.chunk_by_id[c].text for c in order])
    scores = dict(zip(order, map(float, raw), strict=True))
    rescored = reassigned(order, pool, scores, settings)
    before = {c: rank for rank, c in enumerate(order)}
    raised = [c for rank, (c, _s) in enumerate(rescored) if rank < before[c]]
    tools.recorder.add("ranking", "rerank", {"query": query, "reranker": list(scores.items()), "pool": rescored})
    return RerankResult(query, rescored, raised, max(scores.values()), previous=dict(pool))
