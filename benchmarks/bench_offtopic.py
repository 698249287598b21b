"""Abstention on questions a corpus cannot answer: ask each off-topic question in a home, count the abstentions.

Run from the repository root on a fresh demo home (no calibration run, so no stored gate)::

    lit3r --home /tmp/demo-home demo
    python benchmarks/bench_offtopic.py --home /tmp/demo-home --out bench-out/offtopic.json

``--questions`` defaults to ``lit3r/evals/offtopic_questions.txt`` (questions about nothing the demo papers
discuss); ``--answerable`` adds questions that should be answered (default: the demo's own example questions),
so the report gives abstention precision and recall with both kinds. Every answer's text, ``answers_question``
and ``confidence`` are in the report.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from lit3r.app.session import Session
from lit3r.reading.extractive import extractive_answer
from lit3r.settings import load_settings

DEFAULT = Path(__file__).resolve().parents[1] / "lit3r" / "evals" / "offtopic_questions.txt"
ANSWERABLE = [
    "How much did evidence verification reduce unsupported claims?",
    "Which BM25 configuration was best?",
    "Which fusion method reached the highest paper-level recall at 10 on the LocatorQA development set?",
    "How many questions does LocatorQA contain, and how many of them are unanswerable?",
    "What candidate budget is recommended for cross-encoder reranking, and what does it cost?",
]


def read_questions(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--questions", type=Path, default=DEFAULT)
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--min-coverage",
        type=float,
        help="the offline reader's coverage floor for this run (default: the shipped MIN_COVERAGE)",
    )
    args = parser.parse_args()
    if args.min_coverage is not None:  # the reader's default, replaced for this run only
        extractive_answer.__kwdefaults__["min_coverage"] = args.min_coverage
    offtopic = read_questions(args.questions)
    rows = []
    with Session(load_settings(home=args.home)) as session:
        for kind, questions in (("offtopic", offtopic), ("answerable", ANSWERABLE)):
            for question in questions:
                answer = session.ask(question)
                rows.append({
                    "kind": kind, "question": question, "abstained": not answer.sufficient, "text": answer.text,
                    "answers_question": answer.answers_question, "confidence": answer.confidence,
                })  # fmt: skip
                print(json.dumps(rows[-1]), flush=True)
    tp = sum(r["abstained"] for r in rows if r["kind"] == "offtopic")
    fp = sum(r["abstained"] for r in rows if r["kind"] == "answerable")
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / len(offtopic) if offtopic else None
    f1 = 2 * precision * recall / (precision + recall) if precision and recall else 0.0
    report = {"home": str(args.home), "min_coverage": args.min_coverage,
              "offtopic": len(offtopic), "answerable": len(ANSWERABLE),
              "abstention_precision": precision, "abstention_recall": recall, "abstention_f1": f1,
              "rows": rows}  # fmt: skip
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}))


if __name__ == "__main__":
    main()
