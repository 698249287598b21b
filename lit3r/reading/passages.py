"""Numbered passages for the compact reader: the few stretches of the evidence chunks a small model reads.

A 1.5B model on two CPU cores reads about 40 prompt tokens a second, so it cannot be shown whole chunks (the
QASPER chunker's are about 3,000 characters each). :func:`select_passages` cuts every evidence chunk into
windows of consecutive quotable units (sentences, table rows: :func:`lit3r.answers.chunk_units`) of at most
``chars`` characters, scores each window by BM25 against the question (:func:`lit3r.reading.lexical_scores`,
the offline reader's scorer) with a small prior for the chunk's retrieval rank, and keeps the ``count`` best that
do not overlap. They are numbered 1, 2, ... best first; each :class:`Passage` remembers its chunk and its span
there, so a number maps back to a chunk deterministically and a quote found in a passage stands in its chunk.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lit3r.answers import chunk_units
from lit3r.models import Chunk
from lit3r.reading.conditions import contradicts_split, split_contexts
from lit3r.reading.scoring import lexical_scores

RANK_PRIOR = 0.15
"""How much a chunk's retrieval rank adds to its windows' scores: ``1 + RANK_PRIOR / (1 + rank)`` times."""


@dataclass(frozen=True)
class Passage:
    """A numbered stretch of one chunk's text: ``chunk.text[start:end]``."""

    number: int
    chunk: Chunk
    start: int
    end: int

    @property
    def text(self) -> str:
        return self.chunk.text[self.start : self.end]


def windows(chunk: Chunk, chars: int) -> list[tuple[int, int]]:
    """Spans of consecutive units of ``chunk`` of at most ``chars`` characters each (a longer unit alone is cut),
    starting at every unit: overlapping windows, so the best stretch is found wherever it starts."""
    units = [(u.start, u.end) for u in chunk_units(chunk)]
    spans = []
    for i, (start, end) in enumerate(units):
        stop = min(end, start + chars)
        for _, next_end in units[i + 1 :]:
            if next_end - start > chars:
                break
            stop = next_end
        spans.append((start, stop))
    return spans


def select_passages(question: str, chunks: Sequence[Chunk], *, count: int, chars: int) -> list[Passage]:
    """The ``count`` best non-overlapping windows of ``chunks`` (best first in, best first out), numbered from 1.

    A chunk with no quotable unit (an empty text) gives no window; ties keep retrieval order. A window that reports on
    another data split than the question names (:func:`~lit3r.reading.conditions.contradicts_split`, read in its
    chunk, section and paper) is not shown, as the offline reader does not quote it."""
    contexts = split_contexts(chunks)
    candidates = [
        (rank, chunk, (s, e))
        for rank, chunk in enumerate(chunks)
        for s, e in windows(chunk, chars)
        if not contradicts_split(question, chunk.text[s:e], *contexts(chunk))
    ]
    if not candidates:
        return []
    scores = lexical_scores(question, [chunk.text[s:e] for _, chunk, (s, e) in candidates])
    order = sorted(
        range(len(candidates)),
        key=lambda i: (-(scores[i] + 1e-6) * (1 + RANK_PRIOR / (1 + candidates[i][0])), i),
    )
    chosen: list[tuple[Chunk, int, int]] = []
    for i in order:
        _, chunk, (start, end) = candidates[i]
        if any(c.id == chunk.id and start < e and s < end for c, s, e in chosen):
            continue
        chosen.append((chunk, start, end))
        if len(chosen) == count:
            break
    return [Passage(n, chunk, start, end) for n, (chunk, start, end) in enumerate(chosen, 1)]
