"""Dense index: exact inner-product search over L2-normalised vectors with FAISS, keyed by string ids.

Vectors are normalised defensively on the way in (so inner product is cosine
similarity). ``fp16=True`` stores them as half floats (``IndexScalarQuantizer``
with ``QT_fp16``): half the size, scores within about 1e-3.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import faiss
import numpy as np

META_FILE = "lit3r_dense.json"
INDEX_FILE = "vectors.faiss"
FORMAT_VERSION = 1

Hit = tuple[str, float]


def normalize(vectors: np.ndarray, dim: int | None = None) -> np.ndarray:
    """A float32 copy of ``vectors`` (one or two dimensional) with unit L2 rows.

    Raises ``ValueError`` for a wrong width, non-finite values or zero rows.
    """
    matrix = np.array(vectors, dtype=np.float32, copy=True, ndmin=2)
    if matrix.ndim != 2:
        raise ValueError(f"expected a vector or a matrix, got shape {np.shape(vectors)}")
    if dim is not None and matrix.shape[1] != dim:
        raise ValueError(f"vectors have dimension {matrix.shape[1]}, the index has {dim}")
    if not np.isfinite(matrix).all():
        raise ValueError("vectors contain NaN or infinite values")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if (norms == 0).any():
        raise ValueError("cannot normalise a zero vector")
    return np.ascontiguousarray(matrix / norms, dtype=np.float32)


class DenseIndex:
    """Exact cosine-similarity search over id-keyed vectors; use :meth:`build` or :meth:`load` to make one."""

    subset_scan_limit = 4096
    """Up to this many allowed ids, a restricted search scores them directly; above, FAISS filters a full scan."""

    def __init__(self, index: faiss.Index, ids: list[str], fp16: bool) -> None:
        if index.ntotal != len(ids):
            raise ValueError(f"index holds {index.ntotal} vectors for {len(ids)} ids")
        self._index = index
        self.ids = list(ids)
        self.fp16 = fp16
        self._row = {doc_id: row for row, doc_id in enumerate(self.ids)}
        if len(self._row) != len(self.ids):
            raise ValueError("duplicate ids in dense index")

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return self._index.d

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def empty(cls, dim: int, fp16: bool = False) -> DenseIndex:
        """An index with no vectors yet."""
        if fp16:
            index = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
        else:
            index = faiss.IndexFlatIP(dim)
        return cls(index, [], fp16)

    @classmethod
    def build(cls, ids: list[str], vectors: np.ndarray, fp16: bool = False) -> DenseIndex:
        """Index ``vectors`` (shape ``(len(ids), dim)``) under ``ids``."""
        matrix = np.asarray(vectors)
        if matrix.ndim != 2:
            raise ValueError(f"expected a (n, dim) matrix, got shape {matrix.shape}")
        return cls.empty(matrix.shape[1], fp16).extend(ids, matrix)

    def extend(self, ids: list[str], vectors: np.ndarray) -> DenseIndex:
        """Add vectors in place (old vectors are not touched) and return this index."""
        matrix = normalize(vectors, self.dim)
        if len(ids) != len(matrix):
            raise ValueError(f"{len(ids)} ids for {len(matrix)} vectors")
        clash = [i for i in ids if i in self._row]
        if clash or len(set(ids)) != len(ids):
            raise ValueError(f"duplicate ids: {(clash or sorted(ids))[:5]}")
        self._index.add(matrix)
        for doc_id in ids:
            self._row[doc_id] = len(self.ids)
            self.ids.append(doc_id)
        return self

    def vectors_for(self, ids: list[str]) -> np.ndarray:
        """The stored (normalised) vectors of ``ids``, shape ``(len(ids), dim)``; ``KeyError`` for unknown ids."""
        rows = np.array([self._row[i] for i in ids], dtype=np.int64)
        if len(rows) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._index.reconstruct_batch(rows)

    def search(self, query_vec: np.ndarray, k: int, allowed: set[str] | None = None) -> list[Hit]:
        """Ranked ``(id, cosine)`` of the ``k`` nearest vectors, best first; ``allowed`` restricts to those ids."""
        query = np.asarray(query_vec)
        if query.ndim != 1 and query.shape[0] != 1:
            raise ValueError(f"search takes one query vector, got shape {query.shape}; use search_many")
        return self.search_many(query.reshape(1, -1), k, allowed)[0]

    def search_many(self, query_vecs: np.ndarray, k: int, allowed: set[str] | None = None) -> list[list[Hit]]:
        """:meth:`search` for a ``(m, dim)`` matrix of queries, batched."""
        queries = normalize(query_vecs, self.dim)
        if k <= 0 or not self.ids:
            return [[] for _ in queries]
        if allowed is None:
            scores, rows = self._index.search(queries, min(k, len(self.ids)))
            return [self._hits(s, r) for s, r in zip(scores, rows, strict=True)]
        subset = np.array(sorted(self._row[i] for i in allowed if i in self._row), dtype=np.int64)
        if len(subset) == 0:
            return [[] for _ in queries]
        if len(subset) <= self.subset_scan_limit:
            return self._search_subset(queries, k, subset)
        params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(subset))
        scores, rows = self._index.search(queries, min(k, len(subset)), params=params)
        return [self._hits(s, r) for s, r in zip(scores, rows, strict=True)]

    def _search_subset(self, queries: np.ndarray, k: int, subset: np.ndarray) -> list[list[Hit]]:
        """Score the ``subset`` rows directly (dot products with their stored vectors)."""
        all_scores = queries @ self._index.reconstruct_batch(subset).T
        results = []
        for scores in all_scores:
            top = np.argsort(-scores, kind="stable")[:k]
            results.append([(self.ids[subset[j]], float(scores[j])) for j in top])
        return results

    def _hits(self, scores: np.ndarray, rows: np.ndarray) -> list[Hit]:
        """FAISS output for one query as ``(id, score)``, dropping the ``-1`` padding."""
        return [(self.ids[r], float(s)) for s, r in zip(scores, rows, strict=True) if r >= 0]

    def save(self, folder: Path) -> None:
        """Write the FAISS index and the ids to ``folder`` (each file replaced atomically)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".dense-", dir=folder))
        try:
            faiss.write_index(self._index, str(tmp / INDEX_FILE))
            meta = {"format": FORMAT_VERSION, "dim": self.dim, "fp16": self.fp16, "ids": self.ids}
            (tmp / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
            for path in tmp.iterdir():
                os.replace(path, folder / path.name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @classmethod
    def load(cls, folder: Path, mmap: bool = False) -> DenseIndex:
        """Read an index written by :meth:`save`; ``mmap`` maps the vectors from disk instead of reading them."""
        folder = Path(folder)
        meta_path = folder / META_FILE
        if not meta_path.exists():
            raise FileNotFoundError(f"{folder}: no dense index ({META_FILE} missing)")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT_VERSION:
            raise ValueError(f"{folder}: dense index format {meta.get('format')}, expected {FORMAT_VERSION}")
        flags = faiss.IO_FLAG_MMAP if mmap else 0
        index = faiss.read_index(str(folder / INDEX_FILE), flags)
        if index.d != meta["dim"]:
            raise ValueError(f"{folder}: index dimension {index.d} does not match recorded {meta['dim']}")
        return cls(index, meta["ids"], bool(meta["fp16"]))
