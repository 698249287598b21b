"""Cost curve from 10k to 2M chunks: ingest and index throughput, disk, memory and query latency by stage.

Run from the repository root (``make bench-scale``; the maintainers' check is ``--sizes 10k,100k``)::

    python benchmarks/bench_scale.py --qasper ../shared/data/qasper/qasper-test-v0.3.corpus-and-dev-questions.json.gz \\
        --sizes 10k,100k,1M,2M --out bench-out/scale.json --plot docs/scale-curve.png

For each size it writes a synthetic corpus shaped like QASPER (:mod:`scale.synth` says exactly how),
ingests and indexes it with lit3r's own code (:mod:`scale.indexing`), and then measures, each in a
fresh process that only serves queries (:mod:`scale.serve`): the memory of every index part, the
latency of every retrieval stage over real QASPER questions (median and p95 over queries and
repeats), the chunk BM25 index memory-mapped, and every dense index variant (flat, HNSW, IVF x
fp32, fp16, int8) with its recall@10 and @100 against the exact flat search. Results go to one JSON
document (rewritten after every size) and a plot; ``--table`` prints the markdown tables, and
``bench_scale.py report RUN.json... --plot PNG`` renders them again from one or more runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

from lit3r.corpus.parsers.qasper import read_qasper_records
from lit3r.index.encoders import load_encoder
from lit3r.settings import Settings, load_settings

from scale import parts, report
from scale.indexing import (
    Stopwatch,
    build_generation,
    build_variants,
    exact_truth,
    folder_mb,
    ingest_and_chunk,
    serve_variants,
    synthetic_vectors,
)
from scale.memory import PeakRSS, guard_memory, rss_mb
from scale.real import build_profile, fit_vectors
from scale.synth import write_records

VARIANTS = "flat:fp32,flat:fp16,flat:int8,hnsw:fp32,hnsw:int8,ivf:fp32,ivf:int8"
VARIANTS_LARGE = "flat:fp32,flat:int8,hnsw:int8,ivf:int8"
LARGE = 1_000_000


def parse_size(text: str) -> int:
    """'10k' -> 10000, '2M' -> 2000000, '5000' -> 5000."""
    text = text.strip()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:].lower(), 1)
    number = text[:-1] if scale > 1 else text
    try:
        value = int(float(number) * scale)
    except ValueError:
        raise argparse.ArgumentTypeError(f"size {text!r}: use a number such as 10k, 100k, 1M or 2M") from None
    if value < 100:
        raise argparse.ArgumentTypeError(f"size {text!r}: at least 100 chunks")
    return value


def label(size: int) -> str:
    return f"{size // 1_000_000}M" if size % 1_000_000 == 0 else f"{size // 1000}k" if size % 1000 == 0 else str(size)


def query_set(qasper: Path, settings: Settings, count: int | None, cache: Path, name: str) -> Path:
    """QASPER questions (shuffled with seed 0, the first ``count``) and their vectors from the real encoder, cached."""
    path = cache / f"{name}-{settings.embedder.model.replace('/', '_')}-{count or 'all'}.npz"
    if not path.exists():
        questions = [q["question"] for r in read_qasper_records(qasper).values() for q in r["qas"]]
        random.Random(0).shuffle(questions)
        texts = questions[:count]
        vectors = load_encoder(settings.embedder).encode_queries(texts)
        cache.mkdir(parents=True, exist_ok=True)
        np.savez(path, texts=np.array(texts), vectors=vectors)
    return path


def variants_for(args: argparse.Namespace, size: int) -> str:
    return args.variants_large if size >= LARGE else args.variants


def run_serve(args: argparse.Namespace, mode: str, folder: Path, out: Path, *extra: str) -> dict:
    """Run one measurement on the index generation ``folder`` in a fresh process (scale/serve.py); its JSON."""
    command = [sys.executable, str(Path(__file__).resolve()), "serve", mode, "--folder", str(folder)]
    command += ["--queries", str(args.query_file), "--repeats", str(args.repeats), "--out", str(out), *extra]
    command += ["--tune-queries", str(args.tune_file), "--min-free-mb", str(args.min_free_mb)]
    subprocess.run(command, check=True, env={**os.environ, "TOKENIZERS_PARALLELISM": "false"})
    return json.loads(out.read_text())


def measure_size(args, size: int, profile, model, settings: Settings) -> dict:
    """Everything measured at one size; the work folder is removed afterwards unless --keep."""
    work = args.work / label(size)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    serve = partial(run_serve, args)
    watch = Stopwatch()
    with watch.step("generate_records"):
        made = write_records(
            profile, size, work / "records", seed=args.seed, topic_share=args.topic_share, refs_mean=args.refs_mean
        )
    settings = settings.model_copy(update={"home": work / "home"})
    with PeakRSS() as build_peak:
        papers, chunks, hashes, resolved = ingest_and_chunk(settings, work / "records", watch)
        paper_vecs, chunk_vecs = synthetic_vectors(model, papers, chunks, args.seed, watch)
        generation = build_generation(settings, papers, chunks, hashes, paper_vecs, chunk_vecs, model, watch)
        chunk_ids = [c.id for c in chunks]
        text_chars = sum(len(c.text) for c in chunks)
        del papers, chunks, hashes, paper_vecs
        queries = np.load(args.query_file)["vectors"]
        truth = exact_truth(generation, queries, 100, args.seed, np.load(args.tune_file)["vectors"])
        (work / "truth.json").write_text(json.dumps(truth))
        variants = build_variants(variants_for(args, size), chunk_ids, chunk_vecs, generation, work, watch)
        del chunk_vecs
    result = {
        "size": size,
        "label": label(size),
        "mode": "full",
        "made": {**made, "references_resolved": resolved, "text_mb": round(text_chars / 1e6, 1)},
        "steps": watch.steps,
        "build_peak_rss_mb": build_peak.peak_mb,
        "disk_mb": {p.name: folder_mb(p) for p in sorted(generation.iterdir())},
        "corpus_sqlite_mb": folder_mb(settings.home / "corpus.sqlite"),
        "records_mb": folder_mb(work / "records"),
        "raw_vectors_mb": round(len(chunk_ids) * model.dim * 4 / 1e6, 1),
        "embed_projection_s": round(len(chunk_ids) / model.chunks_per_s, 0),
    }
    pipeline = ("--home", str(settings.home), "--index-settings", args.index_settings)
    result["serve"] = serve("pipeline", generation, work / "serve.json", *pipeline)
    result["bm25_mmap"] = serve("bm25-mmap", generation, work / "mmap.json")
    result["dense_variants"] = serve_variants(variants, generation, work, serve)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return result


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        from scale import serve as serve_module

        argv = sys.argv[2:]
        floor = argv.index("--min-free-mb")
        guard_memory(float(argv[floor + 1]))
        return serve_module.main(argv[:floor] + argv[floor + 2 :])
    if len(sys.argv) > 1 and sys.argv[1] == "report":
        return report_only(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--qasper", type=Path, required=True, help="The QASPER file the corpus is modelled on.")
    parser.add_argument("--sizes", default="10k,100k,1M,2M", help="Corpus sizes in chunks (default %(default)s).")
    parser.add_argument("--work", type=Path, default=Path("bench-out/scale"), help="Scratch folder for the corpora.")
    parser.add_argument("--out", type=Path, default=Path("bench-out/scale.json"))
    parser.add_argument("--plot", type=Path, help="Write the cost-curve plot here (PNG; needs matplotlib).")
    parser.add_argument("--table", action="store_true", help="Print the markdown tables after the run.")
    parser.add_argument("--queries", type=int, default=50, help="QASPER questions used as queries.")
    parser.add_argument("--repeats", type=int, default=3, help="Passes over the queries per measurement.")
    parser.add_argument(
        "--tune-qasper",
        type=Path,
        default=Path("../shared/data/qasper/qasper-train-sample-10-papers.hf-layout.json"),
        help="QASPER file whose questions (train papers, not the test questions) drive the search-knob sweeps.",
    )
    parser.add_argument("--embed-sample", type=int, default=1200, help="Real chunks embedded to fit the vectors.")
    parser.add_argument("--variants", default=VARIANTS, help="Dense kind:dtype pairs compared (default: all 7).")
    parser.add_argument(
        "--variants-large",
        default=VARIANTS_LARGE,
        help="The pairs compared from 1M chunks on, where each HNSW or IVF build takes tens of minutes "
        "(default %(default)s).",
    )
    parser.add_argument("--index-settings", default="{}", help="IndexSettings (JSON) of the pipeline's dense index.")
    parser.add_argument(
        "--full-max",
        type=parse_size,
        default=1_000_000,
        help="Largest size run through ingest, the chunker and the whole serving pipeline (default 1M); larger "
        "sizes measure the index parts only (scale/parts.py), as the whole does not fit in 24 GB.",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--topic-share", type=float, default=0.5, help="Share of a chunk's words from its topic.")
    parser.add_argument("--refs-mean", type=float, default=20.0, help="Mean corpus references per paper.")
    parser.add_argument("--min-free-mb", type=float, default=2048, help="Stop when the machine has less free.")
    parser.add_argument("--keep", action="store_true", help="Keep each size's corpus and indexes.")
    args = parser.parse_args()
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    for path in (args.qasper, args.tune_qasper):
        if not path.exists():
            parser.error(f"{path}: no such file")
    guard_memory(args.min_free_mb)
    settings = load_settings(None)
    cache = args.work / "cache"
    started = time.perf_counter()
    profile = build_profile(args.qasper, settings)
    model = fit_vectors(args.qasper, settings, args.embed_sample, cache)
    args.query_file = query_set(args.qasper, settings, args.queries, cache, "queries")
    args.tune_file = query_set(args.tune_qasper, settings, None, cache, "tune")
    document = {
        "command": " ".join(sys.argv),
        "cpu_count": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "real_corpus": profile.summary(),
        "vectors": model.summary(),
        "queries": args.queries,
        "repeats": args.repeats,
        "rss_after_profile": rss_mb(),
        "sizes": [],
    }
    for size in sizes:
        print(f"bench_scale: {label(size)} chunks", file=sys.stderr, flush=True)
        if size <= args.full_max:
            document["sizes"].append(measure_size(args, size, profile, model, settings))
        else:
            serve = partial(run_serve, args)
            chosen = partial(variants_for, args)
            document["sizes"].append(parts.measure(args, size, profile, model, settings, serve, label(size), chosen))
        document["elapsed_s"] = round(time.perf_counter() - started, 1)
        document["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(document, indent=1))
    if args.plot:
        report.plot(document, args.plot)
    if args.table:
        print(report.tables(document))


def report_only(argv: list[str]) -> None:
    """``bench_scale.py report RUN.json... [--plot PNG]``: the tables (and plot) of one or more runs' sizes."""
    parser = argparse.ArgumentParser(prog="bench_scale.py report")
    parser.add_argument("runs", type=Path, nargs="+", help="JSON documents written by bench_scale.py --out")
    parser.add_argument("--plot", type=Path)
    args = parser.parse_args(argv)
    documents = [json.loads(path.read_text()) for path in args.runs]
    merged = {**documents[0], "sizes": sorted((s for d in documents for s in d["sizes"]), key=lambda s: s["size"])}
    if args.plot:
        report.plot(merged, args.plot)
    print(report.tables(merged))


if __name__ == "__main__":
    sys.exit(main())
