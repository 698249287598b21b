"""Bibliographic coupling of one seed: scoring every paper of the graph against scoring only the papers that
share a reference with it (found through the cited-by lists), side by side on the same graphs.

Run from the repository root::

    python benchmarks/bench_coupling.py --papers 3633,36584,73168 --out bench-out/coupling.json

The graphs are made as bench_scale.py makes its corpora' references (benchmarks/scale/synth.py): each paper
cites Poisson(``--refs-mean``) others, drawn with probability proportional to 1 / (popularity rank + 10), so
a few papers are cited by many, as in a real field. The paper counts are those of the 100k, 1M and 2M chunk
corpora of the cost curve. For each graph, ``--seeds`` seed papers, both ways interleaved, ``--repeats``
passes; medians and p95 in milliseconds, and a check that both give the same neighbours in the same order.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from lit3r.index.citations import CitationGraph
from lit3r.retrieval import fusion
from lit3r.retrieval.relate import coupling_neighbours


def make_graph(papers: int, refs_mean: float, seed: int) -> CitationGraph:
    rng = np.random.default_rng(seed)
    cdf = np.cumsum(1.0 / (rng.permutation(papers) + 10.0))
    cdf /= cdf[-1]
    ids = [f"p{i:07d}" for i in range(papers)]
    references = {}
    for number in range(papers):
        cited = np.unique(cdf.searchsorted(rng.random(min(papers, rng.poisson(refs_mean))), side="right"))
        references[ids[number]] = [ids[j] for j in cited.tolist() if j != number and j < papers]
    return CitationGraph(references)


def whole_graph(graph: CitationGraph, seed: str, min_shared: int) -> list[str]:
    every = {pid: graph.references(pid) for pid in graph.papers}
    return [p for p, _ in fusion.coupling_scores(graph.references(seed), every, min_shared, exclude=[seed])]


def cited_by(graph: CitationGraph, seed: str, min_shared: int) -> list[str]:
    return coupling_neighbours(SimpleNamespace(citations=graph), seed, min_shared)  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", default="3633,36584,73168")
    parser.add_argument("--refs-mean", type=float, default=20.0)
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--min-shared", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    report = {"refs_mean": args.refs_mean, "seeds": args.seeds, "repeats": args.repeats, "graphs": []}
    for papers in [int(p) for p in args.papers.split(",")]:
        graph = make_graph(papers, args.refs_mean, seed=0)
        seeds = graph.papers[:: max(1, papers // args.seeds)][: args.seeds]
        times: dict[str, list[float]] = {"whole_graph": [], "cited_by": []}
        same = True
        for _ in range(args.repeats):
            for seed in seeds:
                results = {}
                for name, way in (("whole_graph", whole_graph), ("cited_by", cited_by)):
                    start = time.perf_counter()
                    results[name] = way(graph, seed, args.min_shared)
                    times[name].append((time.perf_counter() - start) * 1000)
                same &= results["whole_graph"] == results["cited_by"]
        row = {"papers": papers, "edges": graph.edges, "same_neighbours": same}
        for name, values in times.items():
            row[name] = {
                "median_ms": round(statistics.median(values), 3),
                "p95_ms": round(float(np.percentile(values, 95)), 3),
            }
        row["ratio_of_medians"] = round(row["whole_graph"]["median_ms"] / row["cited_by"]["median_ms"], 1)
        report["graphs"].append(row)
        print(json.dumps(row), flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    sys.exit(main())
