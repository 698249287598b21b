"""Rerankers behind one interface: score (query, passage) pairs, higher is more relevant."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class Reranker(Protocol):
    """Scores passages for a query; scores are comparable within one call only."""

    name: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One relevance score per passage, in the order given."""
        ...
