"""The process that serves queries: loads an index part by part (memory of each), then times each stage.

Run by :mod:`bench_scale` in a fresh interpreter per measurement, so that resident memory is that of a
process that only serves queries. Three modes:

* ``pipeline``: ``CorpusIndex.open`` and every part it loads, then per query: chunk BM25, paper BM25,
  dense, fusion (chunk hits to papers, RRF of the three paper rankings), rerank (the lexical reranker
  over 200 candidates), Relate (Ranking B from the top paper), query encoding, and one whole
  ``retrieve_subquery`` (sweep, PRF sweep, candidates, rerank) with its query vectors cached.
* ``bm25-mmap``: the chunk BM25 index loaded with ``mmap=True`` (bm25s memory-maps its arrays).
* ``dense``: one dense index variant: memory, latency, and recall against the exact flat results.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

from lit3r.index.bm25 import BM25Index
from lit3r.index.corpus_index import CorpusIndex, IndexParts
from lit3r.index.dense import DenseIndex
from lit3r.retrieval import fusion, relate
from lit3r.retrieval.rerankers.offline import LexicalReranker
from lit3r.retrieval.subquery import retrieve_subquery
from lit3r.settings import IndexSettings, Settings
from lit3r.settings.retrieval import RetrieverSettings

from scale.indexing import RESTRICTIONS, allowed_chunks
from scale.memory import rss_mb
from scale.parts import PartsIndex


def summary(samples_ms: list[float]) -> dict[str, float]:
    """Median and 95th percentile of latencies in ms."""
    ordered = sorted(samples_ms)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"median_ms": round(statistics.median(ordered), 3), "p95_ms": round(p95, 3), "samples": len(ordered)}


def timed_ms(fn: Callable[[], object]) -> tuple[object, float]:
    start = time.perf_counter()
    result = fn()
    return result, (time.perf_counter() - start) * 1000


def load_part(fn: Callable[[], object]) -> dict:
    """Seconds to load one part and the resident memory it added."""
    gc.collect()
    before = rss_mb()
    _, ms = timed_ms(fn)
    gc.collect()
    after = rss_mb()
    return {"load_s": round(ms / 1000, 3), **{k: round(after[k] - before[k], 1) for k in before}}


def serve_pipeline(home: Path, index_settings: dict, texts: list[str], vectors: np.ndarray, repeats: int) -> dict:
    settings = Settings(home=home, index=index_settings)
    retriever = RetrieverSettings()
    start = rss_mb()
    index = CorpusIndex.open(settings)
    parts = {
        "papers": load_part(lambda: index.papers),
        "chunks": load_part(lambda: (index.chunk_by_id, index.chunks_by_paper)),
        **load_search_parts(index),
    }
    reranker = LexicalReranker(settings.bm25)
    paper_of = {c.id: c.paper_id for c in index.chunks}.__getitem__
    for text in texts:  # warm the query-vector cache: encoding has its own row
        retrieve_subquery(index, text, reranker, retriever)
    stages = time_queries(index, texts, vectors, reranker, retriever, paper_of, repeats)
    return {**_report(index, start, parts, stages, retriever), "rerank_candidates": retriever.rerank_candidates}


def load_search_parts(index: IndexParts) -> dict[str, dict]:
    """Load time and memory of each search part of ``index`` and of the query encoder, loaded in turn."""
    names = ("bm25_chunks", "bm25_papers", "dense", "paper_vectors", "citations")
    parts = {name: load_part(lambda name=name: getattr(index, name)) for name in names}
    return {**parts, "query_encoder": load_part(lambda: index.encoder.encode_queries(["warm up"]))}


def time_queries(index, texts, vectors, reranker, retriever, paper_of, repeats: int) -> dict[str, list[float]]:
    """Milliseconds of every stage for every query, ``repeats`` passes (encoding timed in the first only)."""
    stages: dict[str, list[float]] = {}
    for repeat in range(repeats):
        for text, vector in zip(texts, vectors, strict=True):
            _time_stages(index, text, vector, reranker, retriever, paper_of, stages, encode=repeat == 0)
    return stages


def _report(index: IndexParts, start: dict, parts: dict, stages: dict[str, list[float]], retriever) -> dict:
    return {
        "rss_start": start,
        "rss_end": rss_mb(),
        "parts": parts,
        "stages": {name: summary(ms) for name, ms in stages.items()},
        "depth": retriever.depth,
        "dense": {"kind": index.dense.kind, "dtype": index.dense.dtype},
    }


def _time_stages(index, text, vector, reranker, retriever, paper_of, stages: dict[str, list[float]], encode: bool):
    """One query through every stage, each timed on its own (appended to ``stages``); ``encode``: time encoding."""
    depth = retriever.depth

    def lap(name: str, fn: Callable[[], object]) -> object:
        result, ms = timed_ms(fn)
        stages.setdefault(name, []).append(ms)
        return result

    chunk_bm25 = lap("bm25_chunks", lambda: index.bm25_chunks.search(text, depth))
    paper_bm25 = lap("bm25_papers", lambda: index.bm25_papers.search(text, depth))
    dense = lap("dense", lambda: index.dense.search(vector, depth))
    fused = lap("fusion", lambda: _fuse(chunk_bm25, paper_bm25, dense, paper_of, retriever.rrf_k))
    if reranker is not None:
        candidates = [c for c, _ in fusion.rrf([[c for c, _ in chunk_bm25], [c for c, _ in dense]])]
        passages = [index.chunk_by_id[c].text for c in candidates[: retriever.rerank_candidates]]
        lap("rerank", lambda: reranker.score(text, passages))
    seed = fused[0][0]
    lap("relate", lambda: relate.ranking_b(index, [seed], retriever))
    lap("relate_paper_vectors", lambda: relate.vector_neighbours(index, seed, retriever.relate_depth))
    lap("relate_coupling", lambda: relate.coupling_neighbours(index, seed, retriever.coupling_min_shared))
    lap("relate_bm25", lambda: relate.bm25_neighbours(index, seed, retriever.relate_seed_chars, depth))
    if encode:
        lap("encode_query", lambda: index.encoder.encoder.encode_queries([text]))
    if reranker is not None:
        lap("retrieve_subquery", lambda: retrieve_subquery(index, text, reranker, retriever))


def _fuse(chunk_bm25, paper_bm25, dense, paper_of, k):
    """Chunk hits to paper rankings (each paper at its best chunk), then equal-weight RRF of the three."""
    by_chunks = fusion.best_chunk_per_paper([(c, paper_of(c)) for c, _ in chunk_bm25])
    by_dense = fusion.best_chunk_per_paper([(c, paper_of(c)) for c, _ in dense])
    return fusion.rrf([by_chunks, [p for p, _ in paper_bm25], by_dense], k=k)


def serve_parts(folder: Path, texts: list[str], vectors: np.ndarray, repeats: int) -> dict:
    """The parts' memory and every stage that needs no chunk text: all but rerank and a whole subquery."""
    retriever = RetrieverSettings()
    start = rss_mb()
    index = PartsIndex(folder)
    parts = {"paper_openings": load_part(lambda: index.openings), **load_search_parts(index)}
    stages = time_queries(index, texts, vectors, None, retriever, _paper_of_id, repeats)
    return _report(index, start, parts, stages, retriever)


def _paper_of_id(chunk: str) -> str:
    """A chunk id's paper (ids are '<paper id>::c<n>')."""
    return chunk.split("::")[0]


def serve_bm25_mmap(generation: Path, texts: list[str], repeats: int) -> dict:
    folder = generation / "bm25_chunks"
    depth = RetrieverSettings().depth
    loaded: dict = {}
    gc.collect()
    before = rss_mb()
    part = load_part(lambda: loaded.setdefault("index", BM25Index.load(folder, mmap=True)))
    index = loaded["index"]
    passes = []
    for _ in range(repeats):
        samples = [timed_ms(partial(index.search, t, depth))[1] for t in texts]
        now = rss_mb()
        passes.append({**summary(samples), **{k: round(now[k] - before[k], 1) for k in now}})
    return {"load": part, "passes": passes, "arrays_mb": _arrays_mb(folder)}


def _arrays_mb(folder: Path) -> dict[str, float]:
    """Sizes of the BM25 index's files (bm25s' sparse matrix arrays, the vocabulary, lit3r's tokens)."""
    return {p.name: round(p.stat().st_size / 1e6, 2) for p in sorted(folder.iterdir()) if p.is_file()}


HNSW_EF = (128, 256, 512, 1024)
IVF_SHARES = (64, 32, 16, 8, 4)
"""Search-time knob values swept for the approximate kinds (with the tuning questions): HNSW efSearch, and IVF
lists scanned as one in 64, 32, 16, 8 (the default) and 4 of the lists."""


def sweep_knob(folder: Path, kind: str, dtype: str, tune: np.ndarray, truth: list[list[str]]) -> list[dict]:
    """Recall@10/@100 and latency of each value of the kind's search knob, on the tuning questions."""
    if kind == "flat":
        return []
    index = DenseIndex.load(folder, settings=IndexSettings(dense_kind=kind, dense_dtype=dtype))
    if kind == "hnsw":
        knob, values = "hnsw_ef_search", HNSW_EF
    else:
        lists = index.faiss_index.nlist
        knob, values = "ivf_nprobe", tuple(dict.fromkeys(max(1, lists // share) for share in IVF_SHARES))
    depth = RetrieverSettings().depth
    out = []
    for value in values:
        index.settings = index.settings.model_copy(update={knob: value})
        found, samples = [], []
        for vector in tune:
            hits, ms = timed_ms(partial(index.search, vector, depth))
            found.append([i for i, _ in hits])
            samples.append(ms)
        out.append(
            {
                knob: value,
                **summary(samples),
                "recall@10": _recall(found, truth, 10),
                "recall@100": _recall(found, truth, 100),
            }
        )
    return out


def serve_dense(folder: Path, kind: str, dtype: str, vectors: np.ndarray, truth: dict, repeats: int) -> dict:
    depth = RetrieverSettings().depth
    settings = IndexSettings(dense_kind=kind, dense_dtype=dtype)
    loaded: dict = {}
    part = load_part(lambda: loaded.setdefault("index", DenseIndex.load(folder, settings=settings)))
    index = loaded["index"]
    out = {"load": part, "vectors": len(index), "dim": index.dim, "settings": settings.model_dump()}
    runs = {"all": None, **{name: truth[name]["papers"] for name in RESTRICTIONS}}
    for name, papers in runs.items():
        allowed = None if papers is None else allowed_chunks(index.ids, papers)
        expected = truth[name] if name == "all" else truth[name]["ids"]
        samples, found = [], []
        for _ in range(repeats):
            for vector in vectors:
                hits, ms = timed_ms(partial(index.search, vector, depth, allowed=allowed))
                samples.append(ms)
                found.append([i for i, _ in hits])
        found = found[: len(vectors)]
        out[name] = {
            **summary(samples),
            "allowed": None if allowed is None else len(allowed),
            "recall@10": _recall(found, expected, 10),
            "recall@100": _recall(found, expected, 100),
        }
    return out


def _recall(found: list[list[str]], expected: list[list[str]], k: int) -> float:
    """Mean share of the exact top ``k`` that the search returned in its top ``k``."""
    shares = [len(set(f[:k]) & set(e[:k])) / len(e[:k]) for f, e in zip(found, expected, strict=True) if e]
    return round(float(np.mean(shares)), 4)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_scale.py serve")
    parser.add_argument("mode", choices=["pipeline", "parts", "bm25-mmap", "dense"])
    parser.add_argument("--folder", type=Path, required=True, help="The index generation (or parts) folder.")
    parser.add_argument("--home", type=Path, help="pipeline mode: the lit3r home of the generation")
    parser.add_argument("--queries", type=Path, required=True, help="npz with 'texts' and 'vectors'")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--index-settings", default="{}", help="IndexSettings as JSON (pipeline mode)")
    parser.add_argument("--variant", type=Path, help="dense mode: the index folder")
    parser.add_argument("--kind", default="flat")
    parser.add_argument("--dtype", default="fp32")
    parser.add_argument("--truth", type=Path, help="dense mode: exact results (JSON)")
    parser.add_argument("--tune-queries", type=Path, help="dense mode: npz of the knob-sweep questions")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    queries = np.load(args.queries)
    texts, vectors = [str(t) for t in queries["texts"]], queries["vectors"]
    if args.mode == "pipeline":
        result = serve_pipeline(args.home, json.loads(args.index_settings), texts, vectors, args.repeats)
    elif args.mode == "parts":
        result = serve_parts(args.folder, texts, vectors, args.repeats)
    elif args.mode == "bm25-mmap":
        result = serve_bm25_mmap(args.folder, texts, args.repeats)
    else:
        truth = json.loads(args.truth.read_text())
        result = serve_dense(args.variant, args.kind, args.dtype, vectors, truth, args.repeats)
        tune = np.load(args.tune_queries)["vectors"]
        result["sweep"] = sweep_knob(args.variant, args.kind, args.dtype, tune, truth["tune"])
    args.out.write_text(json.dumps(result, indent=1))
