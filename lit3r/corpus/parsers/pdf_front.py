"""The front matter of a PDF paper: title, author names, and where the body starts.

The title is the largest-font run of lines on page 1 above the first
affiliation or e-mail line (a logo or banner further down may be larger); the
PDF metadata title is the fallback. Author names come from the lines between
the title and the abstract, stopping at the first affiliation line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lit3r.corpus.parsers.pdf_layout import Line

AFFILIATION = re.compile(
    r"@|https?://|www\.|\b(universit|institut|department|dept\.|laborator|lab\b|college|school|cent(?:er|re)|research|"
    r"inc\b|corporation|ltd|gmbh|academy|hospital|faculty|e-?mail|demo:|code:)",
    re.IGNORECASE,
)
ABSTRACT_START = re.compile(r"^abstract\b", re.IGNORECASE)
FIRST_SECTION = re.compile(r"^(?:[1I]\.?\s+)?(introduction|background|overview)\b", re.IGNORECASE)
MARKERS = re.compile(r"[\d∗*†‡§¶♯✉⋆]+")
NAME_PARTICLE = {"van", "von", "de", "der", "da", "di", "del", "la", "le", "du", "dos", "bin"}


@dataclass
class FrontMatter:
    """What precedes the body: title, authors, and the stream index where the body (abstract included) starts."""

    title: str
    authors: list[str] = field(default_factory=list)
    body_start: int = 0


def front_matter(stream: list[Line], body_size: float, metadata_title: str) -> FrontMatter:
    """Find title, authors and the start of the body in the classified line stream."""
    first_page = stream[0].page if stream else 1
    page_one = [i for i, line in enumerate(stream) if line.page == first_page]
    title_span = _title_span(stream, page_one, body_size)
    if title_span is None:
        return FrontMatter(title=metadata_title or (stream[0].text if stream else ""), body_start=0)
    start, end = title_span
    title = " ".join(" ".join(line.text for line in stream[start:end]).split())
    body_start = _body_start(stream, end, first_page)
    if body_start is None:
        body_start = end
        while body_start < len(stream) and _front_like(stream[body_start]) and body_start - end < 12:
            body_start += 1
    return FrontMatter(title=title, authors=parse_authors(stream[end:body_start]), body_start=body_start)


def _title_span(stream: list[Line], page_one: list[int], body_size: float) -> tuple[int, int] | None:
    """Stream indices ``[start, end)`` of the title lines, or None when no line stands out."""
    stop = next((i for i in page_one if AFFILIATION.search(stream[i].text) or _starts_body(stream[i])), None)
    candidates = [
        i
        for i in page_one
        if (stop is None or i < stop)
        and stream[i].size >= 1.15 * body_size
        and re.search(r"[A-Za-z]{2}", stream[i].text)
    ]
    if not candidates:
        return None
    size = max(stream[i].size for i in candidates)
    start = next(i for i in candidates if stream[i].size >= size - 0.3)
    end = start + 1
    while end < len(stream) and stream[end].page == stream[start].page and abs(stream[end].size - size) <= 0.3:
        end += 1
    return start, end


def _starts_body(line: Line) -> bool:
    """The abstract (heading or inline 'Abstract—') or a first section heading such as '1 Introduction'."""
    text = line.text.strip()
    return bool(ABSTRACT_START.match(text)) or (line.kind == "heading" and bool(FIRST_SECTION.match(text)))


def _body_start(stream: list[Line], after: int, first_page: int) -> int | None:
    """Index of the abstract or first section on the first two pages, or None."""
    for index in range(after, len(stream)):
        if stream[index].page > first_page + 1:
            return None
        if _starts_body(stream[index]):
            return index
    return None


def _front_like(line: Line) -> bool:
    """An author, affiliation or e-mail line."""
    return bool(AFFILIATION.search(line.text)) or bool(parse_authors([line]))


def parse_authors(lines: list[Line]) -> list[str]:
    """Author names from the lines under the title, up to the first affiliation line."""
    parts: list[str] = []
    for line in lines:
        if AFFILIATION.search(line.text):
            if parts:
                break
            continue
        parts.append(" , ".join(line.cells()))
    text = MARKERS.sub(",", " ".join(parts))
    names = [" ".join(p.split()) for p in re.split(r"\s*(?:,|;|\band\b|&)\s*", text)]
    return list(dict.fromkeys(name for name in names if _looks_like_name(name)))


def _looks_like_name(text: str) -> bool:
    tokens = text.split()
    if not 2 <= len(tokens) <= 5 or len(text) > 40:
        return False
    capitalised = [t for t in tokens if t.lower() not in NAME_PARTICLE]
    return (
        all(t[:1].isupper() and re.fullmatch(r"[^\W\d_][\w'’.\-]*", t) for t in capitalised)
        and tokens[-1][:1].isupper()
    )
