"""A :class:`CorpusIndex` whose chunk BM25 and dense index are spread over Ray shard actors.

The tools, the agent, the server and MCP use it unchanged: ``bm25_chunks`` and
``dense`` answer ``search`` / ``search_many`` (and ``vectors_for``) like
:class:`~lit3r.index.bm25.BM25Index` and :class:`~lit3r.index.dense.DenseIndex`,
by sending the query (a batch of queries per call) to every shard that holds
an allowed chunk and merging the shards' top ``k`` by score. Scores are those
of the one-machine index (BM25 is scored with corpus-wide statistics) and ties
break by the chunk's position in the generation, as on one machine, so the
rankings are the same; the existing RRF then fuses them as before. Paper BM25,
paper vectors, the citation graph and the chunk records are small and read
from the local generation.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Iterable
from functools import cached_property
from pathlib import Path

import numpy as np

from lit3r.index.corpus_index import CorpusIndex, IndexNotBuiltError
from lit3r.index.dense import DenseIndex, normalize, one_query
from lit3r.index.distributed.cluster import connect
from lit3r.index.distributed.serve import ShardPool, split_by_shard
from lit3r.index.distributed.shard_worker import ShardHit
from lit3r.index.distributed.shards import ShardSet
from lit3r.settings import Settings

Hit = tuple[str, float]


def merge_hits(per_shard: Iterable[list[ShardHit]], k: int, later_rows_first: bool = False) -> list[Hit]:
    """The best ``k`` of the shards' hits by score; equal scores in row order (descending if asked)."""
    sign = -1 if later_rows_first else 1
    best = heapq.nsmallest(k, (h for hits in per_shard for h in hits), key=lambda h: (-h[1], sign * h[2]))
    return [(chunk_id, score) for chunk_id, score, _row in best]


class _ShardedChunks:
    """What both chunk-level proxies share: the pool and which shard holds each chunk."""

    def __init__(self, pool: ShardPool, chunk_shard: dict[str, int], ids: list[str]) -> None:
        self.pool = pool
        self.chunk_shard = chunk_shard
        self.ids = ids

    def __len__(self) -> int:
        return len(self.ids)

    def _parts(self, allowed: Collection[str] | None) -> dict[int, set[str] | None]:
        return split_by_shard(allowed, self.chunk_shard, self.pool.handles)


class ShardedBM25(_ShardedChunks):
    """Chunk BM25 over the shards, with :class:`~lit3r.index.bm25.BM25Index`'s search methods."""

    def search(self, query: str, k: int, allowed: set[str] | None = None) -> list[Hit]:
        return self.search_many([query], k, allowed)[0]

    def search_many(self, queries: list[str], k: int, allowed: set[str] | None = None) -> list[list[Hit]]:
        parts = self._parts(allowed)
        if k <= 0 or not parts:
            return [[] for _ in queries]
        results = self.pool.call("bm25_search", {n: (list(queries), k, part) for n, part in parts.items()})
        return [merge_hits((r[q] for r in results.values()), k) for q in range(len(queries))]

    def held(self, tokens: list[str], ids: set[str]) -> list[tuple[int, bool]]:
        """For each token: how many chunks of the corpus hold it (every shard's count), and whether one of ``ids``
        does (:meth:`~lit3r.index.bm25.BM25Index.held`)."""
        parts = self._parts(ids)
        results = self.pool.call("bm25_held", {n: (list(tokens), parts.get(n) or set()) for n in self.pool.handles})
        return [
            (sum(r[i][0] for r in results.values()), any(r[i][1] for r in results.values())) for i in range(len(tokens))
        ]


class ShardedDense(_ShardedChunks):
    """Chunk vectors over the shards, with :class:`~lit3r.index.dense.DenseIndex`'s search methods."""

    def __init__(self, pool: ShardPool, chunk_shard: dict[str, int], ids: list[str], dim: int, fp16: bool) -> None:
        super().__init__(pool, chunk_shard, ids)
        self.dim = dim
        self.fp16 = fp16

    def search(self, query_vec: np.ndarray, k: int, allowed: set[str] | None = None) -> list[Hit]:
        return self.search_many(one_query(query_vec), k, allowed)[0]

    def search_many(self, query_vecs: np.ndarray, k: int, allowed: set[str] | None = None) -> list[list[Hit]]:
        queries = np.array(query_vecs, dtype=np.float32, ndmin=2)
        normalize(queries, self.dim)  # the checks only: each shard normalises, as the one-machine index does
        parts = self._parts(allowed)
        if k <= 0 or not self.ids or not parts:
            return [[] for _ in queries]
        # One machine scores a small allowed set directly and filters a FAISS scan for a large one; the
        # shards are told which, so scores agree to the bit, and ties come out in the same order.
        direct = allowed is not None and sum(len(p or ()) for p in parts.values()) <= DenseIndex.subset_scan_limit
        limit = np.iinfo(np.int64).max if direct else -1
        results = self.pool.call("dense_search", {n: (queries, k, part, limit) for n, part in parts.items()})
        return [merge_hits((r[q] for r in results.values()), k, not direct) for q in range(len(queries))]

    def vectors_for(self, ids: list[str]) -> np.ndarray:
        """The stored vectors of ``ids``, in order; ``KeyError`` for an id no shard holds."""
        by_shard: dict[int, list[int]] = {}
        for position, chunk_id in enumerate(ids):
            by_shard.setdefault(self.chunk_shard[chunk_id], []).append(position)
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        results = self.pool.call("vectors_for", {n: ([ids[p] for p in pos],) for n, pos in by_shard.items()})
        for number, positions in by_shard.items():
            out[positions] = results[number]
        return out


class ShardedCorpusIndex(CorpusIndex):
    """A generation searched through its shard actors; everything else is read from the local files. It implements
    :class:`lit3r.index.protocol.Index` (its :meth:`load_all` loads the local parts; the shards hold theirs)."""

    def __init__(self, folder: Path, settings: Settings, pool: ShardPool) -> None:
        super().__init__(folder, settings)
        self.pool = pool

    @classmethod
    def connect(cls, folder: Path, settings: Settings) -> ShardedCorpusIndex:
        """Start one actor per shard of the generation in ``folder`` on the cluster the settings name."""
        shard_set = ShardSet.of(folder)
        if shard_set is None:
            raise IndexNotBuiltError(
                f"the index {folder} has no search shards: build them with "
                f"`lit3r index --ray {settings.ray.address}` (or set LIT3R_RAY__SEARCH=false to search it here)"
            )
        ray = connect(settings.ray)
        return cls(folder, settings, ShardPool.start(ray, shard_set, settings.ray))

    @cached_property
    def chunk_shard(self) -> dict[str, int]:
        return self.pool.shard_set.chunk_shards(self)

    @cached_property
    def bm25_chunks(self) -> ShardedBM25:  # type: ignore[override]
        return ShardedBM25(self.pool, self.chunk_shard, [c.id for c in self.chunks])

    @cached_property
    def dense(self) -> ShardedDense:  # type: ignore[override]
        dim, fp16 = int(self.manifest["encoder"]["dim"]), self.settings.index.dtype == "fp16"
        return ShardedDense(self.pool, self.chunk_shard, [c.id for c in self.chunks], dim, fp16)

    def close(self) -> None:
        self.pool.close()
