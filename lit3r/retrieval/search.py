"""Chunk search over one corpus index: BM25, dense, or both fused by reciprocal rank fusion."""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal

from pydantic import BaseModel, Field

from lit3r.index.corpus_index import CorpusIndex
from lit3r.models import ChunkType, Locator
from lit3r.retrieval.fusion import rrf

SearchMode = Literal["bm25", "dense", "hybrid"]


class Hit(BaseModel):
    """One ranked chunk."""

    rank: int = Field(description="1-based rank in the result list.")
    chunk_id: str
    paper_id: str
    score: float = Field(description="BM25 score, cosine similarity, or RRF score for hybrid.")
    type: ChunkType
    locator: Locator
    text: str


def rank_chunks(
    index: CorpusIndex,
    query: str,
    mode: SearchMode = "hybrid",
    depth: int = 100,
    paper_ids: Collection[str] | None = None,
    rrf_k: int = 60,
) -> list[tuple[str, float]]:
    """Ranked ``(chunk_id, score)`` for ``query``; ``paper_ids`` restricts the search to those papers."""
    allowed = allowed_chunks(index, paper_ids)
    if mode == "bm25":
        return index.bm25_chunks.search(query, depth, allowed=allowed)
    if mode == "dense":
        vector = index.encoder.encode_queries([query])[0]
        return index.dense.search(vector, depth, allowed=allowed)
    if mode == "hybrid":
        lexical = index.bm25_chunks.search(query, depth, allowed=allowed)
        vector = index.encoder.encode_queries([query])[0]
        semantic = index.dense.search(vector, depth, allowed=allowed)
        return rrf([[i for i, _ in lexical], [i for i, _ in semantic]], k=rrf_k, limit=depth)
    raise ValueError(f"unknown search mode {mode!r}; use bm25, dense or hybrid")


def search_index(
    index: CorpusIndex,
    query: str,
    mode: SearchMode = "hybrid",
    k: int = 10,
    paper_ids: Collection[str] | None = None,
) -> list[Hit]:
    """The top ``k`` chunks for ``query`` with their locators and text."""
    if not query.strip():
        raise ValueError("the query is empty")
    ranked = rank_chunks(index, query, mode, depth=max(k, 100), paper_ids=paper_ids)[:k]
    hits = []
    for rank, (chunk_id, score) in enumerate(ranked, start=1):
        chunk = index.chunk_by_id[chunk_id]
        hits.append(
            Hit(
                rank=rank,
                chunk_id=chunk.id,
                paper_id=chunk.paper_id,
                score=float(score),
                type=chunk.type,
                locator=chunk.locator,
                text=chunk.text,
            )
        )
    return hits


def allowed_chunks(index: CorpusIndex, paper_ids: Collection[str] | None) -> set[str] | None:
    """Ids of the chunks of ``paper_ids`` (``None``: no restriction); ``ValueError`` names unknown paper ids."""
    if paper_ids is None:
        return None
    unknown = [p for p in paper_ids if p not in index.papers]
    if unknown:
        raise ValueError(f"unknown paper id(s): {', '.join(sorted(unknown)[:5])}")
    return {c.id for pid in paper_ids for c in index.chunks_by_paper.get(pid, [])}
