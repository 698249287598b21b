"""MCP over stdio, measured as a host sees it: start-up, the first ask (the encoder loads), later asks, and the
longest silence between progress notifications during an ask (what a host's request time-out must cover).

    python benchmarks/bench_mcp.py --home .lit3r-demo --repeat 3 --out bench-out/mcp.json

Launches the installed ``lit3r mcp`` with the SDK's stdio client, like a host. The questions are the demo's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from report_file import emit

QUESTIONS = [
    "How much did evidence verification reduce unsupported claims?",
    "How many questions does the LocatorQA benchmark contain?",
    "Which fusion method reached the highest recall at 10?",
]


async def timed_ask(client: Client, question: str) -> dict:
    """One ask: wall time, progress notifications, and the longest gap without one (from the request on)."""
    stamps: list[float] = []

    async def on_progress(_value, _total, _message) -> None:
        stamps.append(time.perf_counter())

    started = time.perf_counter()
    result = await client.call_tool("ask", {"question": question}, progress_callback=on_progress)
    ended = time.perf_counter()
    points = [started, *stamps, ended]
    return {
        "question": question,
        "seconds": round(ended - started, 3),
        "progress_notifications": len(stamps),
        "longest_silence_s": round(max(b - a for a, b in zip(points, points[1:], strict=False)), 3),
        "citations": len((result.structured_content or {}).get("citations") or []),
        "error": result.is_error,
    }


async def run(home: Path, repeat: int) -> dict:
    command = str(Path(sys.executable).parent / "lit3r")
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    params = StdioServerParameters(command=command, args=["--home", str(home), "mcp"], env=env)
    started = time.perf_counter()
    async with Client(params) as client:
        ready = time.perf_counter() - started
        asks = [await timed_ask(client, QUESTIONS[i % len(QUESTIONS)]) for i in range(repeat + 1)]
    later = asks[1:]
    return {
        "initialize_s": round(ready, 3),
        "first_ask": asks[0],
        "later_asks_median_s": round(statistics.median(a["seconds"] for a in later), 3) if later else None,
        "longest_silence_s": max(a["longest_silence_s"] for a in asks),
        "asks": asks,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="A built home (e.g. the demo's).")
    parser.add_argument("--repeat", type=int, default=3, help="Asks after the first one.")
    parser.add_argument("--out", type=Path, help="Write the report here too.")
    args = parser.parse_args()
    report = anyio.run(run, args.home, args.repeat)
    emit(report, args.out)


if __name__ == "__main__":
    main()
