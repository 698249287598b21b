"""Scores of finished evaluation runs by subset: QASPER predictions by halves of the papers and as abstentions,
and a ScholarQABench PubMedQA report on the questions the verdict model never trained on.

Run::

    python benchmarks/score_splits.py qasper P1.jsonl [P2.jsonl ...]     # eval qasper --predictions files
    python benchmarks/score_splits.py scholarqabench R.json              # eval pubmedqa ... --json report

``qasper``: for each predictions file, the official Answer F1 over all questions and over each half of the papers
(``bench_reader_rules.half``: the parity of the first byte of ``sha256(paper id)``, the split every reader
choice in docs/BENCHMARKS.md is cross-checked on), and abstention precision, recall and F1 against the questions
every annotator marked unanswerable. ``scholarqabench``: the report's accuracy on its questions that are PQA-L
test questions (matched by question text or first context, as ``lit3r.evals.verdict_training`` drops them
from training), the figure for a model trained on the other PQA-L questions.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench_qasper_pdf import QASPER
from bench_reader_rules import half
from report_file import emit

from lit3r.evals import qasper_score
from lit3r.evals.pubmedqa import load_pqal, load_scholarqabench
from lit3r.evals.verdict_training import scholarqabench_keys

PUBMEDQA = QASPER.parents[1] / "pubmedqa"
SCHOLARQABENCH = QASPER.parents[1] / "scholarqabench" / "pubmed_test.jsonl"


def qasper(predictions: list[Path], data: Path) -> dict:
    gold = qasper_score.load_gold(data)
    unanswerable = {q for q, refs in qasper_score.gold_references(gold).items() if all(r.type == "none" for r in refs)}
    halves = [{p: r for p, r in gold.items() if half(p) == h} for h in (0, 1)]
    report = {}
    for path in predictions:
        predicted = qasper_score.read_predictions(path)
        abstained = {q for q, row in predicted.items() if row["predicted_answer"] == qasper_score.UNANSWERABLE}
        hits = len(abstained & unanswerable)
        precision = hits / len(abstained) if abstained else 0.0
        recall = hits / len(unanswerable) if unanswerable else 0.0
        report[str(path)] = {
            "answer_f1": round(qasper_score.score_predictions(gold, predicted)["answer_f1"], 4),
            "answer_f1_halves": [round(qasper_score.score_predictions(g, predicted)["answer_f1"], 4) for g in halves],
            "abstained": len(abstained),
            "unanswerable_every_annotator": len(unanswerable),
            "abstention_precision": round(precision, 4),
            "abstention_recall": round(recall, 4),
            "abstention_f1": round(2 * precision * recall / (precision + recall), 4) if hits else 0.0,
        }
    return report


def scholarqabench(report_path: Path, pubmedqa: Path, data: Path) -> dict:
    rows = {r["id"]: r for r in json.loads(report_path.read_text())["own_rows"]}
    test_keys = set().union(*(scholarqabench_keys(i) for i in load_pqal(pubmedqa, split="test")))
    unseen = [rows[i.id] for i in load_scholarqabench(data) if scholarqabench_keys(i) & test_keys and i.id in rows]
    correct = sum(r["predicted"] == r["gold"] for r in unseen)
    return {"questions": len(unseen), "accuracy": round(100 * correct / len(unseen), 1) if unseen else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    q = commands.add_parser("qasper", help="QASPER predictions files")
    q.add_argument("predictions", type=Path, nargs="+")
    q.add_argument("--data", type=Path, default=QASPER)
    s = commands.add_parser("scholarqabench", help="an eval pubmedqa report of ScholarQABench's file")
    s.add_argument("report", type=Path)
    s.add_argument("--pubmedqa", type=Path, default=PUBMEDQA)
    s.add_argument("--data", type=Path, default=SCHOLARQABENCH)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.command == "qasper":
        emit(qasper(args.predictions, args.data), args.out)
    else:
        emit(scholarqabench(args.report, args.pubmedqa, args.data), args.out)


if __name__ == "__main__":
    main()
