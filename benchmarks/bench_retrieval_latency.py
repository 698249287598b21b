"""Latency of the whole offline retrieval for one question, per stage, against BM25 alone in the same run.

For each question of a paper-hash subset, with the query-vector cache emptied first (cold: nothing a previous
question or configuration encoded is reused), it times chunk BM25 alone (depth 100), the hybrid chunk search and
the agent's whole retrieval (:meth:`lit3r.app.session.Session.retrieve`: every subquery's sweep, PRF, candidates
and rerank, verification, Ranking A, Relate, fusion) for each variant, open domain. Each run reports medians over
the questions; the report gives every run and the median of the runs' medians, and each median as a ratio to BM25's
in the same run, since the machine is shared (the load average is recorded next to each run).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_retrieval_latency.py --qasper QASPER --part 0/8 --runs 3 \
        --variant default={} --variant 'seed={"preset": "seed"}' --out bench-out/retrieval-latency.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from bench_retrieval_ablations import _resolve, paper_part

from lit3r.app.session import Session
from lit3r.cli.evaluate import eval_settings
from lit3r.evals.qasper import load_questions
from lit3r.evals.retrieval import stage_timings
from lit3r.index.corpus_index import CorpusIndex
from lit3r.retrieval.learned import _chunk_words
from lit3r.retrieval.search import rank_chunks
from lit3r.settings import Settings

FORGET_PASSAGES = False
"""--cold-passages: also forget the passages' tokens and words the lexical reranker and the learned fusion keep."""


def _cold(index: CorpusIndex, reranker=None) -> None:
    """Forget every cached query vector (and, with --cold-passages, every remembered passage's tokens and words)."""
    cache = getattr(index.encoder, "_vectors", None)
    if cache is not None:
        cache.clear()
    if FORGET_PASSAGES:
        _chunk_words.cache_clear()
        tokens = getattr(reranker, "_passage_tokens", None)
        if tokens is not None:
            tokens.clear()


def _timed(index: CorpusIndex, question: str, mode: str) -> float:
    start = time.perf_counter()
    rank_chunks(index, question, mode, 100)
    return (time.perf_counter() - start) * 1000


def one_run(sessions: dict[str, Session], index: CorpusIndex, questions: list[str]) -> dict:
    """Median milliseconds per configuration (and per stage of each variant) over ``questions``, cold each time."""
    times: dict[str, list[float]] = {"bm25": [], "hybrid": [], **{name: [] for name in sessions}}
    stages: dict[str, list[dict[str, float]]] = {name: [] for name in sessions}
    for question in questions:
        _cold(index)
        times["bm25"].append(_timed(index, question, "bm25"))
        _cold(index)
        times["hybrid"].append(_timed(index, question, "hybrid"))
        for name, session in sessions.items():
            _cold(index, session.reranker)
            start = time.perf_counter()
            found = session.retrieve(question)
            times[name].append((time.perf_counter() - start) * 1000)
            stages[name].append(stage_timings(found.events))
    medians = {name: round(statistics.median(values), 2) for name, values in times.items()}
    report = {
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "median_ms": medians,
        "ratio_to_bm25": {name: round(ms / medians["bm25"], 1) for name, ms in medians.items()},
        "stage_median_ms": {},
    }
    for name, rows in stages.items():
        names = dict.fromkeys(stage for row in rows for stage in row)
        report["stage_median_ms"][name] = {s: round(statistics.median(r.get(s, 0.0) for r in rows), 2) for s in names}
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--qasper", type=Path, required=True)
    parser.add_argument("--home", type=Path, default=Path(".lit3r"))
    parser.add_argument("--part", default="0/8", help="i/n: questions of papers whose hash is i mod n.")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--variant", action="append", default=[], help='name={"setting": value} (repeatable).')
    parser.add_argument("--cold-passages", action="store_true", help="Forget remembered passage tokens too.")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    global FORGET_PASSAGES
    FORGET_PASSAGES = args.cold_passages
    part, n = (int(x) for x in args.part.split("/"))
    settings = eval_settings(Settings(home=args.home), args.qasper)
    index = CorpusIndex.open(settings)
    questions = [
        q.text
        for q in load_questions(args.qasper)
        if q.evidence_paragraphs and q.paper_id in index.papers and paper_part(q.paper_id, n) == part
    ]
    with Session(settings, index=index) as base:
        sessions = {}
        for name, update in (_resolve(spec) for spec in args.variant or ["default={}"]):
            retriever = base.settings.retriever.model_copy(update=update)
            ablated = base.settings.model_copy(update={"retriever": retriever})
            sessions[name] = Session(ablated, index=index, reranker=base.reranker, gate=base.gate)
        for session in sessions.values():  # load every model and index once before timing
            session.retrieve(questions[0])
        runs = []
        for run in range(args.runs):
            runs.append(one_run(sessions, index, questions))
            print(
                f"run {run + 1}: {json.dumps(runs[-1]['median_ms'])} load {runs[-1]['load_average']}", file=sys.stderr
            )
    names = list(runs[0]["median_ms"])
    report = {
        "qasper": str(args.qasper),
        "part": args.part,
        "questions": len(questions),
        "runs": runs,
        "median_of_runs_ms": {name: round(statistics.median(r["median_ms"][name] for r in runs), 2) for name in names},
        "median_ratio_to_bm25": {
            name: round(statistics.median(r["ratio_to_bm25"][name] for r in runs), 1) for name in names
        },
        "cpu_count": os.cpu_count(),
        "cold_passages": args.cold_passages,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps(report["median_of_runs_ms"]), json.dumps(report["median_ratio_to_bm25"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
