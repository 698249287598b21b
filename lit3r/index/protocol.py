"""What retrieval, the tools and the surfaces read from a corpus index: the :class:`Index` protocol.

Three classes implement it: :class:`~lit3r.index.corpus_index.CorpusIndex` (one generation on this machine, each
part loaded on first use), :class:`~lit3r.index.distributed.sharded_index.ShardedCorpusIndex` (the same, with the
chunk BM25 and dense index searched through Ray shard actors) and the tests' in-memory index. Code that searches
or reads a corpus asks for an ``Index``; only what opens or builds one needs a concrete class.

:func:`missing_members` checks an object against the protocol without touching its parts: ``isinstance`` with a
runtime-checkable protocol would read each attribute on Python 3.11, which loads a lazy index (and its encoder
model) whole.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Protocol

import numpy as np

from lit3r.index.citations import CitationGraph
from lit3r.index.encoders import Encoder
from lit3r.models import Chunk, Paper
from lit3r.settings import Settings

Hit = tuple[str, float]


class TextSearch(Protocol):
    """A lexical index (BM25 over chunks or papers): ``(id, score)`` hits, best first."""

    def search(self, query: str, k: int, allowed: set[str] | None = None) -> list[Hit]: ...

    def search_many(self, queries: list[str], k: int, allowed: set[str] | None = None) -> list[list[Hit]]: ...


class VectorSearch(Protocol):
    """A dense index (chunk or paper vectors): ``(id, cosine)`` hits, best first, and the stored vectors."""

    def search(self, query_vec: np.ndarray, k: int, allowed: set[str] | None = None) -> list[Hit]: ...

    def search_many(self, query_vecs: np.ndarray, k: int, allowed: set[str] | None = None) -> list[list[Hit]]: ...

    def vectors_for(self, ids: list[str]) -> np.ndarray: ...


class Index(Protocol):
    """A corpus index: its records, its search parts, its query encoders, and :meth:`load_all`.

    Attributes:
        settings: The settings the index was opened with.
        papers: Paper records by id.
        chunks: Every chunk, in generation order.
        chunk_by_id: Chunks by id.
        chunks_by_paper: Each paper's chunks, in order.
        bm25_chunks: BM25 over chunk texts.
        bm25_papers: BM25 over each paper's indexed text (:meth:`paper_text`).
        dense: The dense chunk index.
        paper_vectors: One vector per paper (title and abstract).
        citations: The citation graph (references resolved to corpus papers).
        encoder: Encodes queries for ``dense``.
        paper_encoder: Encodes texts for ``paper_vectors``.
    """

    settings: Settings
    papers: Mapping[str, Paper]
    chunks: list[Chunk]
    chunk_by_id: Mapping[str, Chunk]
    chunks_by_paper: Mapping[str, list[Chunk]]
    bm25_chunks: TextSearch
    bm25_papers: TextSearch
    dense: VectorSearch
    paper_vectors: VectorSearch
    citations: CitationGraph
    encoder: Encoder
    paper_encoder: Encoder

    def paper_text(self, paper_id: str) -> str:
        """The paper's indexed text: its chunks in order (what paper-level BM25 indexes)."""
        ...

    def load_all(self) -> None:
        """Load every part into memory now (an index that loads lazily must not read its folder later)."""
        ...


def protocol_members(protocol: type = Index) -> list[str]:
    """The names a protocol asks for: its annotated attributes and its methods."""
    methods = [name for name, value in vars(protocol).items() if callable(value) and not name.startswith("_")]
    return sorted({*getattr(protocol, "__annotations__", {}), *methods})


def missing_members(candidate: object, protocol: type = Index) -> list[str]:
    """The protocol's members ``candidate`` lacks (a method that is not callable counts as missing), found with
    :func:`inspect.getattr_static`, so a lazy part is not loaded by the check."""
    missing = []
    for name in protocol_members(protocol):
        try:
            value = inspect.getattr_static(candidate, name)
        except AttributeError:
            missing.append(name)
            continue
        if callable(vars(protocol).get(name)) and not callable(value):
            missing.append(name)
    return missing
