"""The interface every text encoder implements, and a cache of query vectors in front of one."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Encoder(Protocol):
    """What index building needs from an embedding model."""

    name: str
    dim: int
    paper_separator: str

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Float32, L2-normalised ``(len(texts), dim)`` vectors of passages."""
        ...

    def encode_queries(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Float32, L2-normalised ``(len(texts), dim)`` vectors of queries."""
        ...


class QueryCache:
    """An :class:`Encoder` that remembers the vectors of recent queries.

    One question's retrieval encodes the same text several times (a subquery for the dense index and
    again for the bi-encoder reranker; the same subquery in open-domain and in-paper runs, in chat
    follow-ups, in every ablation of an evaluation). Query vectors are a pure function of the text, so
    the most recent ``maxsize`` are kept; documents pass straight through. Safe to share across threads
    (a session serving concurrent requests): the cache is locked, the encoder runs outside the lock.
    """

    def __init__(self, encoder: Encoder, maxsize: int = 1024) -> None:
        self.encoder = encoder
        self.name, self.dim, self.paper_separator = encoder.name, encoder.dim, encoder.paper_separator
        self.maxsize = maxsize
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        return self.encoder.encode_documents(texts, show_progress=show_progress)

    def encode_queries(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        with self._lock:
            found = {t: self._vectors[t] for t in texts if t in self._vectors}
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            encoded = np.asarray(self.encoder.encode_queries(missing, show_progress=show_progress), dtype=np.float32)
            found.update(zip(missing, encoded, strict=True))
        with self._lock:
            for text in texts:
                self._vectors[text] = found[text]
                self._vectors.move_to_end(text)
            while len(self._vectors) > self.maxsize:
                self._vectors.popitem(last=False)
        return np.stack([found[t] for t in texts]) if texts else np.zeros((0, self.dim), dtype=np.float32)
