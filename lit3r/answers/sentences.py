"""Cut chunk text into quotable units: sentences for prose, rows for tables.

Every unit is a ``(start, end)`` span of the chunk's own text, so a quote taken from it is
verbatim by construction. A sentence ends at ``.``, ``!`` or ``?`` (optionally followed by
closing quotes or brackets) that is followed by white space and then a character that is not a
lower-case letter, except after

* a known abbreviation (``e.g.``, ``i.e.``, ``cf.``, ``vs.``, ``et al.``, ``Fig.``, ``Eq.``,
  ``Tab.``, ...; ``No.``, ``Sec.``, ``p.``, ``pp.``, ``Vol.`` only before a digit),
* a single capital letter (an initial, as in ``J. Smith``; ``Appendix A. The`` is therefore not
  split, which errs on the side of a longer quote rather than a broken one).

Decimal numbers (``0.5``) never split because no white space follows their point. Blank lines
always separate units. Table chunks are cut into lines (caption, header row, one unit per row),
and each row carries the caption and header as scoring context. The ``Title: ... Section: ...``
header line the QASPER chunker puts first, and the ``[VENUE YEAR] title`` paragraph of a title-abstract
chunk, are not units: they label the text, they do not state findings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lit3r.models import Chunk

Span = tuple[int, int]

ABBREVIATIONS = frozenset(
    {"e.g", "i.e", "cf", "vs", "al", "fig", "figs", "eq", "eqs", "tab", "approx", "resp", "viz", "w.r.t", "a.k.a"}
    | {"ref", "refs", "appx", "alg", "dr", "prof", "mr", "mrs", "jr"}
)
"""Lower-cased words (without the final period) after which a period never ends a sentence."""

ABBREVIATIONS_BEFORE_DIGIT = frozenset({"no", "nos", "p", "pp", "vol", "ch", "sec", "secs", "thm", "lem", "prop"})
"""Abbreviations that only count as such when a digit follows (``No. 5``, ``Sec. 4``, but ``took 3 sec. The``)."""

_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*(?=\s)")
_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
_LINE = re.compile(r"[ \t]*\n\s*")
_WORD_BEFORE = re.compile(r"(?:^|[\s(\[\"'])([A-Za-z](?:[A-Za-z.]*[A-Za-z])?)\.$")
_QASPER_HEADER = re.compile(r"Title: [^\n]*\. Section: [^\n]*\.\n")
_HAS_WORD = re.compile(r"\w")


@dataclass(frozen=True)
class Unit:
    """One quotable unit of a chunk: a sentence or a table row.

    Attributes:
        start: Offset of the unit in ``chunk.text``.
        end: End offset (exclusive) in ``chunk.text``.
        context: Extra text that helps score the unit but is not part of it (a table's caption
            and header row for its body rows); empty for prose.
    """

    start: int
    end: int
    context: str = ""


def strip_span(text: str, start: int, end: int) -> Span:
    """Narrow ``text[start:end]`` so it neither starts nor ends with white space."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _pieces(text: str, start: int, end: int, boundary: re.Pattern[str]) -> list[Span]:
    """Non-empty stripped stretches of ``text[start:end]`` between matches of ``boundary``."""
    spans, cursor = [], start
    for match in boundary.finditer(text, start, end):
        spans.append(strip_span(text, cursor, match.start()))
        cursor = match.end()
    spans.append(strip_span(text, cursor, end))
    return [(s, e) for s, e in spans if s < e]


def _is_boundary(text: str, period: int, after: int, limit: int) -> bool:
    """Whether the punctuation ending at ``after`` (its last mark at ``period``) ends a sentence before ``limit``."""
    rest = text[after : min(limit, after + 40)].lstrip()
    if not rest or rest[0].islower():
        return False
    if text[period] != ".":
        return True
    word = _WORD_BEFORE.search(text, max(0, period - 40), period + 1)
    if word is None:
        return True
    token = word.group(1)
    if len(token) == 1 and token.isupper():
        return False
    lowered = token.lower()
    return lowered not in ABBREVIATIONS and not (lowered in ABBREVIATIONS_BEFORE_DIGIT and rest[0].isdigit())


def split_sentences(text: str, start: int = 0, end: int | None = None) -> list[Span]:
    """Sentence spans of ``text[start:end]`` (paragraph breaks always split), in order."""
    end = len(text) if end is None else end
    spans: list[Span] = []
    for para_start, para_end in _pieces(text, start, end, _PARAGRAPH):
        cursor = para_start
        for match in _END.finditer(text, para_start, para_end):
            last_mark = match.start() + len(match.group(0).rstrip("\"'\u201d\u2019)]")) - 1
            if _is_boundary(text, last_mark, match.end(), para_end):
                spans.append(strip_span(text, cursor, match.end()))
                cursor = match.end()
        spans.append(strip_span(text, cursor, para_end))
    return [(s, e) for s, e in spans if s < e]


def _table_units(text: str) -> list[Unit]:
    """One unit per line; body rows get the caption lines and the header row as context."""
    lines = _pieces(text, 0, len(text), _LINE)
    first_row = next((i for i, (s, e) in enumerate(lines) if "|" in text[s:e]), None)
    if first_row is None:
        return [Unit(s, e) for s, e in lines]
    context = " ".join(text[s:e] for s, e in lines[: first_row + 1])
    return [Unit(s, e, context if i > first_row else "") for i, (s, e) in enumerate(lines)]


def _body_start(chunk: Chunk) -> int:
    """Where the quotable text starts: after a QASPER ``Title: ... Section: ...`` line or a title-abstract title."""
    header = _QASPER_HEADER.match(chunk.text)
    if header:
        return header.end()
    if chunk.type == "title_abstract":
        title_end = _PARAGRAPH.search(chunk.text)
        if title_end:
            return title_end.end()
        return 0 if chunk.text.rstrip().endswith((".", "!", "?")) else len(chunk.text)  # abstract only, or title only
    return 0


def chunk_units(chunk: Chunk) -> list[Unit]:
    """The quotable units of one chunk, in reading order; units without a word character are left out."""
    text = chunk.text
    if chunk.type == "table":
        units = _table_units(text)
    else:
        units = [Unit(s, e) for s, e in split_sentences(text, _body_start(chunk))]
    return [u for u in units if _HAS_WORD.search(text, u.start, u.end)]


_CELL_NUMBER = re.compile(r"[-\u2212]?\d+(?:[.,]\d+)?")


def cell_number(cell: str) -> float | None:
    """The first number of a table cell ("0.63", "18%", "1,240"; a comma before other than three digits is a decimal
    comma), or None."""
    match = _CELL_NUMBER.search(cell.replace("\u2212", "-"))
    if not match:
        return None
    text = match.group(0)
    text = text.replace(",", "") if re.fullmatch(r"-?\d{1,3}(?:,\d{3})+", text) else text.replace(",", ".")
    return float(text)
