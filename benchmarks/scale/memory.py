"""Resident memory of this process, read from /proc (Linux), and its peak during a block of work."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path


def rss_mb() -> dict[str, float]:
    """Resident memory now: total, anonymous (heap: what the process built) and file-backed (mapped files)."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            fields[name] = int(value.split()[0]) / 1024
    return {
        "rss_mb": round(fields["VmRSS"], 1),
        "anon_mb": round(fields.get("RssAnon", 0.0), 1),
        "file_mb": round(fields.get("RssFile", 0.0), 1),
    }


class PeakRSS:
    """Samples the resident size every ``interval`` seconds while the ``with`` block runs; ``peak_mb`` after."""

    def __init__(self, interval: float = 0.1) -> None:
        self.interval = interval
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_mb = max(self.peak_mb, rss_mb()["rss_mb"])
            time.sleep(self.interval)

    def __enter__(self) -> PeakRSS:
        self.peak_mb = rss_mb()["rss_mb"]
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak_mb = round(max(self.peak_mb, rss_mb()["rss_mb"]), 1)


def available_mb() -> float:
    """MemAvailable of the machine (what can still be allocated without swapping or the OOM killer)."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return float("inf")


def guard_memory(min_free_mb: float, interval: float = 0.5) -> None:
    """Stop this process (exit code 3, with a message) if the machine's available memory falls below the floor.

    The machine is shared: a benchmark at millions of chunks must not push other work into the OOM killer.
    """

    def watch() -> None:
        while True:
            free = available_mb()
            if free < min_free_mb:
                print(
                    f"bench_scale: stopping, only {free:.0f} MB of memory left on the machine (floor {min_free_mb:.0f}"
                    f" MB, this process holds {rss_mb()['rss_mb']:.0f} MB); use a smaller --sizes or a lower "
                    "--min-free-mb",
                    file=sys.stderr,
                    flush=True,
                )
                os._exit(3)
            time.sleep(interval)

    threading.Thread(target=watch, daemon=True).start()
