"""The claim check's subject test (lit3r.grounding.subject) on labelled and off-topic claims: the figures its
levels were read from.

Run from the repository root::

    lit3r --home H eval scifact ../shared/data/scholarqabench/scifact_test.jsonl --setting open
    # it prints "indexing 182 papers under SCIFACT_HOME": that folder is the library of abstracts
    python benchmarks/bench_subject.py --scifact ../shared/data/scholarqabench/scifact_test.jsonl \\
        --scifact-home SCIFACT_HOME [--claims-home DEMO_HOME --claims-home PDF_HOME] [--out bench-out/subject.json]

For SciFact (the 182 abstracts as the library), the share of the claims whose gold
abstract reaches :data:`~lit3r.grounding.subject.MIN_SUBJECT`; for each ``--claims-home``, the best paper's share
of each set-4 claim of ``benchmarks/claims_demo.txt`` (claims no paper there treats) and how many reach the level.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench_claims import CLAIMS, read_claims

from lit3r.app.check import subject_shares
from lit3r.grounding.subject import MIN_SUBJECT
from lit3r.index.corpus_index import CorpusIndex
from lit3r.settings import load_settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scifact", type=Path, help="scifact_test.jsonl (its open-setting index must exist)")
    parser.add_argument("--scifact-home", type=Path, help="the folder the SciFact evaluation indexed its abstracts in")
    parser.add_argument("--claims-home", type=Path, action="append", default=[], help="a home for set 4's claims")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    report: dict = {"min_subject": MIN_SUBJECT}
    if args.scifact and args.scifact_home:
        from lit3r.evals.stance_data import load_scifact

        claims = load_scifact(args.scifact)
        index = CorpusIndex.open(load_settings(home=args.scifact_home))
        gold = [(subject_shares(index, c.claim) or {}).get(c.paper_id, 0.0) for c in claims]
        below = [(round(g, 3), c.claim) for g, c in zip(gold, claims, strict=True) if g < MIN_SUBJECT]
        report["scifact"] = {
            "claims": len(claims), "gold_kept": round(1 - len(below) / len(claims), 4), "gold_below": below,
        }  # fmt: skip
    offtopic = [r["claim"] for r in read_claims(CLAIMS) if r["set"] == "4"]
    for home in args.claims_home:
        index = CorpusIndex.open(load_settings(home=home))
        best = [max((subject_shares(index, c) or {}).values(), default=0.0) for c in offtopic]
        report[str(home)] = {
            "claims": len(offtopic), "reaching_the_level": sum(b >= MIN_SUBJECT for b in best),
            "best_shares": {c: round(b, 3) for c, b in zip(offtopic, best, strict=True) if b > 0},
        }  # fmt: skip
    text = json.dumps(report, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
