"""The interface every text encoder implements, and a cache of query vectors in front of one."""

from __future__ import annotations

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
    the most recent ``maxsize`` are kept; documents pass straight through.
    """

    def __init__(self, encoder: Encoder, maxsize: int = 1024) -> None:
        self.encoder = encoder
        self.name, self.dim, self.paper_separator = encoder.name, encoder.dim, encoder.paper_separator
        self.maxsize = maxsize
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        return self.encoder.encode_documents(texts, show_progress=show_progress)

    def encode_queries(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            encoded = np.asarray(self.encoder.encode_queries(missing, show_progress=show_progress), dtype=np.float32)
            for text, vector in zip(missing, encoded, strict=True):
                self._vectors[text] = vector
        for text in texts:
            self._vectors.move_to_end(text)
        rows = np.stack([self._vectors[t] for t in texts]) if texts else np.zeros((0, self.dim), dtype=np.float32)
        while len(self._vectors) > self.maxsize:
            self._vectors.popitem(last=False)
        return rows
