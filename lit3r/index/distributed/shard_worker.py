"""What runs on the cluster's workers for the shards: the tasks that write a shard, the actor that serves one.

This module imports only the index files' readers and writers (bm25s, FAISS,
numpy), not the encoders: a shard actor starts in a second, with no torch.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from lit3r.index.bm25 import BM25Index, tokenize
from lit3r.index.dense import DenseIndex
from lit3r.index.distributed.term_stats import TermStats, build_shard_bm25
from lit3r.settings import BM25Settings, IndexSettings


def tokenize_shard(texts: list[str], bm25: str) -> tuple[TermStats, list[list[str]]]:
    """Ray task: a shard's tokens and statistics."""
    tokens = tokenize(texts, BM25Settings.model_validate_json(bm25))
    return TermStats.of(tokens), tokens


def read_shard_tokens(folder: str) -> tuple[TermStats, list[list[str]]]:
    """Ray task: an unchanged shard's statistics and tokens, from the previous shard set."""
    path = Path(folder)
    stats = TermStats.from_json(json.loads((path / "stats.json").read_text(encoding="utf-8")))
    return stats, BM25Index.load(path / "bm25").corpus_tokens()


def write_shard(
    folder: str,
    ids: list[str],
    rows: list[int],
    tokens: list[list[str]],
    vectors: np.ndarray,
    own: TermStats,
    corpus: TermStats,
    bm25: str,
    fp16: bool,
) -> int:
    """Ray task: score the shard's BM25 with the corpus statistics and write it with its vectors."""
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    build_shard_bm25(ids, tokens, BM25Settings.model_validate_json(bm25), corpus).save(path / "bm25")
    stored_vectors_index(ids, vectors, fp16).save(path / "dense")
    np.save(path / "rows.npy", np.asarray(rows, dtype=np.int64))
    (path / "stats.json").write_text(json.dumps(own.to_json()), encoding="utf-8")
    return len(ids)


def stored_vectors_index(ids: list[str], vectors: np.ndarray, fp16: bool) -> DenseIndex:
    """A flat FAISS index (fp16 with ``fp16``) of vectors read from a built :class:`DenseIndex`, added as they are.

    They are normalised already; :meth:`DenseIndex.build` would normalise them again and move their last
    bits, and the shard's scores would no longer be the one-machine index's to the bit.
    """
    dim = vectors.shape[1]
    if fp16:
        index = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
    else:
        index = faiss.IndexFlatIP(dim)
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return DenseIndex(index, ids, IndexSettings(dense_dtype="fp16" if fp16 else "fp32"), dim)


ShardHit = tuple[str, float, int]
"""``(chunk id, score, row of the chunk in the generation)``."""


class ShardServer:
    """One shard's chunk indexes; run as a Ray actor (see :meth:`ShardPool.start`)."""

    def __init__(self, folder: str) -> None:
        path = Path(folder)
        if not (path / "rows.npy").exists():
            raise FileNotFoundError(
                f"shard {path} not found on {socket.gethostname()}: the index must be on a filesystem "
                "every node mounts at the same path"
            )
        self.name = path.name
        self.bm25 = BM25Index.load(path / "bm25")
        self.dense = DenseIndex.load(path / "dense")
        self.row = dict(zip(self.dense.ids, np.load(path / "rows.npy").tolist(), strict=True))

    def bm25_search(self, queries: list[str], k: int, allowed: set[str] | None) -> list[list[ShardHit]]:
        """Each query's best ``k`` chunks of this shard by BM25 (scores are corpus-wide)."""
        return [[(i, s, self.row[i]) for i, s in hits] for hits in self.bm25.search_many(queries, k, allowed)]

    def bm25_held(self, tokens: list[str], ids: set[str]) -> list[tuple[int, bool]]:
        """For each token: how many of this shard's chunks hold it, and whether one of ``ids`` does."""
        return self.bm25.held(tokens, ids)

    def dense_search(
        self, vectors: np.ndarray, k: int, allowed: set[str] | None, subset_scan_limit: int
    ) -> list[list[ShardHit]]:
        """Each query vector's ``k`` nearest chunks of this shard.

        ``subset_scan_limit`` is the whole index's choice between scoring a restricted set directly and
        filtering a FAISS scan, so each chunk's score is computed as on one machine, to the last bit.
        """
        self.dense.subset_scan_limit = subset_scan_limit
        return [[(i, s, self.row[i]) for i, s in hits] for hits in self.dense.search_many(vectors, k, allowed)]

    def vectors_for(self, ids: list[str]) -> np.ndarray:
        return self.dense.vectors_for(ids)

    def info(self) -> dict[str, Any]:
        """Which process and node serve this shard, and its size (for tests and operators)."""
        import ray

        node = ray.get_runtime_context().get_node_id() if ray.is_initialized() else None  # None: not in an actor
        return {"name": self.name, "pid": os.getpid(), "node_id": node}
