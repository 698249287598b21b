"""Abstention on questions a corpus cannot answer: ask each off-topic question in a home, count the abstentions.

Run from the repository root on a fresh demo home (no calibration run, so no stored gate)::

    lit3r --home /tmp/demo-home demo
    python benchmarks/bench_offtopic.py --home /tmp/demo-home --out bench-out/offtopic.json

``--questions`` defaults to ``lit3r/evals/offtopic_questions.txt`` (questions about nothing the demo papers discuss;
``benchmarks/questions_offtopic_2.txt`` is a second set, half of it near the demo's field); the questions that
should be answered are the demo's own example questions, or those of ``--answerable FILE`` (one a line, optionally a
tab and the words a right answer holds, as in ``benchmarks/questions_demo_answerable.txt``: the report then counts
the answers holding them; "Yes" or "No" there is a yes/no question's verdict, which the answer's option must be, as
in ``benchmarks/questions_demo_yesno.txt``). The report gives abstention precision and recall with both kinds; every
answer's text, ``answers_question`` and ``confidence`` are in it.
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


def read_answerable(path: Path) -> list[tuple[str, str | None]]:
    """``(question, words a right answer holds or None)`` for each line ``question[<tab>words]`` of ``path``."""
    found = []
    for line in read_questions(path):
        question, _, words = line.partition("\t")
        found.append((question.strip(), words.strip() or None))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--questions", type=Path, default=DEFAULT)
    parser.add_argument("--answerable", type=Path, help="questions that should be answered (default: the demo's)")
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--min-coverage",
        type=float,
        help="the offline reader's coverage floor for this run (default: the shipped MIN_COVERAGE)",
    )
    args = parser.parse_args()
    if args.min_coverage is not None:  # the reader's default, replaced for this run only
        extractive_answer.__kwdefaults__["min_coverage"] = args.min_coverage
    offtopic = [(q, None) for q in read_questions(args.questions)]
    answerable = read_answerable(args.answerable) if args.answerable else [(q, None) for q in ANSWERABLE]
    rows = []
    with Session(load_settings(home=args.home)) as session:
        for kind, questions in (("offtopic", offtopic), ("answerable", answerable)):
            for question, words in questions:
                answer = session.ask(question)
                rows.append({
                    "kind": kind, "question": question, "abstained": not answer.sufficient, "text": answer.text,
                    "answers_question": answer.answers_question, "confidence": answer.confidence,
                })  # fmt: skip
                if words in ("Yes", "No"):  # a yes/no question: its verdict, not the words, must match
                    rows[-1]["holds_answer"] = answer.sufficient and answer.option == words
                elif words is not None:
                    rows[-1]["holds_answer"] = answer.sufficient and words.lower() in answer.text.lower()
                print(json.dumps(rows[-1]), flush=True)
    tp = sum(r["abstained"] for r in rows if r["kind"] == "offtopic")
    fp = sum(r["abstained"] for r in rows if r["kind"] == "answerable")
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / len(offtopic) if offtopic else None
    f1 = 2 * precision * recall / (precision + recall) if precision and recall else 0.0
    report = {"home": str(args.home), "min_coverage": args.min_coverage,
              "offtopic": len(offtopic), "answerable": len(answerable),
              "answers_holding_their_words": sum(r.get("holds_answer", False) for r in rows) if args.answerable
              else None,
              "abstention_precision": precision, "abstention_recall": recall, "abstention_f1": f1,
              "rows": rows}  # fmt: skip
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}))


if __name__ == "__main__":
    main()
