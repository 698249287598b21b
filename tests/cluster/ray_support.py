"""Test support for the Ray pieces: an in-process stand-in for Ray's calls, and corpora to index.

:class:`InlineRay` runs ``ray.remote`` tasks and actor methods at once in this
process, so the shard orchestration and the sharded index can be checked
against the one-machine index without a cluster. The real cluster tests
(tests/cluster/ray_cluster.py, run by tests/cluster/test_ray_namespace.py) use Ray itself.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from lit3r.index.corpus_index import CorpusIndex
from lit3r.retrieval.search import rank_chunks

from conftest import SHARED_DATA

QASPER = SHARED_DATA / "qasper" / "qasper-test-v0.3.corpus-and-dev-questions.json.gz"
NAMESPACE_ENV = "LIT3R_RAY_NAMESPACE"
"""Set to 1 by tests/cluster/test_ray_namespace.py for the cluster tests it runs inside a loopback-only namespace."""


DENSE_TOLERANCE = 1e-5
"""Cosines of vectors embedded in other batches, and FAISS's flat scan, round differently (one machine too)."""


def assert_same_ranking(got: list, expected: list, tolerance: float = DENSE_TOLERANCE) -> None:
    """Equal ids in order and scores within ``tolerance``; two chunks may trade places only if their
    scores are that close (a dense near-tie, decided by rounding)."""
    assert len(got) == len(expected)
    scores = dict(expected)
    for (gid, gscore), (eid, escore) in zip(got, expected, strict=True):
        assert gscore == pytest.approx(escore, abs=tolerance), (gid, eid)
        if gid != eid:
            assert scores.get(gid) == pytest.approx(escore, abs=tolerance), (gid, eid)


def assert_same_search(got_index: CorpusIndex, expected_index: CorpusIndex, query: str, restrict) -> None:
    """BM25 equal to the bit; dense equal to rounding; hybrid equal whenever the dense rankings are."""
    bm25 = rank_chunks(got_index, query, "bm25", 50, restrict)
    assert bm25 == rank_chunks(expected_index, query, "bm25", 50, restrict), query
    dense = rank_chunks(got_index, query, "dense", 50, restrict)
    expected_dense = rank_chunks(expected_index, query, "dense", 50, restrict)
    assert_same_ranking(dense, expected_dense)
    if [i for i, _ in dense] == [i for i, _ in expected_dense]:
        assert rank_chunks(got_index, query, "hybrid", 50, restrict) == rank_chunks(
            expected_index, query, "hybrid", 50, restrict
        ), query


class _Ref:
    def __init__(self, value: Any) -> None:
        self.value = value


def _resolve(args: tuple) -> list:
    # a copy, as Ray's serialisation would make: a shard must not share objects with its caller
    return [pickle.loads(pickle.dumps(a.value if isinstance(a, _Ref) else a)) for a in args]


class _Task:
    def __init__(self, fn, num_returns: int) -> None:
        self.fn, self.num_returns = fn, num_returns

    def remote(self, *args: Any):
        result = self.fn(*_resolve(args))
        return tuple(_Ref(r) for r in result) if self.num_returns > 1 else _Ref(result)


class _Method:
    def __init__(self, bound) -> None:
        self.bound = bound

    def remote(self, *args: Any) -> _Ref:
        return _Ref(self.bound(*_resolve(args)))


class _Handle:
    def __init__(self, instance: Any) -> None:
        self.instance = instance

    def __getattr__(self, name: str) -> _Method:
        return _Method(getattr(self.instance, name))


class _ActorClass:
    def __init__(self, cls) -> None:
        self.cls = cls
        self.options_seen: dict[str, Any] = {}

    def options(self, **options: Any) -> _ActorClass:
        self.options_seen = options
        return self

    def remote(self, *args: Any) -> _Handle:
        return _Handle(self.cls(*_resolve(args)))


class InlineRay:
    """The part of the ``ray`` module lit3r's shard code calls, run synchronously in this process."""

    class exceptions:  # noqa: N801 (mirrors ray.exceptions)
        class GetTimeoutError(TimeoutError):
            pass

        class RayActorError(RuntimeError):
            pass

    def remote(self, *args: Any, **options: Any):
        if args and not options:
            return self._wrap(args[0], 1)
        return lambda fn: self._wrap(fn, options.get("num_returns", 1))

    @staticmethod
    def _wrap(fn, num_returns: int):
        return _ActorClass(fn) if isinstance(fn, type) else _Task(fn, num_returns)

    def get(self, refs, timeout: float | None = None):
        return [r.value for r in refs] if isinstance(refs, list) else refs.value

    def put(self, value: Any) -> _Ref:
        return _Ref(value)

    def wait(self, refs: list, num_returns: int = 1):
        return refs[:num_returns], refs[num_returns:]

    def kill(self, handle: Any, no_restart: bool = True) -> None:
        pass


def qasper_subset(path: Path, count: int, skip: int = 0) -> Path:
    """A QASPER file (original layout) of ``count`` short papers of the shared test split, after ``skip``."""
    import gzip

    if not QASPER.exists():
        pytest.skip(f"needs the shared data folder: {QASPER}")
    with gzip.open(QASPER, "rt", encoding="utf-8") as handle:
        papers = json.load(handle)
    by_size = sorted(papers, key=lambda pid: (sum(len(s["paragraphs"]) for s in papers[pid]["full_text"]), pid))
    chosen = by_size[skip : skip + count]
    path.write_text(json.dumps({pid: papers[pid] for pid in chosen}), encoding="utf-8")
    return path
