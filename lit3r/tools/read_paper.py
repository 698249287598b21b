"""``read_paper``: one paper's title and its best pooled passages (or its opening passages), as quoted evidence."""

from __future__ import annotations

from collections.abc import Mapping

from lit3r.prompts.common import chunk_block, evidence_block, paper_block
from lit3r.tools.context import ToolContext

READ_CHUNKS_PER_PAPER = 3
"""Passages shown per paper."""


def read_paper(tools: ToolContext, paper_id: str, pool: Mapping[str, float]) -> str:
    """The paper inside ``<evidence>`` tags: its best pooled chunks with ids, locators and scores.

    Raises:
        ValueError: an unknown paper id.
    """
    paper = tools.index.papers.get(paper_id)
    if paper is None:
        raise ValueError(f"unknown paper id {paper_id!r}: use an id shown by search_chunks or expand_neighbors")
    chunks = tools.index.chunks_by_paper.get(paper_id, [])
    pooled = sorted((c for c in chunks if c.id in pool), key=lambda c: -pool[c.id])
    shown = (pooled or chunks)[:READ_CHUNKS_PER_PAPER]
    chars = tools.settings.retriever.verify_chunk_chars
    blocks = [
        chunk_block(c.id, c.text[:chars], type=c.type, locator=c.locator.describe(), score=pool.get(c.id))
        for c in shown
    ]
    note = "best pooled passages" if pooled else "no passage of this paper is in the pool: its opening passages"
    return evidence_block([paper_block(paper.id, paper.title, blocks, venue=paper.venue, year=paper.year, note=note)])
