"""Load run of ``lit3r serve``: N concurrent clients asking demo questions for a bounded time, on loopback only.

Run from the repository root (``make bench-serve``)::

    python benchmarks/bench_serve.py --clients 1,2,4,8 --seconds 15 --repeats 3 --limit 4 --out bench-out/serve.json

The demo corpus (and the tests' two-page PDF) is ingested and indexed under a temporary home with the default
settings, and the real server is started in a subprocess on a free 127.0.0.1 port with
``server.max_concurrent_answers = --limit``. For each client count (the counts interleaved, ``--repeats``
times) that many threads each ask the demo questions in turn with ``POST /v1/ask`` until ``--seconds`` have
passed (and at most ``--max-requests`` each). Per client count: requests served (200), clean 429s (the JSON
error with ``Retry-After``), other errors, median and p95 latency of the served requests, answers per second,
and the server's resident memory (``VmRSS`` of its process, sampled every 0.2 s; the largest). The baseline in
the same run: the same questions through ``Session.ask`` in this process, one at a time, so the cost of the
HTTP layer is a ratio of two figures measured side by side. Medians over the repeats are reported.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from lit3r.app.session import Session
from lit3r.settings import load_settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the test builders: home and server
from fakes.lit3r_server import ServeProcess, served_home  # noqa: E402

QUESTIONS = [
    "How much did evidence verification reduce unsupported claims?",
    "How many questions does LocatorQA contain?",
    "Which reranker budget is recommended?",
    "Which BM25 configuration was best?",
    "How does reciprocal rank fusion combine the runs?",
    "What was the median surface velocity of the Aletsch glacier tongue?",
]


UNIQUE = itertools.count(1000)
"""Numbers that make each question of a --unique run new to the server (next() on a count is atomic in CPython)."""


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class MemorySampler:
    """The largest VmRSS of a process while the block runs."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, rss_mb(self.pid))

    def __enter__(self) -> MemorySampler:
        self.peak = rss_mb(self.pid)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def phase(base_url: str, clients: int, seconds: float, max_requests: int, unique: bool = False) -> dict:
    """``clients`` threads asking in turn until the time is up; counts and latencies.

    ``unique`` appends a number never used before to each question, so no query vector comes from the cache.
    """
    served: list[float] = []
    busy, errors, clean_429 = [0], [], [0]
    lock = threading.Lock()
    start = threading.Barrier(clients)

    def client(offset: int) -> None:
        with httpx.Client(base_url=base_url, timeout=120) as http:
            start.wait()
            deadline = time.monotonic() + seconds
            for i in range(max_requests):
                if time.monotonic() >= deadline:
                    return
                question = QUESTIONS[(offset + i) % len(QUESTIONS)]
                if unique:
                    question = f"{question} {next(UNIQUE)}"
                began = time.perf_counter()
                try:
                    response = http.post("/v1/ask", json={"question": question})
                except httpx.HTTPError as exc:
                    with lock:
                        errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                elapsed = (time.perf_counter() - began) * 1000
                with lock:
                    if response.status_code == 200 and response.json()["citations"]:
                        served.append(elapsed)
                    elif response.status_code == 429:
                        busy[0] += 1
                        body = response.json().get("error", {})
                        if body.get("code") == "too_many_requests" and response.headers.get("retry-after"):
                            clean_429[0] += 1
                        time.sleep(0.05)  # a client told to retry waits a moment
                    else:
                        errors.append(f"HTTP {response.status_code}: {response.text[:200]}")

    began = time.monotonic()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 300)
    wall = time.monotonic() - began
    return {
        "served": len(served),
        "too_many_requests": busy[0],
        "clean_429": clean_429[0],
        "errors": len(errors),
        "error_samples": errors[:5],
        "latency_ms_median": statistics.median(served) if served else None,
        "latency_ms_p95": percentile(served, 0.95),
        "answers_per_s": len(served) / wall,
    }


def baseline(home: Path, rounds: int, unique: bool = False) -> dict:
    """The same questions through Session.ask in this process, one at a time."""
    with Session(load_settings(home=home)) as session:
        for question in QUESTIONS[: 1 if unique else None]:  # warm up as the server was: models, query vectors
            session.ask(question)
        times = []
        for _ in range(rounds):
            for question in QUESTIONS:
                began = time.perf_counter()
                session.ask(f"{question} {next(UNIQUE)}" if unique else question)  # as the clients do
                times.append((time.perf_counter() - began) * 1000)
    median, p95 = statistics.median(times), percentile(times, 0.95)
    return {"questions": len(times), "latency_ms_median": median, "latency_ms_p95": p95}


def median_of(runs: list[dict], key: str) -> float | None:
    values = [r[key] for r in runs if r[key] is not None]
    return statistics.median(values) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default="1,2,4,8", help="Client counts, comma-separated.")
    parser.add_argument("--seconds", type=float, default=15.0, help="Duration of one phase.")
    parser.add_argument("--repeats", type=int, default=3, help="Phases per client count (interleaved).")
    parser.add_argument("--limit", type=int, default=4, help="The server's max_concurrent_answers.")
    parser.add_argument("--max-requests", type=int, default=500, help="Most requests one client sends in a phase.")
    parser.add_argument(
        "--unique", action="store_true", help="Make every question unique (the query encoder runs each time)."
    )
    parser.add_argument("--out", type=Path, default=Path("bench-out/serve.json"))
    args = parser.parse_args()
    counts = [int(c) for c in args.clients.split(",")]
    with tempfile.TemporaryDirectory(prefix="lit3r-bench-serve-") as tmp:
        home = served_home(Path(tmp))
        reference = baseline(home, args.repeats, args.unique)
        env = {"LIT3R_SERVER__MAX_CONCURRENT_ANSWERS": str(args.limit)}
        runs: dict[int, list[dict]] = {n: [] for n in counts}
        with ServeProcess(home, env) as server:
            pid = server.process.pid
            idle_mb = rss_mb(pid)
            phase(server.base_url, 1, 2.0, 5)  # warm up
            for _ in range(args.repeats):
                for clients in counts:
                    with MemorySampler(pid) as memory:
                        result = phase(server.base_url, clients, args.seconds, args.max_requests, args.unique)
                    runs[clients].append({**result, "server_rss_mb_max": memory.peak})
                    print(json.dumps({"clients": clients, **result, "server_rss_mb_max": memory.peak}), flush=True)
    summary = {}
    for clients, results in runs.items():
        summary[str(clients)] = {
            "above_limit": clients > args.limit,
            "served": sum(r["served"] for r in results),
            "too_many_requests": sum(r["too_many_requests"] for r in results),
            "clean_429": sum(r["clean_429"] for r in results),
            "errors": sum(r["errors"] for r in results),
            "latency_ms_median": median_of(results, "latency_ms_median"),
            "latency_ms_p95": median_of(results, "latency_ms_p95"),
            "answers_per_s": median_of(results, "answers_per_s"),
            "server_rss_mb_max": max(r["server_rss_mb_max"] for r in results),
            "runs": results,
        }
    one = summary.get("1", {}).get("latency_ms_median")
    report = {
        "settings": {**vars(args), "out": str(args.out), "questions": QUESTIONS},
        "baseline_session_ask": reference,
        "http_over_session_latency_ratio": (one / reference["latency_ms_median"]) if one else None,
        "server_rss_mb_idle": idle_mb,
        "clients": summary,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "clients"}, indent=1))
    for clients, row in summary.items():
        print(
            f"{clients:>3} clients: served {row['served']}, 429 {row['too_many_requests']} "
            f"(clean {row['clean_429']}), errors {row['errors']}, median {row['latency_ms_median']:.0f} ms, "
            f"p95 {row['latency_ms_p95']:.0f} ms, {row['answers_per_s']:.2f}/s, RSS {row['server_rss_mb_max']:.0f} MB"
        )


if __name__ == "__main__":
    main()
