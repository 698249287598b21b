"""Text normalisation shared by every layer: folding white space, and the key two texts are compared by."""

from __future__ import annotations


def fold_space(text: str) -> str:
    """Every run of white space as one space, the ends stripped."""
    return " ".join(text.split())


def fold_key(text: str) -> str:
    """The comparison key of a text: white space folded, case folded ('BM25  Okapi' ~ 'bm25 okapi')."""
    return fold_space(text).casefold()
