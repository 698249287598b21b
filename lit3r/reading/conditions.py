"""Conditions a question fixes that a unit of evidence can contradict: which data split a result is on.

"What recall at 10 did the dense encoder reach on the LocatorQA test set?" is not answered by a table of
development-set results, however well its words match: the split is part of what is asked. A paper reports
results per split, and the splits are a small closed class (training, development / validation, test) whose
members exclude one another, so the check needs no model: a unit whose text or context (a table row's caption
and header) names only splits other than the one the question names does not answer it. A unit that names no
split, or names the question's, is left alone (most sentences do not say).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

from lit3r.models import Chunk

SPLIT_WORDS: dict[str, str] = {
    "train": "train", "training": "train",
    "dev": "dev", "development": "dev", "validation": "dev",
    "test": "test", "testing": "test",
}  # fmt: skip
"""The words naming each split."""

_WORD = "|".join(SPLIT_WORDS)
_SPLIT_PHRASE = re.compile(
    rf"\b((?:{_WORD})(?:\s*(?:,|/|and|or|,\s*and)\s*(?:{_WORD}))*)"
    r"[- ](?:sets?|splits?|data|portions?|questions|examples|instances|documents|papers)\b",
    re.IGNORECASE,
)
"""A split named as a noun phrase ("test set", "development questions", "training and test sets"): a bare "test"
or "training" is too often a verb or another noun ("we test", "training time") to count."""


@functools.lru_cache(maxsize=1024)
def splits_named(text: str) -> frozenset[str]:
    """The data splits ``text`` names as noun phrases (:data:`_SPLIT_PHRASE`); "training and test sets" names two."""
    return frozenset(
        SPLIT_WORDS[word.lower()]
        for match in _SPLIT_PHRASE.finditer(text)
        for word in re.findall(rf"\b(?:{_WORD})\b", match.group(1), re.IGNORECASE)
    )


def contradicts_split(question: str, unit_text: str, *contexts: str) -> bool:
    """Whether the unit reports on another split than the one the question asks about (both must name one).

    A unit that names no split reports on the one its nearest context names, in the order given (the chunk it is
    cut from, its section, its paper: :func:`split_contexts`): "The gains concentrate on single-paper questions,
    where the tuned system reaches 0.61" sits in a paper that answers "on the development split"."""
    asked = splits_named(question)
    if not asked:
        return False
    named = next((found for text in (unit_text, *contexts) if (found := splits_named(text))), frozenset())
    return bool(named) and not (named & asked)


def split_contexts(evidence: Sequence[Chunk]) -> Callable[[Chunk], tuple[str, str, str]]:
    """For a chunk of ``evidence``: its text, its section's and its paper's text in the evidence (their chunks
    there, joined), the contexts :func:`contradicts_split` reads a unit's split in, nearest first."""
    sections: dict[tuple[str, str | None], list[str]] = {}
    papers: dict[str, list[str]] = {}
    for chunk in evidence:
        sections.setdefault((chunk.paper_id, chunk.locator.section), []).append(chunk.text)
        papers.setdefault(chunk.paper_id, []).append(chunk.text)

    section_text = {key: "\n".join(texts) for key, texts in sections.items()}
    paper_text = {key: "\n".join(texts) for key, texts in papers.items()}

    def contexts(chunk: Chunk) -> tuple[str, str, str]:
        return (
            chunk.text,
            section_text.get((chunk.paper_id, chunk.locator.section), ""),
            paper_text.get(chunk.paper_id, ""),
        )

    return contexts
