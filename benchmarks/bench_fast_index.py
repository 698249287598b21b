"""What each step of the fast index buys, side by side in one run, and the end-to-end time of the default.

Run from the repository root::

    D=../shared/data/qasper/qasper-test-v0.3.corpus-and-dev-questions.json.gz
    python benchmarks/bench_fast_index.py --qasper $D --sample 512 --repeats 3 --end-to-end \
        --warm --out bench-out/fast-index.json

Steps (``--sample`` chunks of the QASPER corpus drawn with a fixed seed, embedded by every variant
in calls of 256 texts as a build does; the variants run interleaved, ``--repeats`` times, and the
report gives each one's median rate and its ratio to the old default):

* ``torch-fp32``: sentence-transformers in PyTorch, batches of 32, texts in corpus order (the old
  default; sentence-transformers sorts by length within each call);
* ``torch-fp32-sorted``: the same, the texts sorted by length before they are split into calls;
* ``onnx-fp32``: the model exported to ONNX Runtime, fp32, batches of 32, sorted;
* ``onnx-int8-batch32``: int8 (dynamic quantisation), batches of 32, sorted;
* ``onnx-int8``: int8, one text per run, so no padding at all, one single-threaded run per core
  at a time (the new default);
* ``onnx-int8-1-thread``: the same with one run at a time (``threads=1``).

Each variant's vectors are compared with ``torch-fp32``'s (cosine; minimum and mean), and the
share of padding tokens in batches of 32 is reported for corpus order and for sorted texts. With
``--end-to-end``, ``lit3r ingest`` + ``lit3r index`` of the whole file run as commands from an
empty home with an empty model cache (so the ONNX export is included); ``--warm`` adds a run from an
empty home with the export cached, ``--baseline`` one of the old default (PyTorch fp32).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from report_file import emit

CALL = 256


def sample_chunks(qasper: Path, size: int, seed: int) -> list[str]:
    from lit3r.corpus.chunkers import chunk_paper
    from lit3r.corpus.parsers.records import parse_records
    from lit3r.settings import ChunkerSettings

    chunks = [c.text for paper in parse_records(qasper) for c in chunk_paper(paper, ChunkerSettings())]
    rows = sorted(random.Random(seed).sample(range(len(chunks)), min(size, len(chunks))))
    return [chunks[i] for i in rows]  # corpus order


def variants():
    from lit3r.index.encoders import load_encoder
    from lit3r.index.encoders.onnx_int8 import OnnxInt8Encoder
    from lit3r.settings import EmbedderSettings

    torch_settings = EmbedderSettings(backend="sentence-transformers")
    onnx_settings = EmbedderSettings(backend="onnx-int8")
    return {
        "torch-fp32": (load_encoder(torch_settings), False),
        "torch-fp32-sorted": (load_encoder(torch_settings), True),
        "onnx-fp32": (OnnxInt8Encoder(onnx_settings, quantized=False), True),
        "onnx-int8-batch32": (OnnxInt8Encoder(onnx_settings, batch_size=32), True),
        "onnx-int8": (load_encoder(onnx_settings), True),
        "onnx-int8-1-thread": (load_encoder(onnx_settings.model_copy(update={"threads": 1})), True),
    }


def embed(encoder, texts: list[str], sort: bool) -> tuple[np.ndarray, float]:
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i])) if sort else list(range(len(texts)))
    out = np.empty((len(texts), encoder.dim), dtype=np.float32)
    start = time.perf_counter()
    for begin in range(0, len(order), CALL):
        rows = order[begin : begin + CALL]
        out[rows] = encoder.encode_documents([texts[i] for i in rows])
    return out, time.perf_counter() - start


def padding_share(texts: list[str], sort: bool, batch: int = 32) -> float:
    """Share of the token slots in the batches that are padding (MiniLM's tokenizer, 256 tokens)."""
    from transformers import AutoTokenizer

    from lit3r.index.model_files import resolve_model_path

    tokenizer = AutoTokenizer.from_pretrained(str(resolve_model_path("all-MiniLM-L6-v2")))
    lengths = [min(len(ids), 256) for ids in tokenizer(texts)["input_ids"]]
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i])) if sort else list(range(len(texts)))
    real = slots = 0
    for begin in range(0, len(order), CALL):
        call = order[begin : begin + CALL]
        call = sorted(call, key=lambda i: -lengths[i]) if sort else call
        for b in range(0, len(call), batch):
            group = [lengths[i] for i in call[b : b + batch]]
            real, slots = real + sum(group), slots + max(group) * len(group)
    return round(1 - real / slots, 4)


def steps(texts: list[str], repeats: int) -> dict:
    encoders = variants()
    reference, _ = embed(encoders["torch-fp32"][0], texts, False)
    seconds: dict[str, list[float]] = {name: [] for name in encoders}
    cosines: dict[str, np.ndarray] = {}
    for repeat in range(repeats):
        names = list(encoders)
        random.Random(repeat).shuffle(names)  # interleaved, a different order each time
        for name in names:
            encoder, sort = encoders[name]
            vectors, elapsed = embed(encoder, texts, sort)
            seconds[name].append(elapsed)
            cosines[name] = (vectors * reference).sum(axis=1)
    base = statistics.median(seconds["torch-fp32"])
    report = {}
    for name, values in seconds.items():
        median = statistics.median(values)
        report[name] = {
            "seconds": [round(v, 2) for v in values],
            "chunks_per_s_median": round(len(texts) / median, 2),
            "speedup_vs_torch_fp32": round(base / median, 2),
            "cosine_to_torch_fp32_min": round(float(cosines[name].min()), 4),
            "cosine_to_torch_fp32_mean": round(float(cosines[name].mean()), 4),
        }
    report["padding_share"] = {"unsorted": padding_share(texts, False), "sorted": padding_share(texts, True)}
    return report


def end_to_end(qasper: Path, backend: str | None, cold_cache: bool) -> dict:
    """``lit3r ingest`` + ``lit3r index`` from an empty home, as a person runs them."""
    home = Path(tempfile.mkdtemp(prefix="lit3r-e2e-"))
    env = {**os.environ}
    if backend:
        env["LIT3R_EMBEDDER__BACKEND"] = backend
    if cold_cache:
        env["LIT3R_MODEL_CACHE"] = tempfile.mkdtemp(prefix="lit3r-models-")
    lit3r = [str(Path(sys.executable).parent / "lit3r"), "--home", str(home)]
    load = [round(x, 2) for x in os.getloadavg()]
    start = time.perf_counter()
    subprocess.run([*lit3r, "ingest", str(qasper)], env=env, check=True, capture_output=True)
    ingest_s = time.perf_counter() - start
    done = subprocess.run([*lit3r, "index"], env=env, check=True, capture_output=True, text=True)
    total = time.perf_counter() - start
    return {
        "backend": backend or "default",
        "model_cache": "empty" if cold_cache else "warm",
        "ingest_s": round(ingest_s, 1),
        "index_s": round(total - ingest_s, 1),
        "total_s": round(total, 1),
        "index_output": done.stdout.strip().splitlines()[-2:],
        "home": str(home),
        "load_average_before": load,
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--qasper", type=Path, required=True)
    parser.add_argument("--sample", type=int, default=512, help="Chunks embedded by every variant.")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-steps", action="store_true", help="Only the end-to-end runs.")
    parser.add_argument("--end-to-end", action="store_true", help="Time ingest + index of the whole file.")
    parser.add_argument("--warm", action="store_true", help="With --end-to-end: again with the export cached.")
    parser.add_argument("--baseline", action="store_true", help="With --end-to-end: the PyTorch fp32 default too.")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    document: dict = {"file": str(args.qasper), "cpu_count": os.cpu_count()}
    document["load_average_before"] = [round(x, 2) for x in os.getloadavg()]
    if not args.no_steps:
        texts = sample_chunks(args.qasper, args.sample, args.seed)
        document["sample"] = {
            "chunks": len(texts),
            "seed": args.seed,
            "mean_chars": round(np.mean([len(t) for t in texts])),
        }
        document["steps"] = steps(texts, args.repeats)
    if args.end_to_end:
        runs = [end_to_end(args.qasper, None, cold_cache=True)]
        if args.warm:
            runs.append(end_to_end(args.qasper, None, cold_cache=False))
        if args.baseline:
            runs.append(end_to_end(args.qasper, "sentence-transformers", cold_cache=False))
        document["end_to_end"] = runs
    document["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    emit(document, args.out)


if __name__ == "__main__":
    sys.exit(main())
