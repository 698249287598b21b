"""Build (or extend) every index of a corpus: chunks, BM25 x2, dense chunks, paper vectors, citation graph.

The build is incremental where it costs: chunk and paper vectors are reused by
the hash of their text, so adding papers embeds only the new chunks. BM25 and
the FAISS flat index are rebuilt from the stored texts and vectors each time,
which takes seconds (BM25 statistics are corpus-wide anyway).
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from lit3r.corpus.chunkers import chunk_paper
from lit3r.corpus.store import CorpusStore
from lit3r.index.bm25 import BM25Index
from lit3r.index.citations import CitationGraph
from lit3r.index.corpus_index import CorpusIndex, write_jsonl
from lit3r.index.dense import DenseIndex
from lit3r.index.embed_cache import EmbeddingCache, text_hash
from lit3r.index.encoders import Encoder, load_encoder, load_paper_encoder, paper_text
from lit3r.index.layout import IndexLayout
from lit3r.models import Chunk, ParsedPaper
from lit3r.settings import Settings

WRITE_STEPS = 5
"""Progress steps of writing a generation: texts, chunk BM25, paper BM25, vectors, citation graph + manifest."""

Progress = Callable[[str, int, int], None]
"""Called as ``progress(stage, done_increment, total)``; stages: chunk papers, embed chunks, embed papers,
write indexes."""


class EmptyCorpusError(RuntimeError):
    """Raised when there is nothing to index."""


class IndexWriteError(OSError):
    """Writing a new generation failed (a full disk, a quota); its scratch folder is gone, the old one serves."""


@dataclass
class BuildReport:
    generation: Path
    up_to_date: bool
    papers: int = 0
    chunks: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    papers_embedded: int = 0
    timings: dict[str, float] = field(default_factory=dict)


def build_index(settings: Settings, store: CorpusStore, *, progress: Progress | None = None) -> BuildReport:
    """Bring the index for ``settings`` up to date with the corpus in ``store``."""
    layout = IndexLayout(settings)
    layout.root.mkdir(parents=True, exist_ok=True)
    layout.clean_scratch()
    hashes = store.paper_hashes()
    if not hashes:
        raise EmptyCorpusError(f"no papers in {store.path}: run `lit3r ingest PATH` first")
    current = layout.current()
    previous = CorpusIndex(current, settings) if current else None
    if previous is not None and previous.manifest.get("papers") == hashes:
        return BuildReport(generation=current, up_to_date=True, papers=len(hashes), chunks=previous.manifest["chunks"])

    timings: dict[str, float] = {}
    clock = time.perf_counter()
    parsed = list(store.iter_papers())
    chunked = _stage(progress, "chunk papers", len(parsed))
    chunks = []
    for paper in parsed:
        chunks.extend(chunk_paper(paper, settings.chunker))
        if chunked:
            chunked(1)
    timings["chunk_s"] = time.perf_counter() - clock

    clock = time.perf_counter()
    encoder = load_encoder(settings.embedder)
    chunk_cache = EmbeddingCache(layout.cache / "chunks")
    reused = _seed_cache(chunk_cache, previous, encoder, papers=False)
    resumed = chunk_cache.load_shards(encoder.dim)
    chunk_texts = [c.text for c in chunks]
    report_progress = _stage(progress, "embed chunks", chunk_cache.missing(chunk_texts))
    chunk_vectors, embedded = chunk_cache.embed(encoder, chunk_texts, on_progress=report_progress)
    timings["embed_chunks_s"] = time.perf_counter() - clock

    clock = time.perf_counter()
    paper_encoder = load_paper_encoder(settings.paper_embedder, settings.embedder)
    paper_cache = EmbeddingCache(layout.cache / "papers")
    _seed_cache(paper_cache, previous, paper_encoder, papers=True)
    paper_cache.load_shards(paper_encoder.dim)
    paper_texts = [paper_text(p.paper, paper_encoder) for p in parsed]
    paper_vectors, papers_embedded = paper_cache.embed(
        paper_encoder, paper_texts, on_progress=_stage(progress, "embed papers", paper_cache.missing(paper_texts))
    )
    timings["embed_papers_s"] = time.perf_counter() - clock

    clock = time.perf_counter()
    scratch = layout.scratch()
    written = _stage(progress, "write indexes", WRITE_STEPS)
    try:
        _write_generation(
            scratch, settings, parsed, chunks, chunk_vectors, paper_vectors, hashes, encoder, paper_encoder, written
        )
    except (OSError, RuntimeError) as exc:  # FAISS reports a failed write (a full disk) as a RuntimeError
        shutil.rmtree(scratch, ignore_errors=True)  # free the space at once; the generation in use is untouched
        raise IndexWriteError(f"writing the new index generation failed: {exc}") from exc
    timings["write_indexes_s"] = time.perf_counter() - clock
    generation = layout.publish(scratch)
    chunk_cache.clear()
    paper_cache.clear()
    return BuildReport(
        generation=generation,
        up_to_date=False,
        papers=len(parsed),
        chunks=len(chunks),
        chunks_embedded=embedded,
        chunks_reused=len(chunks) - embedded,
        papers_embedded=papers_embedded,
        timings={**timings, "reused_from_previous": float(reused), "resumed_from_cache": float(resumed)},
    )


def _stage(progress: Progress | None, name: str, total: int) -> Callable[[int], None] | None:
    """The stage's progress callback; the stage is announced at once as ``(name, 0, total)`` (its start, for an
    ETA), and ``total`` counts only the work it will do (texts already embedded are not counted)."""
    if progress is None:
        return None
    progress(name, 0, total)
    return lambda done: progress(name, done, total)


def _seed_cache(cache: EmbeddingCache, previous: CorpusIndex | None, encoder: Encoder, *, papers: bool) -> int:
    """Put the vectors of the generation in use into the cache (same settings key => same encoder)."""
    if previous is None:
        return 0
    if papers:
        texts = {pid: paper_text(p, encoder) for pid, p in previous.papers.items()}
        index = previous.paper_vectors
    else:
        texts = {c.id: c.text for c in previous.chunks}
        index = previous.dense
    ids = list(texts)
    vectors = index.vectors_for(ids)
    if vectors.shape[1] != encoder.dim:
        return 0
    cache.remember([text_hash(texts[i]) for i in ids], vectors)
    return len(ids)


def _write_generation(
    folder: Path,
    settings: Settings,
    parsed: list[ParsedPaper],
    chunks: list[Chunk],
    chunk_vectors: np.ndarray,
    paper_vectors: np.ndarray,
    hashes: dict[str, str],
    encoder: Encoder,
    paper_encoder: Encoder,
    step: Callable[[int], None] | None = None,
) -> None:
    step = step or (lambda _done: None)
    papers = [p.paper for p in parsed]
    write_jsonl(folder / "papers.jsonl", papers)
    write_jsonl(folder / "chunks.jsonl", chunks)
    step(1)
    BM25Index.build([c.id for c in chunks], [c.text for c in chunks], settings.bm25).save(folder / "bm25_chunks")
    step(1)
    by_paper: dict[str, list[str]] = {}
    for chunk in chunks:
        by_paper.setdefault(chunk.paper_id, []).append(chunk.text)
    paper_ids = [p.id for p in papers]
    paper_texts = ["\n\n".join(by_paper.get(pid, [])) for pid in paper_ids]
    BM25Index.build(paper_ids, paper_texts, settings.bm25).save(folder / "bm25_papers")
    step(1)
    DenseIndex.build([c.id for c in chunks], chunk_vectors, settings=settings.index).save(folder / "dense")
    DenseIndex.build(paper_ids, paper_vectors).save(folder / "paper_vectors")
    step(1)
    CitationGraph.build(papers).save(folder / "citations")
    manifest = {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "settings": settings.index_shape(),
        "encoder": {"name": encoder.name, "dim": encoder.dim},
        "paper_encoder": {"name": paper_encoder.name, "dim": paper_encoder.dim},
        "papers": hashes,
        "chunks": len(chunks),
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    step(1)
