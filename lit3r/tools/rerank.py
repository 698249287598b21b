"""``rerank``: re-score the passages already in the pool against a sharper query; retrieves nothing new."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from lit3r.retrieval import fusion
from lit3r.tools.context import ToolContext


@dataclass(frozen=True)
class RerankResult:
    """The pool's new scores (a chunk keeps the higher of its old and new score when merged) and the best raw score."""

    query: str
    pool: list[tuple[str, float]]
    raised: list[str]
    best_reranker_score: float | None


def rerank(tools: ToolContext, query: str, pool: Mapping[str, float]) -> RerankResult:
    """Each pooled passage gets the Lit3R blend for ``query``, 0.6/(k + pool rank) + 0.4/(k + reranker rank), plus
    the pin bonus if its search had pinned it. Without a reranker (or with reranking off) nothing changes.

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
    weights = {"k": settings.blend_k, "w_ret": settings.w_ret, "w_rr": settings.w_rr}
    blended = fusion.blend_rerank(order, scores, **weights, pinned=0, keep=len(order), max_candidates=len(order))
    # an unpinned blend never reaches pin_bonus (blend_rerank checks it), so old >= bonus means "pinned"
    rescored = [(c, s + (settings.pin_bonus if pool[c] >= settings.pin_bonus else 0.0)) for c, s in blended]
    raised = [c for c, s in rescored if s > pool[c]]
    tools.recorder.add("ranking", "rerank", {"query": query, "reranker": list(scores.items()), "pool": rescored})
    return RerankResult(query, rescored, raised, max(scores.values()))
