"""A fast deterministic encoder double: bag-of-words vectors by feature hashing."""

from __future__ import annotations

import hashlib
import re

import numpy as np


class HashingEncoder:
    """Bag-of-words vectors by feature hashing: deterministic, instant, good enough to test plumbing."""

    paper_separator = ". "

    def __init__(self, dim: int = 64, name: str = "test-hashing") -> None:
        self.dim = dim
        self.name = name
        self.calls: list[int] = []

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in re.findall(r"\w+", text.lower()):
                out[row, int(hashlib.md5(token.encode()).hexdigest(), 16) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        return self._encode(list(texts))

    def encode_queries(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        return self._encode(list(texts))
