"""PDFs parsed in parallel: a pool of worker processes, one per core, with per-page progress.

Each worker is a fresh interpreter (spawned, not forked: the parent may hold threads, a database and
models) that parses one file at a time with :func:`~lit3r.corpus.parsers.read_file`. The worker is the
isolation a damaged file needs: its parse is stopped by an alarm after the file's time limit, and a worker
that crashes (PDFium is C) is replaced and the file named as failed, while the other files go on. Workers
die with the parent (``PR_SET_PDEATHSIG`` on Linux, and a watch on the parent's pid everywhere), so an
interrupted ingest leaves no parser behind. Memory stays bounded: at most two files per worker are in
flight, a worker is replaced after :data:`TASKS_PER_WORKER` files, and a result is a parsed paper, not
its pages.

Progress: every worker reports ``(file, pages done, pages in file)`` after each page through a queue
that a thread of the parent reads and hands to ``on_page``.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lit3r.models import ParsedPaper
from lit3r.settings import LimitsSettings

TASKS_PER_WORKER = 25
"""Files one worker parses before it is replaced (what a parser leaks is given back)."""
PARENT_POLL_S = 1.0

OnPage = Callable[[str, int, int], None]
"""Called in the parent with (file, pages done, pages in the file) after each page a worker reads."""


@dataclass
class Parsed:
    """What parsing one file gave: its papers and the records it left out, or the problem."""

    path: Path
    papers: list[ParsedPaper] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    problem: str | None = None
    pages: int = 0


def workers_for(limits: LimitsSettings, files: int) -> int:
    """How many workers to start: ``limits.parse_workers`` (0: every core), never more than the files."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(limits.parse_workers or cores, files))


def time_limit(path: Path) -> float:
    """Seconds one file may take: two minutes plus a minute per MB, as the single-file reader allows."""
    try:
        return 120.0 + 60.0 * path.stat().st_size / 1e6
    except OSError:
        return 120.0


def parse_in_parallel(
    paths: Iterable[Path], limits: LimitsSettings, workers: int, on_page: OnPage | None = None
) -> Iterator[Parsed]:
    """Parse ``paths`` in ``workers`` processes; yield each file's :class:`Parsed` as it finishes."""
    context = multiprocessing.get_context("spawn")
    pages: Any = context.Queue()
    stop = threading.Event()
    reader = threading.Thread(target=_forward_pages, args=(pages, on_page, stop), daemon=True)
    reader.start()
    todo = list(paths)
    limits_data = limits.model_dump()
    try:
        while todo:
            suspects, todo = yield from _run_pool(todo, limits_data, workers, context, pages)
            for path in suspects:  # the files in flight when a worker crashed: one at a time finds the culprit
                yield from _run_pool([path], limits_data, 1, context, pages, solo=True)
    finally:
        stop.set()
        reader.join(timeout=2)
        pages.close()
        pages.join_thread()


def _run_pool(
    todo: list[Path], limits_data: dict, workers: int, context: Any, pages: Any, solo: bool = False
) -> Generator[Parsed, None, tuple[list[Path], list[Path]]]:
    """Parse ``todo`` until done or until a worker crashes; then return the files that were in flight (any
    of them may have crashed it) and those not started. ``solo``: one file alone, so a crash is its own."""
    pool = ProcessPoolExecutor(
        workers,
        mp_context=context,
        initializer=_init_worker,
        initargs=(os.getpid(), pages),
        max_tasks_per_child=TASKS_PER_WORKER,
    )
    in_flight: dict[Future, Path] = {}
    waiting = list(todo)
    try:
        while waiting or in_flight:
            while waiting and len(in_flight) < 2 * workers:
                path = waiting.pop(0)
                in_flight[pool.submit(_parse_one, str(path), limits_data, time_limit(path))] = path
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            crashed = False
            for future in done:
                path = in_flight.pop(future)
                try:
                    yield _as_parsed(path, future.result())
                except BrokenProcessPool:
                    if solo:
                        yield Parsed(path, problem="the PDF reader crashed while parsing this file")
                    else:
                        in_flight[future] = path
                        crashed = True
            if crashed:
                return list(in_flight.values()), waiting
        return [], []
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _as_parsed(path: Path, result: tuple) -> Parsed:
    status, payload, skipped, pages = result
    if status == "error":
        return Parsed(path, problem=payload, pages=pages)
    return Parsed(path, papers=payload, skipped=skipped, pages=pages)


def _forward_pages(pages: Any, on_page: OnPage | None, stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            path, done, total = pages.get(timeout=0.1)
        except queue.Empty:
            continue
        except (EOFError, OSError):
            return
        if on_page:
            on_page(path, done, total)


# --- in the worker ------------------------------------------------------------------------------

_PAGES: Any = None


class _TimeUp(Exception):
    pass


def _init_worker(parent: int, pages: Any) -> None:
    """Die with the parent, ignore Ctrl-C (the parent stops the pool), keep the progress queue."""
    global _PAGES
    _PAGES = pages
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except OSError:
            pass
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _watch_parent(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(1)
        time.sleep(PARENT_POLL_S)


def _alarm(_signum: int, _frame: Any) -> None:
    raise _TimeUp


def _parse_one(path: str, limits_data: dict, seconds: float) -> tuple[str, Any, list[str], int]:
    """``("ok", papers, skipped, pages)`` or ``("error", problem, [], pages)``; nothing escapes."""
    from lit3r.corpus.parsers import ParseError, read_file

    skipped: list[str] = []
    pages = [0]

    def on_page(done: int, total: int) -> None:
        pages[0] = total
        if _PAGES is not None:
            _PAGES.put((path, done, total))

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        papers = read_file(Path(path), LimitsSettings(**limits_data), skipped.append, on_page, isolate=False)
        return "ok", papers, skipped, pages[0]
    except _TimeUp:
        return "error", f"reading the PDF took longer than {seconds:.0f} s (damaged file?)", [], pages[0]
    except ParseError as exc:
        return "error", exc.problem, [], pages[0]
    except Exception as exc:  # the process boundary: a parser bug is this file's problem, not the ingest's
        return "error", f"the parser failed on this file ({type(exc).__name__}: {exc})"[:300], [], pages[0]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
