"""Two QASPER prediction files side by side: Answer F1 overall, by half of the papers and on a family of questions,
and the answers that changed.

Run from the repository root on the predictions of ``lit3r eval qasper ... --answers --predictions P.jsonl``::

    python benchmarks/bench_qasper_compare.py ../shared/data/qasper/qasper-test-v0.3.corpus-and-dev-questions.json.gz \\
        BEFORE.jsonl AFTER.jsonl [--json R.json]

The halves are the papers of the file in file order, the first half and the rest (each paper's questions in its
half). The families are the questions the offline reader shapes by kind: ``languages``
(:func:`lit3r.reading.languages.asks_languages`) and ``names`` (:func:`lit3r.reading.named.asks_names`). Changed
answers are counted as gained, lost or equal in Answer F1 (the official scorer's best match over annotators).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from lit3r.corpus.parsers.qasper import read_qasper_records
from lit3r.evals.qasper_score import best_answer_match, read_predictions, references
from lit3r.reading.languages import asks_languages
from lit3r.reading.named import asks_names

FAMILIES = {"languages": asks_languages, "names": asks_names}


def scored(data: Path, predictions: Path) -> list[dict]:
    """One row per question of ``data``: its half, families, predicted answer and Answer F1."""
    records = read_qasper_records(data)
    said = read_predictions(predictions)
    rows = []
    for n, record in enumerate(records.values()):
        half = 0 if n < len(records) / 2 else 1
        for qa in record.get("qas") or []:
            answer = (said.get(qa["question_id"]) or {}).get("predicted_answer", "")
            f1, _ = best_answer_match(answer, references(qa))
            families = [name for name, asks in FAMILIES.items() if asks(qa["question"])]
            rows.append({"id": qa["question_id"], "half": half, "families": families, "answer": answer, "f1": f1})
    return rows


def family(rows: list[dict], name: str, mean) -> dict:
    selected = [r for r in rows if name in r["families"]]
    return {"questions": len(selected), "answer_f1": mean(selected)}


def summary(rows: list[dict]) -> dict:
    def mean(selected: list[dict]) -> float | None:
        return round(sum(r["f1"] for r in selected) / len(selected), 4) if selected else None

    return {
        "answer_f1": mean(rows),
        "halves": [mean([r for r in rows if r["half"] == h]) for h in (0, 1)],
        "families": {name: family(rows, name, mean) for name in FAMILIES},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    before, after = scored(args.data, args.before), scored(args.data, args.after)
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b["answer"] != a["answer"]]
    report = {
        "before": summary(before),
        "after": summary(after),
        "changed": {
            "answers": len(changed),
            "gained": sum(a["f1"] > b["f1"] for b, a in changed),
            "lost": sum(a["f1"] < b["f1"] for b, a in changed),
        },
    }
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
