"""Ingest and index benchmark on a QASPER file, plus BM25 query latency against rank-bm25.

Run from the repository root (``make bench-index``)::

    python benchmarks/bench_index.py --qasper ../shared/data/qasper/qasper-test-v0.3.corpus-and-dev-questions.json.gz

Reports, in one JSON document: time by stage for ingest and index (first run,
then a second unchanged run), chunks embedded per second, index size on disk,
peak resident memory, and per-query BM25 latency of lit3r's index (bm25s) and
of rank-bm25's BM25Okapi over the same tokenised chunks, measured in the same
process, interleaved, medians over all queries and repetitions.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi
from report_file import emit

from lit3r.corpus.ingest import ingest
from lit3r.corpus.parsers.qasper import read_qasper_records
from lit3r.corpus.store import CorpusStore
from lit3r.index.bm25 import tokenize
from lit3r.index.build import build_index
from lit3r.index.corpus_index import CorpusIndex
from lit3r.settings import load_settings


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start


def bm25_latency(index: CorpusIndex, questions: list[str], repeats: int, k: int = 10) -> dict:
    """Median ms per query: lit3r's bm25s index vs rank-bm25 on identical tokens, interleaved."""
    settings = index.settings.bm25
    chunk_texts = [c.text for c in index.chunks]
    reference = BM25Okapi(tokenize(chunk_texts, settings), k1=settings.k1, b=settings.b)
    ours_ms, theirs_ms, overlap = [], [], []
    for _ in range(repeats):
        for question in questions:
            tokens = tokenize([question], settings)[0]
            start = time.perf_counter()
            ours = index.bm25_chunks.search(question, k)
            ours_ms.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            scores = reference.get_scores(tokens)
            top = np.argsort(-scores)[:k]
            theirs_ms.append((time.perf_counter() - start) * 1000)
            ids = {index.chunks[i].id for i in top if scores[i] > 0}
            if ids:
                overlap.append(len(ids & {i for i, _ in ours}) / len(ids))
    ours_median, theirs_median = statistics.median(ours_ms), statistics.median(theirs_ms)
    return {
        "queries": len(questions),
        "repeats": repeats,
        "lit3r_bm25s_ms_median": round(ours_median, 3),
        "rank_bm25_ms_median": round(theirs_median, 3),
        "speedup": round(theirs_median / ours_median, 1),
        "top10_overlap_mean": round(statistics.mean(overlap), 3) if overlap else None,
        "note": "rank-bm25 BM25Okapi uses a different IDF (with an epsilon floor) than bm25s' Lucene variant; "
        "the overlap shows how similar the rankings are, the latency compares the engines.",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--qasper", type=Path, required=True)
    parser.add_argument("--home", type=Path, help="Corpus home (default: a fresh temporary folder).")
    parser.add_argument("--preset", default=None)
    parser.add_argument("--queries", type=int, default=200, help="Questions sampled for the latency test.")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    home = args.home or Path(tempfile.mkdtemp(prefix="lit3r-bench-"))
    settings = load_settings(args.preset, home=home)
    result: dict = {"file": str(args.qasper), "home": str(home), "settings": settings.index_shape()}
    result["load_average_before"] = [round(x, 2) for x in os.getloadavg()]

    with CorpusStore(home) as store:
        _, seconds = timed(ingest, [args.qasper], store)
        result["ingest_s"] = round(seconds, 2)
        result["papers"] = store.count_papers()
        _, seconds = timed(ingest, [args.qasper], store)
        result["ingest_unchanged_s"] = round(seconds, 2)
        build, seconds = timed(build_index, settings, store)
        result["index_s"] = round(seconds, 2)
        result["index_stages_s"] = {k: round(v, 2) for k, v in build.timings.items() if k.endswith("_s")}
        result["chunks"] = build.chunks
        result["chunks_per_s_embedded"] = round(build.chunks_embedded / build.timings["embed_chunks_s"], 1)
        _, seconds = timed(build_index, settings, store)
        result["index_unchanged_s"] = round(seconds, 2)

    index = CorpusIndex.open(settings)
    result["index_size_mb"] = round(index.size_bytes() / 1e6, 1)
    result["corpus_store_mb"] = round((home / "corpus.sqlite").stat().st_size / 1e6, 1)
    questions = [q["question"] for r in read_qasper_records(args.qasper).values() for q in r["qas"]]
    random.Random(0).shuffle(questions)
    result["bm25_latency"] = bm25_latency(index, questions[: args.queries], args.repeats)
    result["peak_rss_mb"] = round(peak_rss_mb(), 1)
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    result["cpu_count"] = os.cpu_count()
    emit(result, args.out)


if __name__ == "__main__":
    sys.exit(main())
