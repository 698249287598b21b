"""Cut a span of text into pieces of at most ``limit`` characters, at the coarsest boundary that works.

Pure functions over ``(start, end)`` spans of one string, so every piece stays an exact
slice of the source (the chunkers' locators rely on that). A piece never starts or ends
with white space; the white space between two pieces belongs to neither.

Boundaries, coarsest first: rows (line breaks, for tables), sentences, words, and as a
last resort a hard cut inside a word longer than ``limit``.
"""

from __future__ import annotations

import re

Span = tuple[int, int]

ROWS = re.compile(r"[ \t]*\n\s*")
"""Between two lines (table rows)."""

SENTENCES = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[\"'(\[]?[A-Z0-9])")
"""White space after sentence-final punctuation (optionally a closing quote or bracket) and before
a capital letter or digit; 'e.g. the' and '3.5 points' are therefore not boundaries."""

WORDS = re.compile(r"\s+")

TEXT_LEVELS = (SENTENCES, WORDS)
TABLE_LEVELS = (ROWS, WORDS)


def strip_span(text: str, start: int, end: int) -> Span:
    """Narrow ``text[start:end]`` to exclude leading and trailing white space."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def units(text: str, start: int, end: int, boundary: re.Pattern[str]) -> list[Span]:
    """The non-empty stretches of ``text[start:end]`` between matches of ``boundary``."""
    out = []
    cursor = start
    for match in boundary.finditer(text, start, end):
        piece = strip_span(text, cursor, match.start())
        if piece[0] < piece[1]:
            out.append(piece)
        cursor = match.end()
    piece = strip_span(text, cursor, end)
    if piece[0] < piece[1]:
        out.append(piece)
    return out


def pack(spans: list[Span], limit: int) -> list[Span]:
    """Greedily merge consecutive spans while the merged span (gaps included) stays within ``limit``.

    A span longer than ``limit`` on its own is returned as it is; callers split those first.
    """
    out: list[Span] = []
    for start, end in spans:
        if out and end - out[-1][0] <= limit:
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def split_span(
    text: str, start: int, end: int, limit: int, levels: tuple[re.Pattern[str], ...] = TEXT_LEVELS
) -> list[Span]:
    """Pieces of ``text[start:end]`` (stripped), each at most ``limit`` characters, in order.

    Tries each boundary of ``levels`` in turn; a unit still too long is split at the next
    level, and a single word too long is cut every ``limit`` characters.
    """
    if limit <= 0:
        raise ValueError(f"limit must be positive, got {limit}")
    start, end = strip_span(text, start, end)
    if end - start <= limit:
        return [(start, end)] if start < end else []
    if not levels:
        return [strip_span(text, i, min(i + limit, end)) for i in range(start, end, limit)]
    pieces: list[Span] = []
    for unit in units(text, start, end, levels[0]):
        if unit[1] - unit[0] <= limit:
            pieces.append(unit)
        else:
            pieces.extend(split_span(text, unit[0], unit[1], limit, levels[1:]))
    return pack(pieces, limit)


def prefix_span(text: str, start: int, end: int, limit: int) -> Span:
    """The longest leading piece of ``text[start:end]`` that fits ``limit``, cut at a sentence or word boundary."""
    pieces = split_span(text, start, end, limit)
    return pieces[0] if pieces else (start, start)
