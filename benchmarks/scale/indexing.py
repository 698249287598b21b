"""Ingest a synthetic corpus and build its index generation with lit3r's own classes, timing every part.

The sequence is that of ``lit3r ingest`` + ``lit3r index`` (lit3r/index/build.py), part by part:
``lit3r.corpus.ingest.ingest`` over the paper records (parse, store, resolve references by title),
the structural chunker over every stored paper, then ``BM25Index`` (chunks, papers), ``DenseIndex``
(chunks, with the settings' kind, and paper vectors), ``CitationGraph``, the chunk and paper lists,
the manifest, and ``IndexLayout.publish``, so ``CorpusIndex.open`` serves it like any index. Only
the embedding is replaced: vectors are drawn from the Gaussian fitted to the real encoder's vectors
(see :mod:`scale.synth`); the real encoder's measured rate gives the embedding time it would take.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from lit3r.corpus.chunkers import chunk_paper
from lit3r.corpus.ingest import ingest
from lit3r.corpus.store import CorpusStore
from lit3r.index.bm25 import BM25Index
from lit3r.index.citations import CitationGraph
from lit3r.index.corpus_index import write_jsonl
from lit3r.index.dense import DenseIndex
from lit3r.index.layout import IndexLayout
from lit3r.settings import IndexSettings, Settings

from scale.memory import PeakRSS
from scale.real import VectorModel
from scale.synth import chunk_vectors, paper_vectors


def folder_mb(path: Path) -> float:
    """Size on disk of a file or folder, in MB."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return round(sum(p.stat().st_size for p in files) / 1e6, 2)


class Stopwatch:
    """Seconds and peak resident memory of each named step."""

    def __init__(self) -> None:
        self.steps: dict[str, dict[str, float]] = {}

    def step(self, name: str):
        return _Step(self, name)


class _Step:
    def __init__(self, watch: Stopwatch, name: str) -> None:
        self.watch, self.name = watch, name

    def __enter__(self) -> None:
        self.peak = PeakRSS().__enter__()
        self.start = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        seconds = time.perf_counter() - self.start
        self.peak.__exit__(*exc)
        self.watch.steps[self.name] = {"s": round(seconds, 2), "peak_rss_mb": self.peak.peak_mb}


def ingest_and_chunk(settings: Settings, records: Path, watch: Stopwatch):
    """``lit3r ingest`` of the records, then the chunker over every stored paper."""
    with CorpusStore(settings.home) as store:
        with watch.step("ingest"):
            report = ingest([records], store)
        if report.failed:
            raise SystemExit(f"ingest failed for {len(report.failed)} files: {report.failed[:3]}")
        with watch.step("chunk"):
            papers, chunks = [], []
            for parsed in store.iter_papers():
                papers.append(parsed.paper)
                chunks.extend(chunk_paper(parsed, settings.chunker))
        hashes = store.paper_hashes()
    return papers, chunks, hashes, report.references_resolved


def synthetic_vectors(model: VectorModel, papers, chunks, seed: int, watch: Stopwatch):
    """Paper and chunk vectors drawn from the fitted Gaussian (chunks around their own paper's centre)."""
    with watch.step("draw_vectors"):
        number = {p.id: i for i, p in enumerate(papers)}
        paper_of_chunk = np.fromiter((number[c.paper_id] for c in chunks), dtype=np.int64, count=len(chunks))
        centres, paper_vecs = paper_vectors(model, len(papers), np.random.default_rng(seed))
        chunk_vecs = chunk_vectors(model, centres, paper_of_chunk, seed + 1)
    return paper_vecs, chunk_vecs


def build_generation(settings: Settings, papers, chunks, hashes, paper_vecs, chunk_vecs, model, watch) -> Path:
    """Write and publish an index generation for ``settings`` (the steps of lit3r/index/build.py)."""
    layout = IndexLayout(settings)
    layout.root.mkdir(parents=True, exist_ok=True)
    folder = layout.scratch()
    chunk_ids = [c.id for c in chunks]
    paper_ids = [p.id for p in papers]
    with watch.step("write_chunk_and_paper_lists"):
        write_jsonl(folder / "papers.jsonl", papers)
        write_jsonl(folder / "chunks.jsonl", chunks)
    with watch.step("bm25_chunks"):
        BM25Index.build(chunk_ids, [c.text for c in chunks], settings.bm25).save(folder / "bm25_chunks")
    with watch.step("bm25_papers"):
        by_paper: dict[str, list[str]] = {}
        for chunk in chunks:
            by_paper.setdefault(chunk.paper_id, []).append(chunk.text)
        texts = ["\n\n".join(by_paper.pop(pid, [])) for pid in paper_ids]
        BM25Index.build(paper_ids, texts, settings.bm25).save(folder / "bm25_papers")
        del texts
    with watch.step("dense"):
        DenseIndex.build(chunk_ids, chunk_vecs, settings=settings.index).save(folder / "dense")
    with watch.step("paper_vectors"):
        DenseIndex.build(paper_ids, paper_vecs).save(folder / "paper_vectors")
    with watch.step("citations"):
        CitationGraph.build(papers).save(folder / "citations")
    manifest = {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "settings": settings.index_shape(),
        "encoder": {"name": f"synthetic vectors fitted to {model.encoder}", "dim": model.dim},
        "paper_encoder": {"name": f"synthetic vectors fitted to {model.encoder}", "dim": model.dim},
        "papers": hashes,
        "chunks": len(chunks),
    }
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return layout.publish(folder)


def build_variants(specs: str, chunk_ids, chunk_vecs, generation: Path, work: Path, watch: Stopwatch) -> dict:
    """Every ``kind:dtype`` of ``specs`` built from the same vectors; flat:fp32 is the generation's own index."""
    variants = {}
    for spec in specs.split(","):
        kind, dtype = spec.split(":")
        if (kind, dtype) == ("flat", "fp32"):
            folder = generation / "dense"
            variants[spec] = {"build_s": watch.steps["dense"]["s"], "disk_mb": folder_mb(folder)}
        else:
            folder = work / "variants" / f"{kind}-{dtype}"
            variants[spec] = build_variant(chunk_ids, chunk_vecs, kind, dtype, folder)
        variants[spec]["folder"] = str(folder)
    return variants


def serve_variants(variants: dict, generation: Path, work: Path, serve) -> dict:
    """Memory, latency, recall and the knob sweep of every variant, each in its own serving process."""
    for spec, variant in variants.items():
        kind, dtype = spec.split(":")
        extra = ("--variant", variant["folder"], "--kind", kind, "--dtype", dtype, "--truth", str(work / "truth.json"))
        variant.update(serve("dense", generation, work / f"dense-{kind}-{dtype}.json", *extra))
    return variants


def build_variant(chunk_ids, chunk_vecs, kind: str, dtype: str, folder: Path) -> dict:
    """One more dense index of the same vectors (another kind or storage type): build seconds, size."""
    start = time.perf_counter()
    with PeakRSS() as peak:
        index = DenseIndex.build(chunk_ids, chunk_vecs, settings=IndexSettings(dense_kind=kind, dense_dtype=dtype))
        seconds = time.perf_counter() - start
        index.save(folder)
    del index
    return {"build_s": round(seconds, 2), "disk_mb": folder_mb(folder), "peak_rss_mb": peak.peak_mb}


RESTRICTIONS = {"one_paper": None, "5%": 0.05, "50%": 0.5}
"""Allowed sets of restricted searches: one paper's chunks (in-paper search), and 5% and 50% of the papers."""


def exact_truth(generation: Path, queries: np.ndarray, depth: int, seed: int, tune: np.ndarray) -> dict:
    """Exact top ``depth`` chunk ids per query (the flat fp32 index): unrestricted, for each restriction, and for
    the knob-sweep queries (``tune``)."""
    exact = DenseIndex.load(generation / "dense")
    if exact.kind != "flat" or exact.dtype != "fp32":
        raise SystemExit("the exact reference needs the generation's dense index to be flat fp32 (the default)")
    truth: dict = {"all": [[i for i, _ in hits] for hits in exact.search_many(queries, depth)]}
    truth["tune"] = [[i for i, _ in hits] for hits in exact.search_many(tune, depth)]
    papers = sorted({i.split("::")[0] for i in exact.ids})
    rng = np.random.default_rng(seed)
    for name, share in RESTRICTIONS.items():
        count = 1 if share is None else max(1, round(share * len(papers)))
        chosen = sorted(rng.choice(papers, size=count, replace=False).tolist())
        hits = exact.search_many(queries, depth, allowed=allowed_chunks(exact.ids, chosen))
        truth[name] = {"papers": chosen, "ids": [[i for i, _ in h] for h in hits]}
    return truth


def allowed_chunks(chunk_ids: list[str], papers: list[str]) -> set[str]:
    """The chunk ids of ``papers`` (chunk ids are '<paper id>::c<n>')."""
    wanted = set(papers)
    return {i for i in chunk_ids if i.split("::")[0] in wanted}
