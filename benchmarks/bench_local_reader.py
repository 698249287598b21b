"""The local profile on a fixed sample of QASPER questions: answers, evidence, abstention, fallbacks and cost.

Run from the repository root (the eval index of DATA must exist: ``lit3r eval qasper DATA --answers`` builds it)::

    python benchmarks/bench_local_reader.py run DATA --preset local --every 30 --out bench-out/local-1.5b.jsonl
    python benchmarks/bench_local_reader.py score DATA --out bench-out/local-1.5b.jsonl [--json report.json]

The sample: the questions ``eval qasper`` answers (file order, papers in the index, with annotations), every
``--every``-th from ``--offset`` (so ``--every 8`` gives 1 question in 8, a fixed, stated sample; unanswerable
ones included). ``run`` answers them with one :class:`~lit3r.app.session.Session` (one llama.cpp server for the
run), in paper unless ``--open-domain``, and appends one JSON line per question as soon as it is answered: the
QASPER prediction, the answer, fallbacks, the claim judge's supported fraction, every model call (name,
seconds, prompt and completion tokens), llama.cpp's own timings for the question (read from the server's log:
prompt tokens evaluated, prefix tokens reused from its cache, milliseconds of prompt evaluation and generation)
and the 1-minute load average before and after. A question already in the file is skipped, so a run that died
resumes where it stopped.

``score`` (``--baseline P.jsonl``: also the Answer F1 of another reader's ``eval qasper --predictions`` on the same
questions) reads the file and prints the official QASPER Answer F1 (overall, by type and on each half of the papers,
``by_paper_half``) and Evidence F1, the predicted answers derived again from the stored answers with the current
rule (:func:`lit3r.evals.answers.answer_text`, so a file written before a rule changed scores by the new one),
abstention precision and recall on unanswerable questions (every annotator says so, as the project's
abstention metrics count them; and, as ``*_some``, at least one does), the fallback rate, and medians of model calls,
tokens and seconds (wall and llama.cpp's) per question. With ``--grounding`` it also computes ALCE citation
recall and precision with the LLM judge over the same answers (the first ``--limit`` of them, when given; it
starts the preset's server again and judges with ``grounding.judge=llm`` whatever the preset's in-loop judge).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench_reader_rules import half

from lit3r.evals.answers import CachedPapers, answer_text, gold_subset, to_prediction
from lit3r.evals.qasper import QasperQuestion, load_questions
from lit3r.evals.qasper_score import UNANSWERABLE, load_gold, read_predictions, score_predictions
from lit3r.models import Answer
from lit3r.settings import Settings, load_settings

PROMPT_EVAL = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
GENERATION = re.compile(r"\beval time =\s*([\d.]+) ms /\s*(\d+) runs")
PREFIX_HIT = re.compile(r"(\d+) prefix-match hit")
WHEEL_CALL = re.compile(r"call \d+: (\d+) prompt \((\d+) reused\) \+ (\d+) completion tokens in ([\d.]+) s")


def sample(data: Path, settings: Settings, every: int, offset: int) -> list[QasperQuestion]:
    """Every ``every``-th question ``eval qasper`` would answer, from ``offset``."""
    from lit3r.index.corpus_index import CorpusIndex

    papers = CorpusIndex.open(settings).papers
    questions = [q for q in load_questions(data) if q.paper_id in papers and q.annotations]
    return questions[offset::every]


def eval_settings(preset: str, home: Path, data: Path) -> Settings:
    from lit3r.cli.evaluate import eval_settings as under_home

    return under_home(load_settings(preset, home=home), data)


def llama_timings(log_text: str) -> dict[str, float]:
    """The server's own figures in a stretch of its log: prompt tokens evaluated and reused, milliseconds.

    llama.cpp's server splits prompt evaluation from generation; lit3r's wheel server logs one line a call
    (``call N: P prompt (R reused) + C completion tokens in S s``), read here as the tokens and the call's whole
    time (``server_ms``), with no split (``prompt_ms`` and ``generation_ms`` stay 0, the rates unknown)."""
    prompt = [(float(ms), int(n)) for ms, n in PROMPT_EVAL.findall(log_text)]
    generated = [(float(ms), int(n)) for ms, n in GENERATION.findall(log_text)]
    wheel = [] if prompt else WHEEL_CALL.findall(log_text)
    return {
        "prompt_ms": round(sum(ms for ms, _ in prompt), 1),
        "prompt_tokens_evaluated": sum(n for _, n in prompt) + sum(int(p) - int(r) for p, r, _, _ in wheel),
        "prefix_tokens_reused": sum(int(n) for n in PREFIX_HIT.findall(log_text)) + sum(int(r) for _, r, _, _ in wheel),
        "generation_ms": round(sum(ms for ms, _ in generated), 1),
        "generated_tokens": sum(n for _, n in generated) + sum(int(c) for _, _, c, _ in wheel),
        "server_ms": round(
            sum(ms for ms, _ in prompt) + sum(ms for ms, _ in generated) + sum(float(t) * 1000 for *_, t in wheel), 1
        ),
    }


def model_calls(trace_path: str | None) -> list[dict[str, Any]]:
    """The model calls of a question's trace: name, seconds, tokens, error."""
    if not trace_path or not Path(trace_path).is_file():
        return []
    events = json.loads(Path(trace_path).read_text(encoding="utf-8")).get("events") or []
    calls = []
    for event in events:
        if event.get("type") != "llm" or "prompt_tokens" not in (event.get("data") or {}):
            continue
        data = event["data"]
        calls.append(
            {
                "name": event.get("name"),
                "seconds": round(float(event.get("duration_ms") or 0) / 1000, 2),
                "prompt_tokens": data.get("prompt_tokens", 0),
                "completion_tokens": data.get("completion_tokens", 0),
                "error": data.get("error"),
            }
        )
    return calls


def done_ids(out: Path) -> set[str]:
    if not out.is_file():
        return set()
    return {json.loads(line)["question_id"] for line in out.read_text(encoding="utf-8").splitlines() if line.strip()}


def run(args: argparse.Namespace) -> None:
    from lit3r.app.session import Session
    from lit3r.corpus.store import CorpusStore
    from lit3r.llm.local_server import LOG_FILE, local_llm

    settings = eval_settings(args.preset, args.home, args.data)
    questions = sample(args.data, settings, args.every, args.offset)[: args.limit]
    done = done_ids(args.out)
    todo = [q for q in questions if q.id not in done]
    print(f"{len(questions)} questions in the sample, {len(todo)} to answer -> {args.out}", flush=True)
    log_path = args.home / LOG_FILE
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with local_llm(settings, home=args.home) as served, Session(served) as session, CorpusStore(settings.home) as store:
        papers = CachedPapers(store.get)
        for number, question in enumerate(todo, 1):
            log_start = log_path.stat().st_size if log_path.is_file() else 0
            load_before = os.getloadavg()[0]
            started = time.perf_counter()
            allowed = None if args.open_domain else [question.paper_id]
            try:
                answer = session.ask(question.text, allowed_papers=allowed)
            except Exception as exc:  # recorded, never fatal: the scorer counts it as missing
                row: dict[str, Any] = {"question_id": question.id, "error": f"{type(exc).__name__}: {exc}"}
            else:
                row = answer_row(question, answer, papers)
            row.update(
                setting="open_domain" if args.open_domain else "in_paper",
                preset=args.preset,
                model=served.llm.model,
                wall_s=round(time.perf_counter() - started, 2),
                load_before=round(load_before, 2),
                load_after=round(os.getloadavg()[0], 2),
            )
            with log_path.open("rb") as log:
                log.seek(log_start)
                row["llama"] = llama_timings(log.read().decode("utf-8", errors="replace"))
            with args.out.open("a", encoding="utf-8") as out:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
            print(f"[{number}/{len(todo)}] {row['wall_s']:.0f} s load {row['load_before']:.1f} "
                  f"{row.get('predicted_answer', row.get('error', ''))[:100]!r}", flush=True)  # fmt: skip


def answer_row(question: QasperQuestion, answer: Answer, papers: CachedPapers) -> dict[str, Any]:
    """What one answered question records."""
    calls = model_calls(answer.trace_path)
    prediction = to_prediction(question.id, answer, papers)
    chunks = to_prediction(question.id, answer, papers, quoted_only=False)
    return {
        **prediction,
        "predicted_evidence_chunks": chunks["predicted_evidence"],
        "question": question.text,
        "gold_unanswerable": question.unanswerable,
        "answer": answer.model_dump(mode="json"),
        "fallback": any(f.stage == "read" for f in answer.fallback_steps),
        "supported_fraction": answer.supported_fraction,
        "calls": calls,
    }


def quoted_evidence(row: dict[str, Any]) -> list[str]:
    """The paragraphs the answer's quotes stand in (rows written before 2026-12-01 kept them under
    ``predicted_evidence_quoted`` and the chunk-level evidence as ``predicted_evidence``)."""
    return row["predicted_evidence_quoted"] if "predicted_evidence_quoted" in row else row["predicted_evidence"]


def chunk_evidence(row: dict[str, Any]) -> list[str]:
    """Every paragraph of the cited chunks (either row format)."""
    return row["predicted_evidence"] if "predicted_evidence_quoted" in row else row["predicted_evidence_chunks"]


def median(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def score(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for line in args.out.read_text(encoding="utf-8").splitlines() if line.strip()]
    answered = [
        {**r, "predicted_answer": answer_text(Answer.model_validate(r["answer"]))} for r in rows if "error" not in r
    ]
    predictions = {r["question_id"]: {**r, "predicted_evidence": quoted_evidence(r)} for r in answered}
    chunks = {r["question_id"]: {**r, "predicted_evidence": chunk_evidence(r)} for r in answered}
    all_gold = load_gold(args.data)
    gold = gold_subset(all_gold, [r["question_id"] for r in rows])
    scores = score_predictions(gold, predictions)
    paper_of = {qa["question_id"]: paper for paper, record in all_gold.items() for qa in record["qas"]}
    by_half: dict[str, Any] = {}
    for number in (0, 1):  # the two halves of the papers by hash, as bench_reader_rules.py splits them
        ids = [q for q in predictions if half(paper_of[q]) == number]
        if ids:
            part = score_predictions(gold_subset(all_gold, ids), {q: predictions[q] for q in ids})
            by_half[str(number)] = {"questions": len(ids), **{k: part[k] for k in ("answer_f1", "evidence_f1")}}
    abstained = [r["predicted_answer"] == UNANSWERABLE for r in answered]
    unanswerable = [bool(r["gold_unanswerable"]) for r in answered]
    hits = sum(a and u for a, u in zip(abstained, unanswerable, strict=True))
    by_id = {q.id: q for q in load_questions(args.data)}
    some = [any(a.get("unanswerable") for a in by_id[r["question_id"]].annotations) for r in answered]
    some_hits = sum(a and u for a, u in zip(abstained, some, strict=True))
    calls = [len(r["calls"]) for r in answered]
    tokens = [sum(c["prompt_tokens"] + c["completion_tokens"] for c in r["calls"]) for r in answered]
    llama = [r["llama"] for r in answered]
    report = {
        "questions": len(rows),
        "failed": len(rows) - len(answered),
        "setting": sorted({r["setting"] for r in rows}),
        "model": sorted({r["model"] for r in rows}),
        "answer_f1": scores["answer_f1"],
        "by_paper_half": by_half,
        "answer_f1_by_type": scores["answer_f1_by_type"],
        "evidence_f1": scores["evidence_f1"],
        "evidence_f1_chunks": score_predictions(gold, chunks)["evidence_f1"],
        "abstained": sum(abstained),
        "gold_unanswerable": sum(unanswerable),
        "abstention_precision": round(hits / sum(abstained), 3) if sum(abstained) else None,
        "abstention_recall": round(hits / sum(unanswerable), 3) if sum(unanswerable) else None,
        "gold_unanswerable_by_some_annotator": sum(some),
        "abstention_precision_some": round(some_hits / sum(abstained), 3) if sum(abstained) else None,
        "abstention_recall_some": round(some_hits / sum(some), 3) if sum(some) else None,
        "fallback_rate": round(sum(r["fallback"] for r in answered) / len(answered), 3) if answered else None,
        "supported_fraction_mean": _mean([r["supported_fraction"] for r in answered]),
        "model_calls_median": median(calls),
        "model_calls_max": max(calls, default=None),
        "tokens_median": median(tokens),
        "wall_s_median": median([r["wall_s"] for r in answered]),
        "wall_s_max": max((r["wall_s"] for r in answered), default=None),
        "llama_s_median": median([t.get("server_ms", t["prompt_ms"] + t["generation_ms"]) / 1000 for t in llama]),
        "prompt_tokens_evaluated_median": median([t["prompt_tokens_evaluated"] for t in llama]),
        "prefix_tokens_reused_median": median([t["prefix_tokens_reused"] for t in llama]),
        "prompt_tok_per_s": _rate(llama, "prompt_tokens_evaluated", "prompt_ms"),
        "generation_tok_per_s": _rate(llama, "generated_tokens", "generation_ms"),
        "load_median": median([r["load_before"] for r in rows]),
    }
    if args.baseline:  # another reader's predictions (``lit3r eval qasper --predictions``) on the same questions
        baseline = read_predictions(args.baseline)
        missing = sorted({r["question_id"] for r in rows} - set(baseline))
        if missing:
            raise SystemExit(
                f"--baseline {args.baseline}: no prediction for {len(missing)} questions, e.g. {missing[0]}"
            )
        report["baseline"] = {
            "predictions": str(args.baseline),
            "answer_f1": score_predictions(gold, baseline)["answer_f1"],
        }
    if args.grounding:
        report.update(citations(args, answered))
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(statistics.fmean(present), 3) if present else None


def _rate(timings: list[dict[str, float]], tokens: str, ms: str) -> float | None:
    total_ms = sum(t[ms] for t in timings)
    return round(sum(t[tokens] for t in timings) / total_ms * 1000, 2) if total_ms else None


def citations(args: argparse.Namespace, answered: list[dict[str, Any]]) -> dict[str, Any]:
    """ALCE citation recall and precision of the stored answers, judged by the preset's model."""
    from lit3r.evals.grounding import citation_report, index_passages
    from lit3r.grounding.judges import make_judge
    from lit3r.index.corpus_index import CorpusIndex
    from lit3r.llm.local_server import local_llm
    from lit3r.llm.wrapper import LLM

    settings = eval_settings(args.preset, args.home, args.data)
    pairs = [(None, Answer.model_validate(r["answer"])) for r in answered[: args.limit]]
    with local_llm(settings, home=args.home) as served:
        from lit3r.evals.grounding import GroundingEvaluation

        grounding = served.grounding.model_copy(update={"judge": "llm"})
        judge = make_judge(grounding, llm=LLM.from_settings(served.llm))
        setup = GroundingEvaluation(judge, index_passages(CorpusIndex.open(settings)))
        report = citation_report(pairs, setup)  # type: ignore[arg-type]
        return {"grounding_judge": judge.name, "grounding_answers": len(pairs), **report}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["run", "score"])
    parser.add_argument("data", type=Path, help="the QASPER file")
    parser.add_argument("--out", type=Path, required=True, help="per-question JSON lines (appended, resumable)")
    parser.add_argument("--home", type=Path, default=Path(".lit3r"))
    parser.add_argument("--preset", default="local")
    parser.add_argument("--every", type=int, default=30, help="take every N-th question")
    parser.add_argument("--offset", type=int, default=0, help="the first question taken (0-based)")
    parser.add_argument("--limit", type=int, default=None, help="at most this many questions of the sample")
    parser.add_argument("--open-domain", action="store_true", help="search the whole corpus, not the paper")
    parser.add_argument("--grounding", action="store_true", help="score: ALCE citation metrics, LLM judge")
    parser.add_argument(
        "--baseline", type=Path, help="score: Answer F1 of these predictions (eval qasper --predictions) beside"
    )
    parser.add_argument("--json", type=Path, help="score: write the report here too")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        sys.exit(f"{args.data}: no such file")
    if args.every < 1 or args.offset < 0:
        sys.exit("--every must be at least 1 and --offset at least 0")
    (run if args.command == "run" else score)(args)


if __name__ == "__main__":
    main()
