"""A built index generation, opened lazily: each part loads on first use."""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from lit3r.index.bm25 import BM25Index
from lit3r.index.citations import CitationGraph
from lit3r.index.dense import DenseIndex
from lit3r.index.encoders import Encoder, QueryCache, load_encoder, load_paper_encoder
from lit3r.index.layout import IndexLayout
from lit3r.models import Chunk, Paper
from lit3r.settings import IndexSettings, Settings


class IndexNotBuiltError(RuntimeError):
    """Raised when a command needs an index that has not been built for these settings."""


def write_jsonl(path: Path, items: Iterable[BaseModel]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for item in items:
            handle.write(item.model_dump_json(exclude_none=True) + "\n")


SEARCH_PARTS = ("bm25_chunks", "bm25_papers", "dense", "paper_vectors", "citations")
"""The lazily loaded search parts of a generation folder (:class:`IndexParts`)."""
RECORD_PARTS = ("manifest", "papers", "chunks", "chunk_by_id", "chunks_by_paper")
"""The lazily loaded records of a generation (:class:`CorpusIndex`)."""


class IndexParts:
    """The search parts of one generation folder (BM25 over chunks and papers, the dense chunk index, paper
    vectors, the citation graph), each loaded on first use. ``dense_settings`` gives the dense index its
    search-time knobs (None: the recorded kind with the default knobs)."""

    def __init__(self, folder: Path, dense_settings: IndexSettings | None = None) -> None:
        self.folder = folder
        self.dense_settings = dense_settings

    @cached_property
    def bm25_chunks(self) -> BM25Index:
        return BM25Index.load(self.folder / "bm25_chunks")

    @cached_property
    def bm25_papers(self) -> BM25Index:
        return BM25Index.load(self.folder / "bm25_papers")

    @cached_property
    def dense(self) -> DenseIndex:
        return DenseIndex.load(self.folder / "dense", settings=self.dense_settings)

    @cached_property
    def paper_vectors(self) -> DenseIndex:
        return DenseIndex.load(self.folder / "paper_vectors")

    @cached_property
    def citations(self) -> CitationGraph:
        return CitationGraph.load(self.folder / "citations")

    def load_all(self) -> None:
        """Read every part from the folder now (a later use reads nothing)."""
        for part in SEARCH_PARTS:
            getattr(self, part)


class CorpusIndex(IndexParts):
    """Every index of one generation; nothing is read from disk until it is needed (or :meth:`load_all`).

    It implements :class:`lit3r.index.protocol.Index`.
    """

    def __init__(self, folder: Path, settings: Settings) -> None:
        super().__init__(folder, settings.index)
        self.settings = settings

    @classmethod
    def open(cls, settings: Settings) -> CorpusIndex:
        """The current generation for ``settings`` from this machine's files, or a clear error saying how to
        build it (:func:`lit3r.index.opening.open_index` also searches it through a Ray cluster's shards)."""
        layout = IndexLayout(settings)
        current = layout.current()
        if current is None:
            raise IndexNotBuiltError(
                f"no index for these settings (key {layout.key}) under {settings.home}: run `lit3r index` first"
            )
        return cls(current, settings)

    @cached_property
    def manifest(self) -> dict[str, Any]:
        return json.loads((self.folder / "manifest.json").read_text(encoding="utf-8"))

    @cached_property
    def papers(self) -> dict[str, Paper]:
        with (self.folder / "papers.jsonl").open(encoding="utf-8") as handle:
            return {p.id: p for p in (Paper.model_validate_json(line) for line in handle)}

    @cached_property
    def chunks(self) -> list[Chunk]:
        with (self.folder / "chunks.jsonl").open(encoding="utf-8") as handle:
            return [Chunk.model_validate_json(line) for line in handle]

    @cached_property
    def chunk_by_id(self) -> dict[str, Chunk]:
        return {c.id: c for c in self.chunks}

    @cached_property
    def chunks_by_paper(self) -> dict[str, list[Chunk]]:
        grouped: dict[str, list[Chunk]] = {}
        for chunk in self.chunks:
            grouped.setdefault(chunk.paper_id, []).append(chunk)
        return grouped

    def load_all(self) -> None:
        """Read the records and every search part now: the build removes a generation's folder once a newer one is
        published, so an index that is kept open (a server's) must not read it lazily later."""
        for part in RECORD_PARTS:
            getattr(self, part)
        super().load_all()

    def paper_text(self, paper_id: str) -> str:
        """The paper's indexed text: its chunks in order (what paper-level BM25 indexes)."""
        return "\n\n".join(c.text for c in self.chunks_by_paper.get(paper_id, []))

    @cached_property
    def encoder(self) -> Encoder:
        return QueryCache(load_encoder(self.settings.embedder))

    @cached_property
    def paper_encoder(self) -> Encoder:
        return load_paper_encoder(self.settings.paper_embedder, self.settings.embedder)

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.folder.rglob("*") if p.is_file())
