"""PDF backends: read a PDF into plain page geometry (words, horizontal rules, ruled tables).

Three backends fill the same :class:`PageData` records: ``pdfium`` (the
default: PDFium through pypdfium2, see :mod:`pdf_pdfium`), ``pdfplumber`` (MIT)
and ``pymupdf`` (optional extra, AGPL, imported lazily). The
layout and structure steps in :mod:`pdf_layout` and :mod:`pdf` never see
either library. :func:`read_pdf` runs the backend in a child process with a
time limit (a fresh interpreter), so that a damaged file cannot hang ingestion, and turns every
backend failure into a :class:`ParseError`.
"""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
import tempfile
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lit3r.corpus.parsers import ParseError

BACKENDS = ("pdfium", "pdfplumber", "pymupdf")
DEFAULT_BACKEND = "pdfium"
TABLE_CAPTION_HINT = re.compile(r"\bTab(?:le|\.)\s*(?:\d+|[IVX]+)\s*[:.]")
"""Pages whose text matches this are searched for ruled tables (the search is slow)."""
MIN_RULE_WIDTH = 20.0


@dataclass
class Word:
    """One upright word with its box (PDF points, top-left origin), font size and font name."""

    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float
    font: str


@dataclass
class RawTable:
    """A table found from ruling lines: its box and its cell texts row by row."""

    bbox: tuple[float, float, float, float]
    rows: list[list[str]]


@dataclass
class PageData:
    """What a backend read from one page."""

    number: int
    width: float
    height: float
    words: list[Word] = field(default_factory=list)
    rules: list[tuple[float, float, float]] = field(default_factory=list)
    """Horizontal rules as ``(x0, x1, y)``."""
    tables: list[RawTable] = field(default_factory=list)


@dataclass
class PdfData:
    """A whole document as read by a backend."""

    pages: list[PageData]
    metadata_title: str = ""


class BackendError(Exception):
    """A problem the backend recognised (encryption, no pages); its message is shown to the user."""


_SPACING_ACCENTS = {
    "¨": "\u0308",
    "´": "\u0301",
    "`": "\u0300",
    "ˆ": "\u0302",
    "˜": "\u0303",
    "ˇ": "\u030c",
    "˚": "\u030a",
}
_ACCENT_AFTER = re.compile(r"([A-Za-z])([¨])")
_ACCENT_BEFORE = re.compile(r"([¨´`ˆ˜ˇ˚])([A-Za-zı])")
_CID = re.compile(r"\(cid:\d+\)")


def clean_text(text: str) -> str:
    """Normalise extracted text: TeX's separate accents joined to their letter, ligatures split, no control chars.

    pdfTeX draws an umlaut after its letter ('Mu¨ller') and other accents before it ('Jim´enez');
    NFKC then turns ligatures such as 'ﬁ' into 'fi'. Glyphs without a Unicode mapping ('(cid:88)') are dropped.
    """
    text = _ACCENT_AFTER.sub(lambda m: m.group(1) + _SPACING_ACCENTS[m.group(2)], text)
    text = _ACCENT_BEFORE.sub(lambda m: m.group(2).replace("ı", "i") + _SPACING_ACCENTS[m.group(1)], text)
    text = unicodedata.normalize("NFKC", _CID.sub("", text))
    return "".join(ch for ch in text if ch == "\n" or unicodedata.category(ch)[0] != "C")


def _merge_rules(rules: list[tuple[float, float, float]]) -> list[tuple[float, float, float]]:
    """Join touching segments of one rule (a cell border per column), then drop short rules and duplicates."""
    joined: list[tuple[float, float, float]] = []
    for x0, x1, y in sorted(rules, key=lambda r: (round(r[2]), r[0])):
        if joined and abs(joined[-1][2] - y) < 1 and x0 - joined[-1][1] <= 2:
            joined[-1] = (joined[-1][0], max(joined[-1][1], x1), joined[-1][2])
        else:
            joined.append((x0, x1, y))
    kept: list[tuple[float, float, float]] = []
    for x0, x1, y in (r for r in joined if r[1] - r[0] >= MIN_RULE_WIDTH):
        if not any(abs(y - ky) < 2 and abs(x0 - kx0) < 2 and abs(x1 - kx1) < 2 for kx0, kx1, ky in kept):
            kept.append((x0, x1, y))
    return sorted(kept, key=lambda r: (r[2], r[0]))


def _cell_text(cell: str | None) -> str:
    return " ".join(clean_text(cell or "").split())


# --- pdfplumber ---------------------------------------------------------------------------------


def _read_pdfplumber(path: Path) -> PdfData:
    import pdfplumber
    from pdfminer.pdfdocument import PDFEncryptionError
    from pdfplumber.utils.exceptions import PdfminerException

    try:
        pdf = pdfplumber.open(path)
    except PdfminerException as exc:
        cause = exc.args[0] if exc.args else exc
        if isinstance(cause, PDFEncryptionError):
            raise BackendError("the PDF is encrypted and needs a password") from exc
        raise BackendError(f"damaged or unreadable PDF ({type(cause).__name__}: {cause})"[:300]) from exc
    with pdf:
        title = str((pdf.metadata or {}).get("Title") or "")
        return PdfData(pages=[_plumber_page(page) for page in pdf.pages], metadata_title=clean_text(title).strip())


def _plumber_page(page: Any) -> PageData:
    raw_words = page.extract_words(x_tolerance_ratio=0.15, y_tolerance=2, extra_attrs=["size", "fontname"])
    words = [
        Word(clean_text(w["text"]), w["x0"], w["x1"], w["top"], w["bottom"], round(w["size"], 1), w["fontname"])
        for w in raw_words
        if w["upright"] and clean_text(w["text"]).strip()
    ]
    rules = _merge_rules([(e["x0"], e["x1"], e["top"]) for e in page.horizontal_edges])
    data = PageData(page.page_number, float(page.width), float(page.height), words, rules)
    if TABLE_CAPTION_HINT.search(" ".join(w.text for w in words)):
        for table in page.find_tables():
            rows = [[_cell_text(c) for c in row] for row in table.extract(x_tolerance_ratio=0.15)]
            data.tables.append(RawTable(tuple(table.bbox), rows))
    return data


# --- PyMuPDF (optional) -------------------------------------------------------------------------


def _read_pymupdf(path: Path) -> PdfData:
    try:
        import pymupdf
    except ImportError as exc:
        raise BackendError("the pymupdf backend needs the optional extra: pip install 'lit3r[pymupdf]'") from exc
    with pymupdf.open(path) as doc:
        if doc.needs_pass and not doc.authenticate(""):
            raise BackendError("the PDF is encrypted and needs a password")
        title = clean_text((doc.metadata or {}).get("title") or "").strip()
        return PdfData(pages=[_mupdf_page(page) for page in doc], metadata_title=title)


def _mupdf_page(page: Any) -> PageData:
    words: list[Word] = []
    for block in page.get_text("rawdict")["blocks"]:
        for line in block.get("lines", []):
            if abs(line["dir"][1]) > 0.01:  # not horizontal: margin stamps, rotated labels
                continue
            for span in line["spans"]:
                words.extend(_mupdf_span_words(span))
    rules = []
    for drawing in page.get_drawings():
        for item in drawing["items"]:
            if item[0] == "l" and abs(item[1].y - item[2].y) < 1:
                rules.append((min(item[1].x, item[2].x), max(item[1].x, item[2].x), item[1].y))
            elif item[0] == "re" and item[1].height < 2:
                rules.append((item[1].x0, item[1].x1, item[1].y0))
    data = PageData(page.number + 1, page.rect.width, page.rect.height, words, _merge_rules(rules))
    if TABLE_CAPTION_HINT.search(" ".join(w.text for w in words)):
        for table in page.find_tables().tables:
            rows = [[_cell_text(c) for c in row] for row in table.extract()]
            data.tables.append(RawTable(tuple(table.bbox), rows))
    return data


def _mupdf_span_words(span: dict[str, Any]) -> list[Word]:
    """Split a rawdict span into words at spaces, keeping each word's box."""
    words, current = [], []
    for char in [*span["chars"], None]:
        if char is None or not char["c"].strip():
            if current:
                text = clean_text("".join(c["c"] for c in current))
                x0, x1 = current[0]["bbox"][0], current[-1]["bbox"][2]
                top, bottom = min(c["bbox"][1] for c in current), max(c["bbox"][3] for c in current)
                words.append(Word(text, x0, x1, top, bottom, round(span["size"], 1), span["font"]))
            current = []
        else:
            current.append(char)
    return words


# --- guarded entry point ------------------------------------------------------------------------


def _read(path: Path, backend: str, max_pages: int | None = None, on_page: Any = None) -> PdfData:
    from lit3r.corpus.parsers.pdf_pdfium import page_count, read_pdfium

    if backend == "pdfium":
        return read_pdfium(path, max_pages, on_page)
    if max_pages is not None and (total := page_count(path)) > max_pages:
        raise BackendError(f"the PDF has {total:,} pages, more than limits.max_pdf_pages = {max_pages:,}")
    return _read_pymupdf(path) if backend == "pymupdf" else _read_pdfplumber(path)


def _read_safely(path: str, backend: str, max_pages: int | None = None, on_page: Any = None) -> tuple[str, Any]:
    """``("ok", PdfData)`` or ``("error", message)``: no backend exception escapes."""
    try:
        return "ok", _read(Path(path), backend, max_pages, on_page)
    except BackendError as exc:
        return "error", str(exc)
    except Exception as exc:  # the process boundary: pdfminer raises many unrelated types on damaged files
        return "error", f"damaged or unreadable PDF ({type(exc).__name__}: {exc})"[:300]


def check_pdf_file(path: Path) -> None:
    """Raise ParseError unless ``path`` is a non-empty file that starts like a PDF and is not cut short."""
    try:
        with path.open("rb") as handle:
            head = handle.read(1024)
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - 8192))
            tail = handle.read()
    except OSError as exc:
        raise ParseError(path, f"cannot read the file ({exc.strerror})") from exc
    if not head:
        raise ParseError(path, "the file is empty")
    if b"%PDF-" not in head:
        raise ParseError(path, "not a PDF file (no %PDF header)")
    if b"%%EOF" not in tail:
        raise ParseError(path, "the PDF is truncated (no %%EOF marker at its end)")


def read_pdf(
    path: Path,
    backend: str = DEFAULT_BACKEND,
    timeout: float | None = None,
    isolate: bool = True,
    max_pages: int | None = None,
    on_page: Any = None,
) -> PdfData:
    """Read ``path`` with ``backend``; a file of more than ``max_pages`` pages is refused before any page is read.

    With ``isolate`` (the default) the backend runs in a child process that is killed after ``timeout``
    seconds (by default 120 s plus 60 s per MB of file), so that a damaged file cannot hang the caller.
    ``on_page(done, total)`` is called after each page (only without ``isolate``, in this process).
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown PDF backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    check_pdf_file(path)
    if isolate:
        limit = timeout if timeout is not None else 120.0 + 60.0 * path.stat().st_size / 1e6
        status, payload = _run_guarded(path, backend, limit, max_pages)
    else:
        status, payload = _read_safely(str(path), backend, max_pages, on_page)
    if status == "error":
        raise ParseError(path, payload)
    if not payload.pages:
        raise ParseError(path, "the PDF has no pages (truncated or damaged file?)")
    return payload


def _run_guarded(path: Path, backend: str, timeout: float, max_pages: int | None = None) -> tuple[str, Any]:
    """Run :func:`_read_safely` in a fresh interpreter that is killed after ``timeout`` seconds."""
    with tempfile.TemporaryDirectory(prefix="lit3r-pdf-") as folder:
        result = Path(folder) / "result.pickle"
        command = [sys.executable, "-m", __name__, str(path), backend, str(result), str(max_pages or "")]
        try:
            done = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired as exc:
            raise ParseError(path, f"reading the PDF took longer than {timeout:.0f} s (damaged file?)") from exc
        if done.returncode != 0 or not result.exists():
            last = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
            raise ParseError(path, f"the PDF reader crashed ({last[0][:200]})")
        return pickle.loads(result.read_bytes())  # noqa: S301 - written by our own child process


if __name__ == "__main__":  # the child process of _run_guarded: python -m ... <pdf> <backend> <result file>
    # Import under the package name so that pickled records name their real module, not __main__.
    from lit3r.corpus.parsers import pdf_backends

    pages_limit = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] else None
    Path(sys.argv[3]).write_bytes(pickle.dumps(pdf_backends._read_safely(sys.argv[1], sys.argv[2], pages_limit)))
