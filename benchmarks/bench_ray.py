"""Distributed ingest and sharded search on a local Ray cluster, against one machine in the same run.

Run from the repository root inside a loopback-only network namespace (``make bench-ray`` does)::

    unshare -n sh -c 'ip link set lo up && python benchmarks/bench_ray.py \\
        --qasper ../shared/data/qasper/qasper-test-v0.3.corpus-and-dev-questions.json.gz --out bench-out/ray.json'

1. Ingest throughput: ``--papers`` QASPER papers (the first by id) are indexed from an
   empty index ``--reps`` times, interleaved: on this machine (``build_index``, every
   core) and on a cluster of a head and two worker nodes (one CPU each) with one and
   with two embedding actors. Reported: wall time, chunks per second, the steady rate
   once the actors are up, and per actor.
2. A projection from the measured rate of this machine with both cores embedding (two
   actors, encoder time): hours to embed the Lit3R corpus (2.56 million chunks, 27,487
   papers) on N such machines.
3. Query latency at the same size: the index of the whole QASPER file (416 papers; the one
   ``lit3r eval qasper`` builds under ``.lit3r/evals/``, or ``--index-home``)
   searched locally and through ``--shards`` shard actors, interleaved per query, for
   chunk BM25, dense and hybrid search and one Lit3R sweep (three indexes, fused).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import signal
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from lit3r.corpus.ingest import ingest
from lit3r.corpus.store import CorpusStore, file_sha256
from lit3r.index.build import build_index
from lit3r.index.corpus_index import CorpusIndex
from lit3r.index.distributed.cluster import connect
from lit3r.index.distributed.ingest import build_index_on_ray
from lit3r.index.distributed.local import LocalCluster
from lit3r.index.distributed.shard_build import build_shards
from lit3r.index.distributed.sharded_index import ShardedCorpusIndex
from lit3r.index.opening import open_index
from lit3r.retrieval.search import rank_chunks
from lit3r.retrieval.subquery import sweep
from lit3r.settings import RaySettings, Settings

LIT3R_CHUNKS, LIT3R_PAPERS = 2_560_000, 27_487


def subset(qasper: Path, count: int, folder: Path) -> tuple[Path, list[str]]:
    """The first ``count`` papers by id as a QASPER file, and the questions of the whole file."""
    with gzip.open(qasper, "rt", encoding="utf-8") as handle:
        papers = json.load(handle)
    chosen = sorted(papers)[:count]
    path = folder / "subset.json"
    path.write_text(json.dumps({pid: papers[pid] for pid in chosen}), encoding="utf-8")
    questions = [qa["question"] for paper in papers.values() for qa in paper.get("qas", [])]
    return path, questions


def ingest_run(template: Path, folder: Path, name: str, settings_for) -> dict:
    """Index a fresh copy of the ingested ``template`` home; returns the run's figures."""
    home = folder / name
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    shutil.copy(template / "corpus.sqlite", home / "corpus.sqlite")
    settings = settings_for(home)
    start = time.perf_counter()
    with CorpusStore(home) as store:
        if settings.ray.address:
            report = build_index_on_ray(settings, store)
            chunks, build, t = report.cluster_embedded["chunk"], report.build, report.timings
            figures = {
                "actors": report.embed_actors,
                "cluster_embed_s": t["cluster_embed_s"],
                "first_vectors_s": t["cluster_first_vectors_s"],
                "actor_encode_s": t["cluster_encode_chunks_s"],
                "chunks_per_actor_s": chunks / t["cluster_encode_chunks_s"],
                "shards_s": t["shards_s"],
            }
        else:
            build = build_index(settings, store)
            chunks = build.chunks_embedded
            figures = {"embed_chunks_s": build.timings["embed_chunks_s"]}
    wall = time.perf_counter() - start
    return {"config": name, "wall_s": wall, "chunks": chunks, "chunks_per_s": chunks / wall, **figures}


def median_of(runs: list[dict], config: str, key: str) -> float:
    return statistics.median(r[key] for r in runs if r["config"] == config)


def projection(per_machine: float) -> dict:
    """Hours to embed the Lit3R corpus on N machines that each embed ``per_machine`` chunks/s.

    Embedding is the cost that grows with the corpus (95% of a build here). Machines share nothing
    while they embed (vectors, 1.5 KB a chunk, stream to the driver), so the rate is taken as linear
    in the machines; actor start-up (under a minute) is left out of multi-hour runs.
    """
    rows = []
    for machines in (1, 4, 16, 64):
        rows.append({"machines": machines, "hours": LIT3R_CHUNKS / (per_machine * machines) / 3600})
    machines_for_24h = LIT3R_CHUNKS / (per_machine * 24 * 3600)
    return {"chunks_per_s_per_machine": per_machine, "rows": rows, "machines_for_24h": machines_for_24h}


def latency(local: CorpusIndex, sharded: ShardedCorpusIndex, questions: list[str], reps: int) -> dict:
    """Median and p95 ms per query, local and sharded, interleaved per query."""
    calls = {
        "bm25": lambda index, q: rank_chunks(index, q, "bm25", 100),
        "dense": lambda index, q: rank_chunks(index, q, "dense", 100),
        "hybrid": lambda index, q: rank_chunks(index, q, "hybrid", 100),
        "sweep": lambda index, q: sweep(index, q, 100),
    }
    for question in questions:  # query vectors cached, indexes loaded: latency, not start-up
        local.encoder.encode_queries([question]), sharded.encoder.encode_queries([question])
    for call in calls.values():
        call(local, questions[0]), call(sharded, questions[0])
    times: dict[str, dict[str, list[float]]] = {name: {"local": [], "sharded": []} for name in calls}
    for _ in range(reps):
        for question in questions:
            for name, call in calls.items():
                for label, index in (("local", local), ("sharded", sharded)):
                    start = time.perf_counter()
                    call(index, question)
                    times[name][label].append((time.perf_counter() - start) * 1000)
    out = {}
    for name, by in times.items():
        row = {f"{label}_ms_median": statistics.median(ms) for label, ms in by.items()}
        row |= {f"{label}_ms_p95": statistics.quantiles(ms, n=20)[-1] for label, ms in by.items()}
        row["ratio_median"] = row["sharded_ms_median"] / row["local_ms_median"]
        out[name] = row
    return out


def equality(local_home: Path, ray_home: Path, address: str, questions: list[str]) -> dict:
    """How a cluster build searched through its shards compares with a one-machine build of the same papers."""
    local = CorpusIndex.open(Settings(home=local_home))
    files = CorpusIndex.open(Settings(home=ray_home))
    sharded = open_index(Settings(home=ray_home, ray={"address": address}))
    ids, pids = [c.id for c in local.chunks], sorted(local.papers)
    out = {
        "chunks_identical": [c.model_dump() for c in files.chunks] == [c.model_dump() for c in local.chunks],
        "vector_max_abs_diff": float(np.abs(files.dense.vectors_for(ids) - local.dense.vectors_for(ids)).max()),
        "paper_vector_max_abs_diff": float(
            np.abs(files.paper_vectors.vectors_for(pids) - local.paper_vectors.vectors_for(pids)).max()
        ),
        "queries": len(questions),
    }
    same = {"bm25": 0, "dense": 0, "hybrid": 0}
    dense_diff = 0.0
    for question in questions:
        for mode in same:
            got, expected = rank_chunks(sharded, question, mode, 100), rank_chunks(local, question, mode, 100)
            same[mode] += got == expected if mode == "bm25" else [i for i, _ in got] == [i for i, _ in expected]
            if mode == "dense":
                scores = dict(expected)
                dense_diff = max([dense_diff, *(abs(s - scores[i]) for i, s in got if i in scores)])
    sharded.close()
    return out | {f"{mode}_identical_queries": n for mode, n in same.items()} | {"dense_score_max_abs_diff": dense_diff}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--qasper", type=Path, required=True)
    parser.add_argument(
        "--index-home", type=Path, help="Home of the QASPER index (default: the one `lit3r eval qasper` builds)."
    )
    parser.add_argument("--papers", type=int, default=30)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--out", type=Path, default=Path("bench-out/ray.json"))
    args = parser.parse_args()
    if [name for _, name in socket.if_nameindex()] != ["lo"]:
        sys.exit("run inside a loopback-only network namespace: make bench-ray (unshare -n, lo up)")
    index_home = args.index_home or Path(".lit3r") / "evals" / file_sha256(args.qasper)[:12]
    with CorpusStore(index_home) as store:  # reused when the index is there (`lit3r eval qasper` builds it too)
        ingest([args.qasper], store)
        build_index(Settings(home=index_home), store)
    folder = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    cluster = LocalCluster(workers=2, worker_cpus=1, head_cpus=0).start()
    os.environ.update(cluster.env)
    try:
        ray = connect(RaySettings(address=cluster.address))
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # after Ray's own handler: run the finally below
        cluster.wait_for_nodes(ray, 3)
        path, questions = subset(args.qasper, args.papers, folder)
        template = folder / "template"
        with CorpusStore(template) as store:
            ingest([path], store)

        def on_ray(actors: int):
            options = {"address": cluster.address, "embed_actors": actors, "shards": args.shards}
            return lambda home: Settings(home=home, ray=options)

        configs = {"local": lambda home: Settings(home=home), "ray-1-actor": on_ray(1), "ray-2-actors": on_ray(2)}
        runs = []
        for rep in range(args.reps):
            for name, settings_for in configs.items():
                runs.append({"rep": rep, **ingest_run(template, folder, name, settings_for)})
                print(json.dumps(runs[-1]), flush=True)
        ingest_summary = {
            config: {k: median_of(runs, config, k) for k in ("wall_s", "chunks_per_s")} for config in configs
        }
        per_actor = {c: median_of(runs, c, "chunks_per_actor_s") for c in ("ray-1-actor", "ray-2-actors")}
        ingest_summary["chunks_per_s_per_actor_encoding"] = per_actor
        ingest_summary["encoding_rate_2_actors_vs_1"] = 2 * per_actor["ray-2-actors"] / per_actor["ray-1-actor"]
        ingest_summary["wall_speedup_2_actors_vs_1"] = (
            ingest_summary["ray-2-actors"]["chunks_per_s"] / ingest_summary["ray-1-actor"]["chunks_per_s"]
        )
        machine = 2 * per_actor["ray-2-actors"]  # this machine with both cores embedding, encoder time only

        last = {r["config"]: r for r in runs if r["rep"] == args.reps - 1}
        assert {"local", "ray-2-actors"} <= set(last)
        same = equality(folder / "local", folder / "ray-2-actors", cluster.address, questions[: args.queries])
        settings = Settings(home=index_home, ray={"address": cluster.address, "shards": args.shards})
        local = CorpusIndex.open(settings)
        build_shards(ray, settings, local.folder)
        sharded = open_index(settings)
        report = {
            "papers": args.papers,
            "reps": args.reps,
            "runs": runs,
            "ingest": ingest_summary,
            "equality": same,
            "projection": projection(machine),
            "latency": {
                "chunks": len(local.chunks),
                "shards": args.shards,
                "queries": args.queries,
                "reps": args.reps,
                **latency(local, sharded, questions[: args.queries], args.reps),
            },
        }
        sharded.close()
    finally:
        import ray as ray_module

        ray_module.shutdown()
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps({k: report[k] for k in ("ingest", "equality", "projection", "latency")}, indent=1))


if __name__ == "__main__":
    main()
