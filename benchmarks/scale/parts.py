"""The index parts at sizes where lit3r's whole ingest + index + serve does not fit in this machine's memory.

Above ``--full-max`` chunks (default 1M) the corpus is drawn by the same generator (:class:`SyntheticCorpus`,
the same papers, texts, references and vectors) but kept in memory instead of going through paper records,
``lit3r ingest`` and the chunker, whose Python objects (every ParsedPaper, Chunk and Paper) are what stops
fitting. The parts are then built with lit3r's classes, one after the other, freeing each one's inputs:
chunk BM25, paper BM25, the dense variants, paper vectors and the citation graph. What the serving
process measures without the chunk and paper lists is in :func:`scale.serve.serve_parts`.
"""

from __future__ import annotations

import json
import shutil
from functools import cached_property
from pathlib import Path

import numpy as np

from lit3r.index.bm25 import BM25Index
from lit3r.index.citations import CitationGraph
from lit3r.index.corpus_index import IndexParts
from lit3r.index.dense import DenseIndex
from lit3r.index.encoders import QueryCache, load_encoder
from lit3r.models import chunk_id
from lit3r.settings import EmbedderSettings, Settings
from lit3r.settings.retrieval import RetrieverSettings

from scale.indexing import Stopwatch, build_variants, exact_truth, folder_mb, serve_variants
from scale.memory import PeakRSS
from scale.real import CorpusProfile, VectorModel
from scale.synth import SyntheticCorpus, chunk_vectors, paper_id, paper_vectors


def build_parts(
    folder: Path, profile: CorpusProfile, model: VectorModel, settings: Settings, size: int, args, watch: Stopwatch
) -> tuple[list[str], np.ndarray, dict]:
    """Draw the corpus and build every index part into ``folder``; returns chunk ids, chunk vectors and counts."""
    folder.mkdir(parents=True, exist_ok=True)
    corpus = SyntheticCorpus(profile, size, seed=args.seed, topic_share=args.topic_share, refs_mean=args.refs_mean)
    chars = RetrieverSettings().relate_seed_chars
    chunk_ids: list[str] = []
    texts: list[str] = []
    paper_of: list[int] = []
    references: dict[str, list[str]] = {}
    openings: dict[str, str] = {}
    text_chars = 0
    with watch.step("generate_texts"):
        for paper in corpus:
            for ordinal, (_, text) in enumerate(paper.chunks):
                chunk_ids.append(chunk_id(paper.id, ordinal))
                texts.append(text)
                paper_of.append(paper.number)
            references[paper.id] = [paper_id(j) for j in paper.cited]
            openings[paper.id] = "\n\n".join(t for _, t in paper.chunks)[:chars]
            text_chars += sum(len(t) for _, t in paper.chunks)
    paper_ids = list(references)
    (folder / "openings.json").write_text(json.dumps(openings))
    with watch.step("bm25_chunks"):
        BM25Index.build(chunk_ids, texts, settings.bm25).save(folder / "bm25_chunks")
    with watch.step("bm25_papers"):
        by_paper: list[list[str]] = [[] for _ in paper_ids]
        for number, text in zip(paper_of, texts, strict=True):
            by_paper[number].append(text)
        del texts
        paper_texts = ["\n\n".join(parts) for parts in by_paper]
        del by_paper
        BM25Index.build(paper_ids, paper_texts, settings.bm25).save(folder / "bm25_papers")
        del paper_texts
    with watch.step("draw_vectors"):
        centres, paper_vecs = paper_vectors(model, len(paper_ids), np.random.default_rng(args.seed))
        vectors = chunk_vectors(model, centres, np.array(paper_of, dtype=np.int64), args.seed + 1)
    with watch.step("dense"):
        DenseIndex.build(chunk_ids, vectors, settings=settings.index).save(folder / "dense")
    with watch.step("paper_vectors"):
        DenseIndex.build(paper_ids, paper_vecs).save(folder / "paper_vectors")
    with watch.step("citations"):
        CitationGraph(references).save(folder / "citations")
    return chunk_ids, vectors, {**corpus.summary(), "text_mb": round(text_chars / 1e6, 1)}


def measure(
    args, size: int, profile: CorpusProfile, model: VectorModel, settings: Settings, serve, label: str, variants_for
) -> dict:
    """The parts at one size: build (time, peak memory, disk), then the serving measurements and dense variants."""
    work = args.work / label
    shutil.rmtree(work, ignore_errors=True)
    folder = work / "parts"
    watch = Stopwatch()
    with PeakRSS() as build_peak:
        chunk_ids, vectors, made = build_parts(folder, profile, model, settings, size, args, watch)
        queries = np.load(args.query_file)["vectors"]
        truth = exact_truth(folder, queries, 100, args.seed, np.load(args.tune_file)["vectors"])
        (work / "truth.json").write_text(json.dumps(truth))
        variants = build_variants(variants_for(size), chunk_ids, vectors, folder, work, watch)
        del vectors, chunk_ids
    result = {
        "size": size,
        "label": label,
        "mode": "parts",
        "made": made,
        "steps": watch.steps,
        "build_peak_rss_mb": build_peak.peak_mb,
        "disk_mb": {p.name: folder_mb(p) for p in sorted(folder.iterdir())},
        "raw_vectors_mb": round(made["chunks"] * model.dim * 4 / 1e6, 1),
        "embed_projection_s": round(made["chunks"] / model.chunks_per_s, 0),
    }
    result["serve"] = serve("parts", folder, work / "serve.json")
    result["bm25_mmap"] = serve("bm25-mmap", folder, work / "mmap.json")
    result["dense_variants"] = serve_variants(variants, folder, work, serve)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return result


class PartsIndex(IndexParts):
    """The parts of an index generation that need no chunk or paper list, with what Relate reads of a CorpusIndex.

    Relate (``relate.ranking_b``) reads ``papers`` (membership), ``paper_text`` (the seed's opening),
    ``paper_vectors``, ``bm25_papers`` and ``citations``; here the openings come from a file written with
    the corpus instead of the chunk list, so the real Relate functions run at sizes whose chunk and paper
    lists do not fit in memory.
    """

    @cached_property
    def openings(self) -> dict[str, str]:
        return json.loads((self.folder / "openings.json").read_text())

    @property
    def papers(self) -> dict[str, str]:
        return self.openings

    def paper_text(self, paper_id: str) -> str:
        return self.openings.get(paper_id, "")

    @cached_property
    def encoder(self) -> QueryCache:
        return QueryCache(load_encoder(EmbedderSettings()))
