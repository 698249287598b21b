"""The claim check on claims written against the demo papers: how many get the verdict they should.

Run from the repository root (sets 3, 4, 6 and 7 need a demo home; 1 and 2 read the demo papers' files)::

    lit3r --home /tmp/demo-home demo
    python benchmarks/bench_claims.py --home /tmp/demo-home [--sets 1,2,3,4] [--out bench-out/claims.json]

Each line of ``benchmarks/claims_demo.txt`` is ``set|expected verdict|paper|claim``. Sets 1 and 2 call the
offline verdict (:class:`lit3r.grounding.stance.OfflineStance`) on the named paper's chunks (as ingested); sets
3 to 9 (:data:`END_TO_END`) run the whole check (:func:`lit3r.app.check.check`: retrieval over the home, then
a verdict per paper) and read the named paper's verdict, or for ``-`` whether the summary says that no paper
addresses the claim. Set 4's claims are about subjects the demo papers do not treat, so ``--home`` may be any
home (``--sets 4`` on a library of real PDFs asks whether it addresses them); set 5 is about the three shared
PDFs (``../shared/data/pdfs`` ingested into a home); set 6 is about the demo papers, end to end like set 3, written
in session 14 after that session's other changes; set 7 likewise, written in session 16 before any of it was
run, set 8 about the shared PDFs like set 5, written then too, and set 9 like set 7, written after sets 7 and 8
had been run and mended. The sets and how they were used are in
docs/BENCHMARKS.md (sessions 10, 11, 14 and 16): they were written here, not held out.
The code before a change is measured by putting its checkout first on the path:
``PYTHONPATH=<checkout> python benchmarks/bench_claims.py ...``.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from lit3r.corpus.chunkers import chunk_paper
from lit3r.corpus.parsers.markdown import parse_markdown
from lit3r.grounding.stance import OfflineStance, Passage
from lit3r.settings import ChunkerSettings

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = ROOT / "benchmarks" / "claims_demo.txt"
PAPERS = ROOT / "lit3r" / "demo" / "papers"
END_TO_END = frozenset({"3", "4", "5", "6", "7", "8", "9"})


def read_claims(path: Path) -> list[dict]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("|", 3)
        if len(parts) != 4:
            raise SystemExit(f"{path}:{n}: expected set|verdict|paper|claim, got {line!r}")
        rows.append(dict(zip(("set", "want", "paper", "claim"), parts, strict=True)))
    return rows


def chunks(paper: str) -> list[Passage]:
    """A demo paper's chunks as ingesting makes them (default chunker settings), as passages."""
    path = PAPERS / f"{paper}.md"
    if not path.is_file():
        raise SystemExit(f"{path}: no such demo paper")
    return [Passage(c.id, c.text) for c in chunk_paper(parse_markdown(path)[0], ChunkerSettings())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="a demo home, for sets 3, 4, 6 and 7 (left out: they are skipped)")
    parser.add_argument("--claims", type=Path, default=CLAIMS)
    parser.add_argument("--sets", help="comma-separated sets to run (default: all)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows, judge = read_claims(args.claims), OfflineStance()
    if args.sets:
        rows = [r for r in rows if r["set"] in set(args.sets.split(","))]
    results = []
    for row in (r for r in rows if r["set"] not in END_TO_END):
        verdict = judge.judge(row["claim"], chunks(row["paper"]))
        results.append({**row, "got": verdict.verdict, "reason": verdict.reason})
    end_to_end = [r for r in rows if r["set"] in END_TO_END]
    if end_to_end and args.home:
        from lit3r.app.check import check
        from lit3r.settings import load_settings

        settings = load_settings(home=args.home)
        for row in end_to_end:
            result = check(row["claim"], settings=settings)
            verdicts = {p.paper_id: p.verdict for p in result.papers}
            got = verdicts.get(row["paper"], "not_addressed") if row["paper"] != "-" else (
                "addressed" if result.summary.addressed else "not_addressed"
            )  # fmt: skip
            results.append({**row, "got": got, "others": {k: v for k, v in verdicts.items() if k != row["paper"]}})
    by_set: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        r["right"] = r["got"] == r["want"]
        by_set[r["set"]].append(r["right"])
        print(json.dumps(r), flush=True)
    summary = {s: f"{sum(v)} / {len(v)}" for s, v in sorted(by_set.items())}
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"sets": summary, "rows": results}, indent=1), encoding="utf-8")
    print(json.dumps({"sets": summary}))


if __name__ == "__main__":
    main()
