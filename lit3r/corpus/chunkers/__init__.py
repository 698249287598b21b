"""Chunkers: turn a :class:`~lit3r.models.ParsedPaper` into :class:`~lit3r.models.Chunk` objects.

Two kinds, picked by ``ChunkerSettings.kind``:

* ``structural`` (:mod:`.structural`): Lit3R's paragraph/page/heading chunks of five types,
  capped at ``max_chars``, one title-abstract chunk per paper carrying the ``[VENUE YEAR]`` tag.
* ``qasper`` (:mod:`.qasper`): the hybrid-RAG seed's overlapping word windows per section,
  each prefixed ``Title: <title>. Section: <heading>.``

Both number chunks ``<paper id>::c0000`` upwards in reading order and give every chunk a
locator whose character span indexes ``parsed.canonical_text()``.
"""

from __future__ import annotations

from lit3r.corpus.chunkers.qasper import chunk_qasper
from lit3r.corpus.chunkers.structural import chunk_structural
from lit3r.models import Chunk, ParsedPaper
from lit3r.settings import ChunkerSettings

__all__ = ["chunk_paper", "chunk_qasper", "chunk_structural"]


def chunk_paper(parsed: ParsedPaper, settings: ChunkerSettings) -> list[Chunk]:
    """Chunk one paper with the chunker ``settings.kind`` names."""
    if settings.kind == "structural":
        return chunk_structural(parsed, max_chars=settings.max_chars)
    if settings.kind == "qasper":
        return chunk_qasper(parsed, tokens=settings.tokens, overlap=settings.overlap)
    raise ValueError(f"unknown chunker kind {settings.kind!r}; expected 'structural' or 'qasper'")
