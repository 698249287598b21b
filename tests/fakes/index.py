"""Indexes for tests: an in-memory one (graph and tool tests need no built index) and a built one on disk.

:class:`MemoryIndex` implements :class:`lit3r.index.protocol.Index` and is made of the real
parts (the records parser, the chunker, reference resolution, bm25s BM25, a FAISS flat index, the citation
graph), with hashing vectors instead of a model and nothing written but the records file it parses.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lit3r.corpus.chunkers import chunk_paper
from lit3r.corpus.ingest import ingest
from lit3r.corpus.parsers.records import parse_records
from lit3r.corpus.references import resolve_references
from lit3r.corpus.store import CorpusStore
from lit3r.index.bm25 import BM25Index
from lit3r.index.build import build_index
from lit3r.index.citations import CitationGraph
from lit3r.index.corpus_index import CorpusIndex
from lit3r.index.dense import DenseIndex
from lit3r.index.encoders import paper_text as embedded_text
from lit3r.models import Chunk, Paper
from lit3r.settings import Settings

from fakes.encoders import HashingEncoder


class MemoryIndex:
    """A corpus index held in memory, built from a JSON-lines file of paper records."""

    def __init__(self, records: Path, settings: Settings, encoder: HashingEncoder | None = None) -> None:
        parsed = parse_records(records)
        resolve_references([p.paper for p in parsed])
        self.settings = settings
        self.encoder = self.paper_encoder = encoder or HashingEncoder()
        self.papers: dict[str, Paper] = {p.paper.id: p.paper for p in parsed}
        self.chunks: list[Chunk] = [c for p in parsed for c in chunk_paper(p, settings.chunker)]
        self.chunk_by_id = {c.id: c for c in self.chunks}
        self.chunks_by_paper: dict[str, list[Chunk]] = {}
        for chunk in self.chunks:
            self.chunks_by_paper.setdefault(chunk.paper_id, []).append(chunk)
        ids, texts = [c.id for c in self.chunks], [c.text for c in self.chunks]
        paper_ids = list(self.papers)
        self.bm25_chunks = BM25Index.build(ids, texts, settings.bm25)
        self.bm25_papers = BM25Index.build(paper_ids, [self.paper_text(p) for p in paper_ids], settings.bm25)
        self.dense = DenseIndex.build(ids, self.encoder.encode_documents(texts))
        paper_texts = [embedded_text(p, self.paper_encoder) for p in self.papers.values()]  # as the build embeds them
        self.paper_vectors = DenseIndex.build(paper_ids, self.paper_encoder.encode_documents(paper_texts))
        self.citations = CitationGraph.build(self.papers.values())

    def paper_text(self, paper_id: str) -> str:
        """The paper's indexed text: its chunks in order."""
        return "\n\n".join(c.text for c in self.chunks_by_paper.get(paper_id, []))

    def load_all(self) -> None:
        """Nothing to load: every part was built in memory."""


def built_index(home: Path, records: Path) -> CorpusIndex:
    """Ingest ``records`` under ``home`` and build its index on disk, embedded with a hashing encoder."""
    settings = Settings(home=home)
    encoder = HashingEncoder()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("lit3r.index.build.load_encoder", lambda *_a, **_k: encoder)
        patch.setattr("lit3r.index.build.load_paper_encoder", lambda *_a, **_k: encoder)
        with CorpusStore(settings.home) as store:
            ingest([records], store)
            build_index(settings, store)
    index = CorpusIndex.open(settings)
    index.encoder = encoder  # cached_property: the instance attribute replaces the model load
    index.paper_encoder = encoder
    return index
