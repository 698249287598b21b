"""End-to-end cross-validation of the learned fusion by paper: train without a part's papers, retrieve that part.

1. Collect every question's candidate lists once (:func:`lit3r.evals.fusion_training.collect`, what
   ``lit3r eval train-fusion`` does), with the default retriever settings.
2. For each part ``i`` of ``--parts n`` (papers by SHA-1 of their id modulo n, the parts of
   ``bench_retrieval_ablations.py``), fit the model on the other parts' lists only and write it to
   ``<out-dir>/fusion-not-<i>.json``.
3. Print the ablation commands that retrieve part ``i`` with the model that never saw it (``--run`` runs them).
4. With ``--run`` (or ``--summarise`` alone, over earlier runs' files), pool every configuration's metrics over the
   parts, weighted by their questions, into ``<out-dir>/fusion-cv-pooled.json`` and print them.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_fusion_cv.py --qasper QASPER --parts 4 --out-dir bench-out --run
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from lit3r.app.session import Session
from lit3r.cli.evaluate import eval_settings
from lit3r.evals import fusion_training as training
from lit3r.index.corpus_index import CorpusIndex
from lit3r.retrieval.learned import save_model
from lit3r.settings import Settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--qasper", type=Path, required=True)
    parser.add_argument("--home", type=Path, default=Path(".lit3r"))
    parser.add_argument("--parts", type=int, default=4)
    parser.add_argument("--out-dir", type=Path, default=Path("bench-out"))
    parser.add_argument("--run", action="store_true", help="Run the held-out ablation of every part.")
    parser.add_argument("--summarise", action="store_true", help="Only pool the parts' results of an earlier run.")
    args = parser.parse_args(argv)
    if args.summarise:
        return summarise(args.out_dir, args.parts)
    settings = eval_settings(Settings(home=args.home), args.qasper)
    index = CorpusIndex.open(settings)
    questions = training.qasper_questions(args.qasper, index)
    with Session(settings, index=index) as session:
        lists = training.collect(index, session.reranker, session.settings.retriever, questions)
    fold_of_list = np.array([training.paper_fold(p, args.parts) for p in lists.papers])
    commands = []
    for part in range(args.parts):
        path = args.out_dir / f"fusion-not-{part}.json"
        save_model(training.fit(lists, rows=(fold_of_list != part)[lists.list_id]), path)
        variant = f'held_out={{"fusion_model": "{path}"}}'
        commands.append(
            [
                sys.executable,
                str(Path(__file__).with_name("bench_retrieval_ablations.py")),
                "--qasper",
                str(args.qasper),
                "--home",
                str(args.home),
                "--part",
                f"{part}/{args.parts}",
                "--variant",
                variant,
                "--variant",
                'seed={"preset": "seed"}',
                "--out",
                str(args.out_dir / f"fusion-cv-part{part}.json"),
            ]
        )
    for command in commands:
        print(" ".join(command[1:]), file=sys.stderr)
        if args.run:
            subprocess.run(command, check=True)
    return summarise(args.out_dir, args.parts) if args.run else 0


COLUMNS = (
    ("open_domain", "paper_recall@10"),
    ("open_domain", "evidence_recall@1"),
    ("open_domain", "evidence_recall@10"),
    ("open_domain", "evidence_recall@50"),
    ("open_domain", "mrr"),
    ("in_paper", "evidence_recall@1"),
    ("in_paper", "evidence_recall@5"),
    ("in_paper", "mrr"),
)


def summarise(out_dir: Path, parts: int) -> int:
    """Every configuration's metrics pooled over the parts (weighted by questions), written and printed."""
    pooled: dict[str, dict] = {}
    for part in range(parts):
        report = json.loads((out_dir / f"fusion-cv-part{part}.json").read_text(encoding="utf-8"))
        for name, found in report["variants"].items():
            n = found["metrics"]["open_domain"]["questions"]
            row = pooled.setdefault(name, {"questions": 0, **{f"{s}/{m}": 0.0 for s, m in COLUMNS}})
            row["questions"] += n
            for setting, metric in COLUMNS:
                row[f"{setting}/{metric}"] += found["metrics"][setting][metric] * n
    for row in pooled.values():
        for key in row:
            if key != "questions":
                row[key] = round(row[key] / row["questions"], 4)
    (out_dir / "fusion-cv-pooled.json").write_text(json.dumps(pooled, indent=1), encoding="utf-8")
    for name, row in pooled.items():
        print(f"{name:<10} " + " ".join(f"{key} {value:.3f}" for key, value in row.items() if "/" in key))
    return 0


if __name__ == "__main__":
    sys.exit(main())
