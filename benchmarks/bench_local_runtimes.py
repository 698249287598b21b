"""The local reader on two runtimes side by side: llama-cpp-python's server and lit3r's wheel server (gpt4all).

Run from the repository root on a demo home (``lit3r --home HOME demo`` builds one) with both runtimes
installed (``make install-local`` and ``make install-local-wheel``)::

    python benchmarks/bench_local_runtimes.py HOME --preset local --out bench-out/runtimes.jsonl
    python benchmarks/bench_local_runtimes.py HOME --score --out bench-out/runtimes.jsonl

Settings of one runtime side by side instead (``--variant LABEL=JSON``, repeated: each label's settings are the
preset's with the JSON's values merged in)::

    python benchmarks/bench_local_runtimes.py HOME --preset auto --out bench-out/threads.jsonl \
        --variant 'one-thread={"llm": {"local": {"n_threads": 1}}}' \
        --variant 'two-threads={"llm": {"local": {"n_threads": 2}}}'

One :class:`~lit3r.app.session.Session` per runtime is opened (one server each, loaded before the first
question) and each question is asked of every runtime in turn, the order alternating from one question to the
next, so both meet the same load on a shared machine. One JSON line per (runtime or variant, question): the
answer's text,
its cited chunks, fallbacks, the wall seconds of the question, the reader's model calls (seconds, prompt and
completion tokens), the prompt tokens the server evaluated and reused (from its log) and the 1-minute load
average before. ``--score`` prints, per runtime, the median seconds per
question (wall and model) and the median prompt and completion tokens, and then the answers side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

QUESTIONS = (
    "Which fusion method reached the highest paper-level recall at 10 on the LocatorQA development set?",
    "How many questions does LocatorQA contain, and how many of them are unanswerable?",
    "Which BM25 configuration reached the highest recall at 10, and what did the section-title field add?",
    "What candidate budget is recommended for cross-encoder reranking, and what does it cost?",
    "How much did evidence verification reduce unsupported claims?",
    "Do the sparse retrieval and rank fusion papers agree on the recall at 10 of tuned BM25?",
    "What recall at 10 did the dense encoder reach on the LocatorQA test set?",
    "Which attack string does the evidence verification paper quote as an example of injected instructions?",
)
PROMPT_EVAL = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
PREFIX_HIT = re.compile(r"(\d+) prefix-match hit")
WHEEL_CALL = re.compile(r"call \d+: (\d+) prompt \((\d+) reused\) \+ (\d+) completion tokens in ([\d.]+) s")
LOG = Path("logs") / "llama-server.log"

"""The demo corpus's example questions (lit3r/demo/QUESTIONS.md): five answered by one table each, one needing
two papers, one the corpus cannot answer, one about the quoted prompt-injection string."""


def model_calls(trace_path: str | None) -> list[dict[str, Any]]:
    """The model calls of a question's trace: name, seconds, tokens, error."""
    if not trace_path or not Path(trace_path).is_file():
        return []
    events = json.loads(Path(trace_path).read_text(encoding="utf-8")).get("events") or []
    return [
        {
            "name": e.get("name"),
            "seconds": round(float(e.get("duration_ms") or 0) / 1000, 2),
            "prompt_tokens": e["data"].get("prompt_tokens", 0),
            "completion_tokens": e["data"].get("completion_tokens", 0),
            "error": e["data"].get("error"),
        }
        for e in events
        if e.get("type") == "llm" and "prompt_tokens" in (e.get("data") or {})
    ]


def server_figures(log_text: str) -> dict[str, int]:
    """Prompt tokens evaluated and reused in a stretch of the servers' log (llama.cpp's timings or the wheel
    server's call lines)."""
    wheel = WHEEL_CALL.findall(log_text)
    if wheel:
        return {
            "prompt_tokens_evaluated": sum(int(p) - int(r) for p, r, _, _ in wheel),
            "prefix_tokens_reused": sum(int(r) for _, r, _, _ in wheel),
        }
    return {
        "prompt_tokens_evaluated": sum(int(n) for _, n in PROMPT_EVAL.findall(log_text)),
        "prefix_tokens_reused": sum(int(n) for n in PREFIX_HIT.findall(log_text)),
    }


def variants(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The settings overrides of each label: ``--variant LABEL=JSON``, else one per ``--runtimes`` entry."""
    if not args.variant:
        return {runtime: {"llm": {"local": {"runtime": runtime}}} for runtime in args.runtimes}
    out = {}
    for spec in args.variant:
        label, _, blob = spec.partition("=")
        try:
            out[label] = json.loads(blob)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"--variant {spec!r}: the part after '=' is not JSON: {exc}") from exc
    return out


def run(args: argparse.Namespace) -> None:
    from lit3r.app.session import Session
    from lit3r.settings import load_settings

    args.out.parent.mkdir(parents=True, exist_ok=True)
    labels = variants(args)
    with ExitStack() as stack:
        sessions = {}
        for label, overrides in labels.items():
            settings = load_settings(args.preset, home=args.home, **overrides)
            started = time.perf_counter()
            sessions[label] = stack.enter_context(Session(settings))
            print(f"{label}: server up in {time.perf_counter() - started:.1f} s", flush=True)
        order = list(labels)
        for number, question in enumerate(QUESTIONS[: args.limit]):
            turn = number % len(order)
            for runtime in [*order[turn:], *order[:turn]]:
                load = os.getloadavg()[0]
                log_path = args.home / LOG
                log_start = log_path.stat().st_size if log_path.is_file() else 0
                started = time.perf_counter()
                answer = sessions[runtime].ask(question)
                row = {
                    "runtime": runtime,
                    "question": question,
                    "answer": answer.text,
                    "chunks": [c.chunk_id for c in answer.citations],
                    "fallbacks": [f.describe() for f in answer.fallback_steps],
                    "wall_s": round(time.perf_counter() - started, 2),
                    "calls": model_calls(answer.trace_path),
                    "load_before": round(load, 2),
                }
                with log_path.open("rb") as log:  # both servers log here; only the one asked is busy now
                    log.seek(log_start)
                    row["server"] = server_figures(log.read().decode("utf-8", errors="replace"))
                with args.out.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
                print(
                    f"[{number + 1}] {runtime}: {row['wall_s']:.0f} s, load {load:.1f}: {answer.text[:90]!r}",
                    flush=True,
                )


def median(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def score(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for line in args.out.read_text(encoding="utf-8").splitlines() if line.strip()]
    runtimes = list(dict.fromkeys(r["runtime"] for r in rows))
    for runtime in runtimes:
        mine = [r for r in rows if r["runtime"] == runtime]
        summary = {
            "questions": len(mine),
            "median_wall_s": median([r["wall_s"] for r in mine]),
            "median_model_s": median([sum(c["seconds"] for c in r["calls"]) for r in mine]),
            "median_prompt_tokens": median([sum(c["prompt_tokens"] for c in r["calls"]) for r in mine]),
            "median_completion_tokens": median([sum(c["completion_tokens"] for c in r["calls"]) for r in mine]),
            "median_prompt_tokens_evaluated": median(
                [r["server"]["prompt_tokens_evaluated"] for r in mine if "server" in r]
            ),
            "model_calls": sum(len(r["calls"]) for r in mine),
            "fallbacks": sum(bool(r["fallbacks"]) for r in mine),
            "median_load": median([r["load_before"] for r in mine]),
        }
        print(runtime, json.dumps(summary))
    by_question: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        by_question.setdefault(r["question"], {})[r["runtime"]] = r
    same = compared = 0
    for question, answers in by_question.items():
        if len(answers) > 1:
            compared += 1
            same += len({a["answer"] for a in answers.values()}) == 1
        print(f"\n{question}")
        for runtime, a in answers.items():
            print(f"  {runtime} ({a['wall_s']:.0f} s): {a['answer']!r} {a['chunks']}")
    print(f"\nidentical answers: {same} of {compared} questions asked of more than one runtime")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--preset", default="local")
    parser.add_argument("--runtimes", nargs="+", default=["gpt4all", "llama_cpp"])
    parser.add_argument(
        "--variant", action="append", help="LABEL=JSON settings merged into the preset (repeat; replaces --runtimes)"
    )
    parser.add_argument("--limit", type=int, default=len(QUESTIONS))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--score", action="store_true", help="summarise --out instead of running")
    args = parser.parse_args()
    score(args) if args.score else run(args)


if __name__ == "__main__":
    main()
