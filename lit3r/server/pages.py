"""Page images of PDF papers with a cited passage highlighted, rendered from the stored PDF.

A paper ingested from a PDF keeps its source path in the corpus store with the file's sha256; the file is
used only while its hash still matches (uploads are kept under ``<home>/uploads``). The passage is found on
the page from pdfplumber's characters and their boxes: both the page's characters and the quote are compared
after NFKC folding and case folding, without white space, hyphens or table pipes (the parser joins lines and
writes table cells as ``a | b``). The chunk's page is searched first, then the two after it (a chunk may run
on); when the whole quote is not on one page, its longest beginning found (at least :data:`MIN_PARTIAL`
characters) is highlighted and the result says ``partial``. Rendering goes through pypdfium2 (pdfplumber's
``to_image``), one page at a time under a lock, since PDFium is not thread-safe.
"""

from __future__ import annotations

import io
import threading
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from lit3r.corpus.store import CorpusStore, file_sha256

MIN_PARTIAL = 24
"""Fewest folded characters of a quote's beginning that count as a partial match."""
PAGES_AFTER = 2
"""Pages after the chunk's own page that are searched too."""
IGNORED = frozenset("|-\u00ad\u2010\u2011")
"""Characters left out of the comparison (hyphens, soft hyphens, table pipes)."""
FILL = (255, 212, 0, 96)
STROKE = (214, 120, 0, 255)

_PDFIUM = threading.Lock()


class PdfUnavailable(LookupError):
    """The paper has no PDF the server may read (not a PDF source, file gone, or changed since ingest)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


Found = Literal["exact", "partial", "none"]


@dataclass(frozen=True)
class Passage:
    """Where a quote sits on a page: boxes in PDF points from the page's top left corner."""

    page: int
    width: float
    height: float
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)
    found: Found = "none"
    matched_text: str = ""


def pdf_path(source: str | None, home: Path) -> Path:
    """The PDF a paper was ingested from, checked against the hash the corpus store recorded for it."""
    if not source or not source.lower().endswith(".pdf"):
        raise PdfUnavailable("no_pdf", "this paper was not ingested from a PDF")
    with CorpusStore(home) as store:
        record = store.source(source)
    if record is None:
        raise PdfUnavailable("no_pdf", "the corpus store has no record of this paper's PDF")
    path = Path(source)
    if not path.is_file():
        raise PdfUnavailable("pdf_missing", f"the PDF this paper was ingested from is gone ({path.name})")
    if file_hash(path) != record.sha256:
        raise PdfUnavailable("pdf_changed", f"the PDF {path.name} changed since it was ingested; ingest it again")
    return path


@lru_cache(maxsize=256)
def _sha256(path: str, _identity: tuple[int, ...]) -> str:
    return file_sha256(Path(path))


def fold(text: str | list[str]) -> tuple[str, list[int]]:
    """The comparison key of ``text`` and, for each key character, the index of the character it came from.

    ``text`` is a string or a page's characters as pdfplumber gives them: one glyph may hold several letters
    (a ligature 'fi' is one character with two), and an owner is then the glyph's index in that list, so
    that a ligature never shifts the highlight of what follows it.
    """
    key: list[str] = []
    owners: list[int] = []
    for index, glyph in enumerate(text):
        for folded in unicodedata.normalize("NFKC", glyph).casefold():
            if not folded.isspace() and folded not in IGNORED:
                key.append(folded)
                owners.append(index)
    return "".join(key), owners


def letter_boxes(chars: list[dict[str, Any]]) -> list[dict[str, float]]:
    """One box per key letter of the folded page text: a glyph of several letters (a ligature) is cut in
    equal widths, so a quote that starts or ends inside 'ﬁ' is highlighted from or to its letter."""
    _, owners = fold([c["text"] for c in chars])
    boxes: list[dict[str, float]] = []
    for position, owner in enumerate(owners):
        first = position == 0 or owners[position - 1] != owner
        if first:
            count = owners.count(owner) if len(chars[owner]["text"]) > 1 else 1
            part = 0
        char = chars[owner]
        x0, x1 = float(char["x0"]), float(char["x1"])
        width = (x1 - x0) / count
        boxes.append(
            {"x0": x0 + part * width, "x1": x0 + (part + 1) * width, "top": char["top"], "bottom": char["bottom"]}
        )
        part += 1
    return boxes


def _longest_prefix(haystack: str, needle: str) -> tuple[int, int]:
    """(length, position) of the longest beginning of ``needle`` found in ``haystack``."""
    low, high, where = 0, len(needle), -1
    while low < high:
        middle = (low + high + 1) // 2
        position = haystack.find(needle[:middle])
        if position >= 0:
            low, where = middle, position
        else:
            high = middle - 1
    return low, where


def line_boxes(chars: list[dict[str, Any]]) -> list[tuple[float, float, float, float]]:
    """One box per line of consecutive characters (a new line when a character starts left of or below the box)."""
    boxes: list[list[float]] = []
    for char in chars:
        x0, top, x1, bottom = (float(char[k]) for k in ("x0", "top", "x1", "bottom"))
        if boxes:
            box = boxes[-1]
            same_line = abs(top - box[1]) < 0.5 * max(bottom - top, 1.0) and x0 >= box[0] - 1.0
            if same_line:
                box[0], box[1], box[2], box[3] = min(box[0], x0), min(box[1], top), max(box[2], x1), max(box[3], bottom)
                continue
        boxes.append([x0, top, x1, bottom])
    return [(round(a, 2), round(b, 2), round(c, 2), round(d, 2)) for a, b, c, d in boxes]


def _match(chars: list[dict[str, Any]], quote_key: str) -> tuple[int, int]:
    """(start, length) in the folded page text of the quote or of its longest beginning."""
    key, _ = fold([c["text"] for c in chars])
    position = key.find(quote_key)
    if position >= 0:
        return position, len(quote_key)
    length, position = _longest_prefix(key, quote_key)
    return position, length


def text_of(chars: list[dict[str, Any]]) -> str:
    """The text of consecutive characters, with a space where the next one starts a line or leaves a gap."""
    out: list[str] = []
    previous: dict[str, Any] | None = None
    for char in chars:
        if previous is not None:
            height = max(float(previous["bottom"]) - float(previous["top"]), 1.0)
            new_line = abs(float(char["top"]) - float(previous["top"])) > 0.5 * height
            gap = float(char["x0"]) - float(previous["x1"]) > 0.15 * height
            if (new_line or gap) and out and not out[-1].isspace() and not char["text"].isspace():
                out.append(" ")
        out.append(char["text"])
        previous = char
    return " ".join("".join(out).split())


def _passage(page: Any, number: int, chars: list[dict[str, Any]], start: int, length: int, found: Found) -> Passage:
    _, owners = fold([c["text"] for c in chars])
    first, last = owners[start], owners[start + length - 1]
    hit = letter_boxes(chars)[start : start + length]
    covered = [{**c, "text": unicodedata.normalize("NFKC", c["text"])} for c in chars[first : last + 1]]
    # a ligature cut by the quote's ends gives only the letters the quote holds ('ﬁ' of 'ﬁne' in 'the fine')
    head = sum(1 for k in range(start) if owners[k] == first)
    tail = sum(1 for k in range(start + length, len(owners)) if owners[k] == last)
    covered[-1]["text"] = covered[-1]["text"][: len(covered[-1]["text"]) - tail] if tail else covered[-1]["text"]
    covered[0]["text"] = covered[0]["text"][head:]
    return Passage(number, float(page.width), float(page.height), line_boxes(hit), found, text_of(covered))


@lru_cache(maxsize=128)
def locate(path: str, sha: str, page_number: int, quote: str) -> Passage:
    """Find ``quote`` on page ``page_number`` (1-based) of the PDF or on the pages after it."""
    import pdfplumber

    quote_key, _ = fold(quote)
    with _PDFIUM, pdfplumber.open(path) as pdf:
        last = len(pdf.pages)
        if not 1 <= page_number <= last:
            raise PdfUnavailable("no_page", f"the PDF has {last} pages; page {page_number} does not exist")
        best: tuple[int, int, int] = (0, -1, page_number)
        for number in range(page_number, min(page_number + PAGES_AFTER, last) + 1):
            page = pdf.pages[number - 1]
            chars = list(page.chars)
            start, length = _match(chars, quote_key) if quote_key else (-1, 0)
            if quote_key and length == len(quote_key):
                return _passage(page, number, chars, start, length, "exact")
            if length > best[0]:
                best = (length, start, number)
        length, start, number = best
        page = pdf.pages[number - 1]
        if length >= min(MIN_PARTIAL, len(quote_key)) and length > 0:
            return _passage(page, number, list(page.chars), start, length, "partial")
        first = pdf.pages[page_number - 1]
        return Passage(page_number, float(first.width), float(first.height))


MAX_IMAGE_SIDE = 2_400
"""Most pixels on the long side of a page image: a page larger than A3 at ``server.page_dpi`` is drawn at a
lower resolution (a 1 KB PDF can declare a 200-inch page, which at 110 dpi would be half a gigapixel)."""


def bounded_resolution(width_pt: float, height_pt: float, dpi: int) -> float:
    """``dpi``, or less where the page would be more than :data:`MAX_IMAGE_SIDE` pixels on its long side."""
    longest = max(width_pt, height_pt, 1.0)
    return min(float(dpi), MAX_IMAGE_SIDE * 72.0 / longest)


@lru_cache(maxsize=32)
def render(
    path: str, sha: str, page_number: int, boxes: tuple[tuple[float, float, float, float], ...], dpi: int
) -> bytes:
    """The page as PNG with ``boxes`` drawn over it."""
    import pdfplumber

    with _PDFIUM, pdfplumber.open(path) as pdf:
        if not 1 <= page_number <= len(pdf.pages):
            raise PdfUnavailable("no_page", f"the PDF has {len(pdf.pages)} pages; page {page_number} does not exist")
        page = pdf.pages[page_number - 1]
        image = page.to_image(resolution=bounded_resolution(float(page.width), float(page.height), dpi))
        if boxes:
            image.draw_rects(list(boxes), fill=FILL, stroke=STROKE, stroke_width=2)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
    return buffer.getvalue()


def file_hash(path: Path) -> str:
    """The sha256 of a file, cached while its identity holds: device, inode, size, modification time and the
    status-change time, which every write, rename onto the path and ``touch`` moves and no one can set back (a
    file replaced by one of the same size with its modification time restored is hashed again)."""
    stat = path.stat()
    identity = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
    return _sha256(str(path), identity)
