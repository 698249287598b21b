"""How a dense search restricted to allowed ids runs: an exact scan of those rows, or a filtered FAISS search.

An approximate index searched with an ``IDSelector`` only keeps allowed candidates, so when a
share ``f`` of the vectors is allowed it must look at about ``1/f`` times as many candidates to
find the same number of them: HNSW's ``efSearch`` and IVF's ``nprobe`` are divided by ``f``.
Scoring the allowed rows directly costs one dot product per allowed vector. The plan compares
the two in vectors touched (HNSW: ``efSearch x M``; IVF: the vectors of the probed lists) and
takes the cheaper; a flat index filters its full scan exactly, so only its allowed-set size
decides. Both paths return the same hits for flat; for the approximate kinds the exact scan is
exact, and the filtered search keeps about the unrestricted recall (docs/BENCHMARKS.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import faiss
import numpy as np

from lit3r.settings import IndexSettings

Hit = tuple[str, float]
SCAN_BLOCK = 16384
"""Rows read back and scored at a time by an exact scan (bounds its memory to a block of vectors)."""
SMALL_BATCH = 16
"""Searches of fewer queries than this run FAISS on one thread (see :func:`faiss_threads`)."""


@contextmanager
def faiss_threads(queries: int) -> Iterator[None]:
    """Run FAISS single-threaded for a small batch of queries, restoring the thread count after.

    One query has nothing to share between threads, but FAISS's OpenMP regions still wait for every
    thread: on two cores busy with other work a flat search of 10,000 vectors took 24 ms with two
    threads and 0.4 ms with one (docs/BENCHMARKS.md). OpenMP's thread count is per calling thread,
    so this does not touch searches running in other threads.
    """
    if queries >= SMALL_BATCH:
        yield
        return
    previous = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(previous)


IVF_DEFAULT_SHARE = 8
"""Without ``ivf_nprobe``, an IVF search scans one list in this many."""


def ivf_probes(settings: IndexSettings, nlist: int) -> int:
    """Lists an IVF search scans: ``ivf_nprobe``, or an eighth of the lists, and never more than there are."""
    wanted = settings.ivf_nprobe or math.ceil(nlist / IVF_DEFAULT_SHARE)
    return max(1, min(wanted, nlist))


@dataclass(frozen=True)
class SearchPlan:
    """What a restricted search does: an exact scan of the allowed rows, or a widened filtered search."""

    exact: bool
    hnsw_ef: int = 0
    ivf_nprobe: int = 0


def plan_restricted(
    settings: IndexSettings, nlist: int, total: int, allowed: int, k: int, scan_limit: int
) -> SearchPlan:
    """The cheaper way to find the ``k`` best of ``allowed`` rows out of ``total`` (``nlist``: IVF lists)."""
    if allowed <= scan_limit:
        return SearchPlan(exact=True)
    share = allowed / total
    if settings.dense_kind == "hnsw":
        ef = min(total, math.ceil(max(settings.hnsw_ef_search, k) / share))
        return SearchPlan(exact=allowed <= ef * settings.hnsw_m, hnsw_ef=ef)
    if settings.dense_kind == "ivf":
        nprobe = min(nlist, math.ceil(ivf_probes(settings, nlist) / share))
        return SearchPlan(exact=allowed <= nprobe * total / nlist, ivf_nprobe=nprobe)
    return SearchPlan(exact=False)


def top_k_of_rows(
    queries: np.ndarray, rows: np.ndarray, k: int, read: Callable[[np.ndarray], np.ndarray]
) -> list[list[tuple[int, float]]]:
    """Exact top ``k`` ``(row, score)`` per query among ``rows``, best first (ties: lower row first).

    ``read(rows)`` returns the stored vectors of ``rows``; they are read and scored a block at a time
    with FAISS's exact k-NN (inside :func:`faiss_threads`, one thread for a few queries, where a
    numpy product through a multi-threaded BLAS took 20 ms instead of 1.3 ms on two busy cores).
    """
    best_rows = np.zeros((len(queries), 0), dtype=np.int64)
    best_scores = np.zeros((len(queries), 0), dtype=np.float32)
    for start in range(0, len(rows), SCAN_BLOCK):
        block = rows[start : start + SCAN_BLOCK]
        scores, found = faiss.knn(queries, read(block), min(k, len(block)), metric=faiss.METRIC_INNER_PRODUCT)
        best_rows = np.concatenate([best_rows, block[found]], axis=1)
        best_scores = np.concatenate([best_scores, scores], axis=1)
    results = []
    for cand_rows, cand_scores in zip(best_rows, best_scores, strict=True):
        order = np.lexsort((cand_rows, -cand_scores))[:k]
        results.append([(int(cand_rows[i]), float(cand_scores[i])) for i in order])
    return results
