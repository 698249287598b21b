"""Recall of the approximate dense index kinds against the exact flat index, on the real QASPER index.

Run from the repository root once the QASPER evaluation index exists (``make bench-retrieval`` or
``lit3r eval qasper FILE --retrieval`` builds it under ``<home>/evals/<hash of the file>/``)::

    make bench-ann-qasper
    # = python benchmarks/bench_ann_qasper.py --qasper $(QASPER) --out bench-out/ann-qasper.json

The real chunk vectors (all-MiniLM-L6-v2 or whatever the settings name) are read back from the flat
index; every kind and storage type is built from them with lit3r's ``DenseIndex``, and searched with
the vectors of every QASPER question: open domain (all chunks) and in paper (the question's own
paper's chunks, an allowed-set search). Recall@k is the share of the exact top k that the index
returns in its top k; latency is per single-query search, median and p95 over all questions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from report_file import emit

from lit3r.corpus.parsers.qasper import read_qasper_records
from lit3r.corpus.store import file_sha256
from lit3r.index.corpus_index import CorpusIndex, IndexNotBuiltError
from lit3r.index.dense import DenseIndex
from lit3r.settings import IndexSettings, load_settings

VARIANTS = "flat:fp16,flat:int8,hnsw:fp32,hnsw:fp16,hnsw:int8,ivf:fp32,ivf:fp16,ivf:int8"


def recall(found: list[list[str]], exact: list[list[str]], k: int) -> float:
    """Mean share of the exact top ``k`` found in the top ``k``."""
    shares = [len(set(f[:k]) & set(e[:k])) / len(e[:k]) for f, e in zip(found, exact, strict=True) if e]
    return round(float(np.mean(shares)), 4)


def run(index: DenseIndex, queries: np.ndarray, depth: int, allowed: list[set[str]] | None) -> tuple[list, dict]:
    """Search every query (one at a time, as retrieval does); ids found and latency summary."""
    found, ms = [], []
    for row, query in enumerate(queries):
        start = time.perf_counter()
        hits = index.search(query, depth, allowed=None if allowed is None else allowed[row])
        ms.append((time.perf_counter() - start) * 1000)
        found.append([i for i, _ in hits])
    ordered = sorted(ms)
    return found, {"median_ms": round(statistics.median(ms), 3), "p95_ms": round(ordered[int(0.95 * len(ms))], 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--qasper", type=Path, required=True)
    parser.add_argument("--home", type=Path, default=None, help="The lit3r home the evaluation ran under.")
    parser.add_argument("--variants", default=VARIANTS)
    parser.add_argument("--depth", type=int, default=100, help="Results per search (the retriever's depth).")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    base = load_settings(None, home=args.home) if args.home else load_settings(None)
    settings = base.model_copy(update={"home": base.home / "evals" / file_sha256(args.qasper)[:12]})
    try:
        index = CorpusIndex.open(settings)
    except IndexNotBuiltError as exc:
        raise SystemExit(f"{exc}\n(build it with: lit3r eval qasper {args.qasper} --retrieval)") from None
    exact = index.dense
    if (exact.kind, exact.dtype) != ("flat", "fp32"):
        raise SystemExit(f"the evaluation index is {exact.kind}/{exact.dtype}; the reference must be flat fp32")
    ids = list(exact.ids)
    vectors = exact.vectors_for(ids)
    questions = [(q["question"], pid) for pid, r in read_qasper_records(args.qasper).items() for q in r["qas"]]
    queries = index.encoder.encode_queries([q for q, _ in questions])
    in_paper = [{c.id for c in index.chunks_by_paper.get(pid, [])} for _, pid in questions]
    truth_all, exact_ms = run(exact, queries, args.depth, None)
    truth_paper, _ = run(exact, queries, args.depth, in_paper)
    result = {
        "chunks": len(ids),
        "dim": exact.dim,
        "questions": len(questions),
        "encoder": index.encoder.name,
        "depth": args.depth,
        "flat:fp32": {"open_domain": {**exact_ms, "recall@10": 1.0, "recall@100": 1.0}},
    }
    for spec in args.variants.split(","):
        kind, dtype = spec.split(":")
        start = time.perf_counter()
        variant = DenseIndex.build(ids, vectors, settings=IndexSettings(dense_kind=kind, dense_dtype=dtype))
        entry = {"build_s": round(time.perf_counter() - start, 2)}
        for name, truth, allowed in (("open_domain", truth_all, None), ("in_paper", truth_paper, in_paper)):
            found, latency = run(variant, queries, args.depth, allowed)
            entry[name] = {**latency, "recall@10": recall(found, truth, 10), "recall@100": recall(found, truth, 100)}
        result[spec] = entry
        print(spec, json.dumps(entry), file=sys.stderr, flush=True)
    emit(result, args.out)


if __name__ == "__main__":
    sys.exit(main())
