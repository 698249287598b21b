"""Dense index: inner-product search over L2-normalised vectors with FAISS, keyed by string ids.

Vectors are normalised defensively on the way in (so inner product is cosine
similarity). How they are stored and searched follows :class:`~lit3r.settings.IndexSettings`:

* ``dense_kind``: ``flat`` scans every vector (exact); ``hnsw`` walks an HNSW graph and ``ivf``
  scans the k-means lists nearest to the query (both approximate; docs/BENCHMARKS.md measures
  their recall against flat);
* ``dense_dtype``: ``fp32``, ``fp16`` (scores within about 1e-3) or ``int8`` (FAISS's scalar
  quantiser with per-dimension ranges learnt from the vectors of the build).

The FAISS index behind each pair is named by a factory string (:func:`factory_string`).
A search restricted to allowed ids scores them directly when that is cheaper than the
approximate search would be, and otherwise filters the FAISS search with an ``IDSelector``
whose candidate budget grows as the allowed share shrinks (see :mod:`lit3r.index.dense_search`).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import faiss
import numpy as np

from lit3r.index.dense_search import Hit, SearchPlan, faiss_threads, ivf_probes, plan_restricted, top_k_of_rows
from lit3r.settings import IndexSettings

META_FILE = "lit3r_dense.json"
INDEX_FILE = "vectors.faiss"
FORMAT_VERSION = 2
"""2 records the kind and storage type; format 1 (flat, with an ``fp16`` flag) still loads."""

_SQ = {"fp32": "Flat", "fp16": "SQfp16", "int8": "SQ8"}
IVF_POINTS_PER_LIST = 50
"""Training vectors per IVF list (FAISS asks for at least 39); more are sampled away."""
IVF_TRAIN_ITERATIONS = 10
"""Spherical k-means iterations for the IVF lists (FAISS's default is 25; on the QASPER vectors 10 gave the
same recall within 0.01, docs/BENCHMARKS.md)."""


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


def auto_nlist(count: int) -> int:
    """IVF lists for ``count`` vectors: the power of two nearest 4 x sqrt(count), at most one per 50 vectors."""
    if count < 2 * IVF_POINTS_PER_LIST:
        return 1
    nearest = round(np.log2(4 * np.sqrt(count)))
    trainable = int(np.log2(count // IVF_POINTS_PER_LIST))
    return 2 ** min(nearest, trainable)


def factory_string(settings: IndexSettings, count: int) -> str:
    """The FAISS ``index_factory`` string for ``settings`` when ``count`` vectors are indexed."""
    storage = _SQ[settings.dtype]
    if settings.dense_kind == "flat":
        return storage
    if settings.dense_kind == "hnsw":
        return f"HNSW{settings.hnsw_m},{storage}"
    return f"IVF{settings.ivf_nlist or auto_nlist(count)},{storage}"


def one_query(query_vec: np.ndarray) -> np.ndarray:
    """One query vector as a ``(1, dim)`` matrix; ``ValueError`` for several (``search_many`` takes those)."""
    query = np.asarray(query_vec)
    if query.ndim != 1 and query.shape[0] != 1:
        raise ValueError(f"search takes one query vector, got shape {query.shape}; use search_many")
    return query.reshape(1, -1)


class DenseIndex:
    """Cosine-similarity search over id-keyed vectors; use :meth:`build` or :meth:`load` to make one."""

    subset_scan_limit = 4096
    """Up to this many allowed ids, a restricted search always scores them directly."""

    def __init__(self, index: faiss.Index | None, ids: list[str], settings: IndexSettings, dim: int) -> None:
        if (index.ntotal if index is not None else 0) != len(ids):
            raise ValueError(f"index holds {index.ntotal if index else 0} vectors for {len(ids)} ids")
        self._index = index
        self._dim = dim
        self.settings = settings
        self.ids = list(ids)
        self._row = {doc_id: row for row, doc_id in enumerate(self.ids)}
        if len(self._row) != len(self.ids):
            raise ValueError("duplicate ids in dense index")

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return self._dim

    @property
    def kind(self) -> str:
        return self.settings.dense_kind

    @property
    def dtype(self) -> str:
        return self.settings.dtype

    @property
    def fp16(self) -> bool:
        """Whether vectors are stored as half floats."""
        return self.dtype == "fp16"

    @property
    def faiss_index(self) -> faiss.Index | None:
        """The FAISS index (None until the first vectors of a kind that must be trained arrive)."""
        return self._index

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def empty(cls, dim: int, fp16: bool = False, *, settings: IndexSettings | None = None) -> DenseIndex:
        """An index with no vectors yet; kinds that learn from data (IVF, int8) train on the first :meth:`extend`."""
        settings = settings or IndexSettings(dense_fp16=fp16)
        index = None
        if settings.dense_kind != "ivf" and settings.dtype != "int8":
            index = _new_index(dim, settings, 0)
        return cls(index, [], settings, dim)

    @classmethod
    def build(
        cls, ids: list[str], vectors: np.ndarray, fp16: bool = False, *, settings: IndexSettings | None = None
    ) -> DenseIndex:
        """Index ``vectors`` (shape ``(len(ids), dim)``) under ``ids`` as ``settings`` say (default: flat fp32)."""
        matrix = np.asarray(vectors)
        if matrix.ndim != 2:
            raise ValueError(f"expected a (n, dim) matrix, got shape {matrix.shape}")
        return cls.empty(matrix.shape[1], fp16, settings=settings).extend(ids, matrix)

    def extend(self, ids: list[str], vectors: np.ndarray) -> DenseIndex:
        """Add vectors in place (old vectors are not touched) and return this index.

        The first vectors added to an untrained kind (IVF lists, int8 ranges) also train it.
        """
        matrix = normalize(vectors, self.dim)
        if len(ids) != len(matrix):
            raise ValueError(f"{len(ids)} ids for {len(matrix)} vectors")
        clash = [i for i in ids if i in self._row]
        if clash or len(set(ids)) != len(ids):
            raise ValueError(f"duplicate ids: {(clash or sorted(ids))[:5]}")
        if len(matrix) == 0:
            return self
        if self._index is None:
            self._index = _new_index(self.dim, self.settings, len(matrix))
            _train(self._index, matrix)
        self._index.add(matrix)
        for doc_id in ids:
            self._row[doc_id] = len(self.ids)
            self.ids.append(doc_id)
        return self

    def vectors_for(self, ids: list[str]) -> np.ndarray:
        """The stored vectors of ``ids`` (normalised, decoded), shape ``(len(ids), dim)``; ``KeyError`` if unknown."""
        rows = np.array([self._row[i] for i in ids], dtype=np.int64)
        if len(rows) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._index.reconstruct_batch(rows)

    def search(self, query_vec: np.ndarray, k: int, allowed: set[str] | None = None) -> list[Hit]:
        """Ranked ``(id, cosine)`` of the ``k`` nearest vectors, best first; ``allowed`` restricts to those ids."""
        return self.search_many(one_query(query_vec), k, allowed)[0]

    def search_many(self, query_vecs: np.ndarray, k: int, allowed: set[str] | None = None) -> list[list[Hit]]:
        """:meth:`search` for a ``(m, dim)`` matrix of queries, batched."""
        queries = normalize(query_vecs, self.dim)
        if k <= 0 or not self.ids:
            return [[] for _ in queries]
        with faiss_threads(len(queries)):
            return self._search(queries, k, allowed)

    def _search(self, queries: np.ndarray, k: int, allowed: set[str] | None) -> list[list[Hit]]:
        if allowed is None:
            k = min(k, len(self.ids))
            scores, rows = self._index.search(queries, k, params=self._params(k, len(self.ids)))
            return [self._hits(s, r) for s, r in zip(scores, rows, strict=True)]
        row = self._row
        subset = np.sort(np.fromiter((row[i] for i in allowed if i in row), dtype=np.int64))
        if len(subset) == 0:
            return [[] for _ in queries]
        k = min(k, len(subset))
        plan = plan_restricted(self.settings, self._lists(), len(self.ids), len(subset), k, self.subset_scan_limit)
        if plan.exact:
            return [
                [(self.ids[r], s) for r, s in hits]
                for hits in top_k_of_rows(queries, subset, k, self._index.reconstruct_batch)
            ]
        params = self._params(k, len(self.ids), plan, faiss.IDSelectorBatch(subset))
        scores, rows = self._index.search(queries, k, params=params)
        return [self._hits(s, r) for s, r in zip(scores, rows, strict=True)]

    def _lists(self) -> int:
        return faiss.extract_index_ivf(self._index).nlist if self.kind == "ivf" else 0

    def _params(
        self, k: int, total: int, plan: SearchPlan | None = None, selector: faiss.IDSelector | None = None
    ) -> faiss.SearchParameters | None:
        """FAISS search parameters: the kind's candidate budget (widened by ``plan``) and the selector."""
        if self.kind == "hnsw":
            ef = plan.hnsw_ef if plan else max(self.settings.hnsw_ef_search, k)
            return faiss.SearchParametersHNSW(efSearch=int(min(ef, total)), sel=selector)
        if self.kind == "ivf":
            nprobe = plan.ivf_nprobe if plan else ivf_probes(self.settings, self._lists())
            return faiss.SearchParametersIVF(nprobe=int(nprobe), sel=selector)
        return None if selector is None else faiss.SearchParameters(sel=selector)

    def _hits(self, scores: np.ndarray, rows: np.ndarray) -> list[Hit]:
        """FAISS output for one query as ``(id, score)``, dropping the ``-1`` padding."""
        return [(self.ids[r], float(s)) for s, r in zip(scores, rows, strict=True) if r >= 0]

    def save(self, folder: Path) -> None:
        """Write the FAISS index and the ids to ``folder`` (each file replaced atomically)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".dense-", dir=folder))
        try:
            index = self._index if self._index is not None else _new_index(self.dim, self.settings, 0)
            faiss.write_index(index, str(tmp / INDEX_FILE))
            meta = {
                "format": FORMAT_VERSION,
                "dim": self.dim,
                "kind": self.kind,
                "dtype": self.dtype,
                "faiss": _describe(self._index),
                "settings": self.settings.shape(),
                "ids": self.ids,
            }
            (tmp / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
            for path in tmp.iterdir():
                os.replace(path, folder / path.name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @classmethod
    def load(cls, folder: Path, mmap: bool = False, settings: IndexSettings | None = None) -> DenseIndex:
        """Read an index written by :meth:`save`.

        ``mmap`` maps the vectors from disk instead of reading them. ``settings`` supplies the
        search-time knobs (``hnsw_ef_search``, ``ivf_nprobe``) and must name the recorded kind and
        storage type; without it the recorded ones are used with the default knobs.
        """
        folder = Path(folder)
        meta_path = folder / META_FILE
        if not meta_path.exists():
            raise FileNotFoundError(f"{folder}: no dense index ({META_FILE} missing)")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("format") not in (1, FORMAT_VERSION):
            raise ValueError(f"{folder}: dense index format {meta.get('format')}, expected {FORMAT_VERSION}")
        kind = meta.get("kind", "flat")
        dtype = meta.get("dtype", "fp16" if meta.get("fp16") else "fp32")
        if settings is not None and (settings.dense_kind != kind or settings.dtype != dtype):
            raise ValueError(
                f"{folder}: the index is {kind}/{dtype}, the settings ask for {settings.dense_kind}/{settings.dtype}"
            )
        stored = (settings or IndexSettings()).model_copy(
            update={"dense_kind": kind, "dense_dtype": dtype, "dense_fp16": False}
        )
        flags = faiss.IO_FLAG_MMAP if mmap else 0
        index = faiss.read_index(str(folder / INDEX_FILE), flags)
        if index.d != meta["dim"]:
            raise ValueError(f"{folder}: index dimension {index.d} does not match recorded {meta['dim']}")
        if index.ntotal == 0 and (kind == "ivf" or dtype == "int8"):
            index = None  # saved before any vector arrived: train on the first ones, as a new index would
        elif kind == "ivf":
            faiss.extract_index_ivf(index).make_direct_map()
        return cls(index, meta["ids"], stored, int(meta["dim"]))


def _new_index(dim: int, settings: IndexSettings, count: int) -> faiss.Index:
    """An empty FAISS index of the settings' kind and storage type, sized for ``count`` vectors."""
    index = faiss.index_factory(dim, factory_string(settings, count), faiss.METRIC_INNER_PRODUCT)
    if settings.dense_kind == "hnsw":
        index.hnsw.efConstruction = settings.hnsw_ef_construction
    elif settings.dense_kind == "ivf":
        index.cp.niter = IVF_TRAIN_ITERATIONS
        index.cp.spherical = True  # unit centroids for unit vectors: balanced lists under inner product
        index.cp.seed = 1234
    return index


def _train(index: faiss.Index, matrix: np.ndarray) -> None:
    """Train what must learn from data: IVF lists on a fixed-seed sample, int8 ranges on every vector.

    An IVF index also keeps a row -> list map, so that :meth:`DenseIndex.vectors_for` and exact
    restricted scans can read stored vectors back.
    """
    ivf = faiss.try_extract_index_ivf(index)
    sample = matrix
    if ivf is not None and len(matrix) > ivf.nlist * IVF_POINTS_PER_LIST:
        rows = np.random.default_rng(0).choice(len(matrix), size=ivf.nlist * IVF_POINTS_PER_LIST, replace=False)
        sample = matrix[np.sort(rows)]
    if not index.is_trained:
        index.train(sample)
    if ivf is not None:
        ivf.make_direct_map()


def _describe(index: faiss.Index | None) -> str:
    """A short name of a FAISS index (its class, and its list count for IVF), for the metadata."""
    if index is None:
        return "untrained"
    ivf = faiss.try_extract_index_ivf(index)
    return type(index).__name__ + (f"(nlist={ivf.nlist})" if ivf is not None else "")
