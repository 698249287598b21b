"""Retrieval ablations on a paper-hash subset of QASPER, and where the gold evidence sits at each stage.

Every variant is the agent's own retrieval (:meth:`lit3r.app.session.Session.retrieve`, the path ``lit3r ask``
runs) with some retriever settings changed, over the prebuilt evaluation index. Questions are chosen by a hash of
their paper id (``--part i/n`` keeps papers whose hash is ``i`` mod ``n``), never the first N, so subsets are
spread over the corpus and disjoint parts can be held out.

Per question and variant, besides the metrics of ``lit3r eval qasper --retrieval``, the trace gives the rank of
the gold paper and the first gold chunk at each stage of the question's own subquery (first sweep, after PRF,
candidates, its pool share) and in the merged pool and final papers, so the stage that loses them shows.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_retrieval_ablations.py --qasper QASPER --part 0/4 \
        --variant 'seed={"preset": "seed"}' --variant default={} --out bench-out/ablations.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

from lit3r.app.session import Session
from lit3r.cli.evaluate import eval_settings
from lit3r.evals.metrics import QuestionResult, summarise
from lit3r.evals.qasper import evidence_chunks, load_questions
from lit3r.evals.retrieval import make_runner, stage_timings
from lit3r.index.corpus_index import CorpusIndex
from lit3r.settings import Settings, load_preset
from lit3r.settings.retrieval import RetrieverSettings


def paper_part(paper_id: str, n: int) -> int:
    """The part (0..n-1) a paper falls in: its SHA-1 modulo ``n``."""
    return int(hashlib.sha1(paper_id.encode()).hexdigest(), 16) % n


def _rank(ranking: list[str], gold: set[str]) -> int | None:
    return next((i for i, item in enumerate(ranking, start=1) if item in gold), None)


def stage_ranks(events: list, question: str, gold_paper: str, gold_chunks: set[str], paper_of: dict) -> dict:
    """Gold ranks in the question's own subquery (sweep, PRF fusion, candidates, pool share), over subqueries."""
    out: dict = {}
    for event in events:
        if event.type != "ranking" or event.name != "retrieve_subquery":
            continue
        data = event.data
        own = data["subquery"] == question
        tag = "question" if own else f"keywords{len([k for k in out if k.startswith('keywords')])}"
        sweep = [p for p, _s in data["sweeps"]["original"]["fused"]]
        papers = [p for p, _s in data["papers"]]
        pool = [c for c, _s in data["pool"]]
        out[tag] = {
            "paper_sweep": _rank(sweep, {gold_paper}),
            "paper_fused": _rank(papers, {gold_paper}),
            "chunk_candidates": _rank(data["candidates"], gold_chunks),
            "chunk_pool": _rank(pool, gold_chunks),
            "pool_papers": _rank(list(dict.fromkeys(paper_of[c] for c in pool)), {gold_paper}),
            "prf_top_is_gold": None if not data["prf"] else data["prf"]["top_paper"] == gold_paper,
        }
    return out


def run_variant(base: Session, update: dict, questions, gold, paper_of) -> dict:
    """Metrics and per-question stage ranks of one variant over both settings."""
    retriever = base.settings.retriever.model_copy(update=update)
    RetrieverSettings.model_validate(retriever.model_dump())  # a bad override fails before any question runs
    settings = base.settings.model_copy(update={"retriever": retriever})
    session = Session(settings, index=base.index, reranker=base.reranker, chat_model=base.chat_model, gate=base.gate)
    results: dict[str, list[QuestionResult]] = {"open_domain": [], "in_paper": []}
    stages: dict[str, list] = {"open_domain": [], "in_paper": []}
    for q in questions:
        for setting, allowed in (("open_domain", None), ("in_paper", [q.paper_id])):
            start = time.perf_counter()
            found = session.retrieve(q.text, allowed_papers=allowed)
            ms = (time.perf_counter() - start) * 1000
            chunks = [c for c, _s in found.pool]
            papers = [p for p, _s in found.final_papers]
            results[setting].append(
                QuestionResult(q.id, papers, chunks, q.paper_id, gold[q.id], ms, stage_timings(found.events))
            )
            ranks = stage_ranks(found.events, found.question, q.paper_id, gold[q.id], paper_of)
            ranks["final"] = {"chunk": _rank(chunks, gold[q.id]), "paper": _rank(papers, {q.paper_id})}
            stages[setting].append({"id": q.id, "paper": q.paper_id, **ranks})
    return {
        "settings": update,
        "metrics": {s: summarise(rs) for s, rs in results.items()},
        "per_question": stages,
    }


def run_baseline(base: Session, name: str, questions, gold) -> dict:
    """Metrics of one chunk-search configuration of ``lit3r eval qasper --retrieval`` (bm25, dense, hybrid)."""
    runner = make_runner(name, base)
    results: dict[str, list[QuestionResult]] = {"open_domain": [], "in_paper": []}
    for q in questions:
        for setting, allowed in (("open_domain", None), ("in_paper", [q.paper_id])):
            start = time.perf_counter()
            found = runner(q.text, allowed)
            ms = (time.perf_counter() - start) * 1000
            results[setting].append(QuestionResult(q.id, found.papers, found.chunks, q.paper_id, gold[q.id], ms))
    return {"metrics": {s: summarise(rs) for s, rs in results.items()}}


def _resolve(spec: str) -> tuple[str, dict]:
    name, _, body = spec.partition("=")
    update = json.loads(body or "{}")
    if "preset" in update:
        update = {**load_preset(update.pop("preset")).get("retriever", {}), **update}
    return name, update


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--qasper", type=Path, required=True, help="QASPER file whose evaluation index is built.")
    parser.add_argument("--home", type=Path, default=Path(".lit3r"), help="lit3r home holding evals/<hash>.")
    parser.add_argument("--part", default="0/4", help="i/n: questions of papers whose hash is i mod n.")
    parser.add_argument("--variant", action="append", default=[], help='name={"setting": value} (repeatable).')
    parser.add_argument("--baselines", default="bm25,dense,hybrid", help="Chunk-search configurations run too.")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    part, n = (int(x) for x in args.part.split("/"))
    settings = eval_settings(Settings(home=args.home), args.qasper)
    index = CorpusIndex.open(settings)
    paper_of = {c.id: c.paper_id for c in index.chunks}
    questions = [
        q
        for q in load_questions(args.qasper)
        if q.evidence_paragraphs and q.paper_id in index.papers and paper_part(q.paper_id, n) == part
    ]
    gold = {q.id: evidence_chunks(q, index.chunks_by_paper.get(q.paper_id, [])) for q in questions}
    questions = [q for q in questions if gold[q.id]]
    print(f"{len(questions)} questions in part {part}/{n}", file=sys.stderr)
    report: dict = {"qasper": str(args.qasper), "part": args.part, "questions": len(questions), "variants": {}}
    with Session(settings, index=index) as base:
        runs = [(name, None) for name in filter(None, args.baselines.split(","))]
        runs += [_resolve(spec) for spec in args.variant or ["default={}"]]
        for name, update in runs:
            started = time.perf_counter()
            if update is None:
                report["variants"][name] = run_baseline(base, name, questions, gold)
            else:
                report["variants"][name] = run_variant(base, update, questions, gold, paper_of)
            m = report["variants"][name]["metrics"]
            print(
                f"{name:<24} open ev@1 {m['open_domain']['evidence_recall@1']:.3f} "
                f"ev@10 {m['open_domain']['evidence_recall@10']:.3f} "
                f"paper@10 {m['open_domain']['paper_recall@10']:.3f} | "
                f"in-paper ev@1 {m['in_paper']['evidence_recall@1']:.3f} "
                f"ev@5 {m['in_paper']['evidence_recall@5']:.3f} "
                f"({time.perf_counter() - started:.0f} s, median "
                f"{statistics.median([m['open_domain']['latency_ms_median'], m['in_paper']['latency_ms_median']])} ms)",
                file=sys.stderr,
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
