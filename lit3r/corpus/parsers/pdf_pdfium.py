"""The ``pdfium`` backend: words and rules read with PDFium (pypdfium2, Apache-2.0/BSD), tables with pdfplumber.

PDFium reads a page's characters in C, about ten times faster than pdfminer, which is what makes a library
of a thousand papers parse in minutes. It fills the same :class:`~lit3r.corpus.parsers.pdf_backends.PageData`
records as the other backends: words are runs of characters in one font and size with no space, no line
change and no gap wider than 0.15 of the font size between them (pdfplumber's rule), boxes one font size
high around the baseline (:data:`ASCENT`). Only pages whose text names a table ('Table 2:') are
opened with pdfplumber too, for its ruled-table finder.

The page count is known before any page is read, so a file over ``max_pages`` is refused at once.
"""

from __future__ import annotations

import ctypes
import functools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lit3r.corpus.parsers.pdf_backends import (
    TABLE_CAPTION_HINT,
    BackendError,
    PageData,
    PdfData,
    RawTable,
    Word,
    _cell_text,
    _merge_rules,
    clean_text,
)

ASCENT, DESCENT = 0.78, 0.22
"""A character's box is one font size high around its baseline, as pdfminer draws it for a usual font; the
font's own ascent and descent (PDFium's loose box) make raised and lowered characters of TeX fonts read as
lines of their own."""
DASHES = frozenset({0x2D, 0xAD, 0x2010, 0x2011})
"""The characters PDFium can mark as a hyphen at a line end (``FPDFText_IsHyphen``): only these are asked."""
OnPage = Callable[[int, int], None]
"""Called with (pages read, pages in the file) after every page."""


def page_count(path: Path) -> int:
    """How many pages the PDF has (read from its page tree, no page is parsed)."""
    import pypdfium2 as pdfium

    doc = _open(path, pdfium)
    try:
        return len(doc)
    finally:
        doc.close()


def _open(path: Path, pdfium: Any) -> Any:
    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise BackendError("the PDF is encrypted and needs a password") from exc
        if _has_no_pages(path):  # PDFium refuses an empty page tree as a format error
            raise BackendError("the PDF has no pages (truncated or damaged file?)") from exc
        raise BackendError(f"damaged or unreadable PDF ({exc})"[:300]) from exc


def _has_no_pages(path: Path) -> bool:
    """Whether pdfminer reads the file as a PDF with an empty page tree (only asked when PDFium fails)."""
    try:
        import pdfplumber

        with pdfplumber.open(path) as pdf:
            return len(pdf.pages) == 0
    except Exception:  # any failure here means 'not known to be empty': the PDFium message stands
        return False


def read_pdfium(path: Path, max_pages: int | None = None, on_page: OnPage | None = None) -> PdfData:
    """Read every page of ``path``; refuse a file of more than ``max_pages`` pages before reading one."""
    import pypdfium2 as pdfium

    doc = _open(path, pdfium)
    plumber = None
    try:
        total = len(doc)
        if max_pages is not None and total > max_pages:
            raise BackendError(
                f"the PDF has {total:,} pages, more than limits.max_pdf_pages = {max_pages:,}"
                " (LIT3R_LIMITS__MAX_PDF_PAGES raises it)"
            )
        title = clean_text(str(doc.get_metadata_value("Title") or "")).strip()
        pages = []
        for index in range(total):
            page = doc[index]
            try:
                data, ruled = _page(page, index + 1)
            finally:
                page.close()
            if ruled and TABLE_CAPTION_HINT.search(" ".join(w.text for w in data.words)):
                plumber = plumber or _plumber(path)
                data.tables = _tables(plumber.pages[index])
            pages.append(data)
            if on_page:
                on_page(index + 1, total)
        return PdfData(pages=pages, metadata_title=title)
    finally:
        if plumber is not None:
            plumber.close()
        doc.close()


def _plumber(path: Path) -> Any:
    import pdfplumber

    return pdfplumber.open(path)


def _tables(page: Any) -> list[RawTable]:
    return [
        RawTable(tuple(table.bbox), [[_cell_text(c) for c in row] for row in table.extract(x_tolerance_ratio=0.15)])
        for table in page.find_tables()
    ]


def _page(page: Any, number: int) -> tuple[PageData, bool]:
    """The page's words and rules, and whether it draws the vertical strokes a ruled table needs."""
    import pypdfium2.raw as raw

    width, height = page.get_size()
    textpage = page.get_textpage()
    try:
        words = _words(textpage.raw, height, raw)
    finally:
        textpage.close()
    rules, verticals = _rules(page, height, raw)
    return PageData(number, float(width), float(height), words, _merge_rules(rules)), verticals >= 2


@functools.cache
def _text_object_address(raw: Any) -> Any:
    """``FPDFText_GetTextObject`` returning the object's address as an int (pypdfium2's binding returns a typed
    pointer, and turning it into a comparable value per character costs a cast a character)."""
    prototype = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)
    return prototype(ctypes.cast(raw.FPDFText_GetTextObject, ctypes.c_void_p).value)


def _words(handle: Any, height: float, raw: Any) -> list[Word]:
    """The page's upright words, in the order PDFium reads the characters."""
    text_object = _text_object_address(raw)
    address = ctypes.cast(handle, ctypes.c_void_p)
    box = raw.FS_RECTF()
    name = ctypes.create_string_buffer(256)
    flags = ctypes.c_int()
    origin_x, origin_y = ctypes.c_double(), ctypes.c_double()
    matrix = raw.FS_MATRIX()
    words: list[Word] = []
    current: list[tuple[str, float, float, float, float]] = []
    style: tuple[float, str] = (0.0, "")

    def flush() -> None:
        if current:
            text = clean_text("".join(c[0] for c in current))
            if text.strip():
                top, bottom = min(c[3] for c in current), max(c[4] for c in current)
                words.append(Word(text, current[0][1], current[-1][2], top, bottom, style[0], style[1]))
            current.clear()

    box_ref, x_ref, y_ref = ctypes.byref(box), ctypes.byref(origin_x), ctypes.byref(origin_y)
    run: tuple[Any, float, str, bool, float] = (None, 0.0, "", True, 0.0)  # object, size, font, upright, rounded
    for index in range(raw.FPDFText_CountChars(handle)):
        code = raw.FPDFText_GetUnicode(handle, index)
        char = chr(code) if 0 < code < 0x110000 and not 0xD800 <= code < 0xE000 else ""
        if code == 2 or (code in DASHES and raw.FPDFText_IsHyphen(handle, index)):  # a hyphen at a line end
            char = "-"
        if not char.strip() or code == 0xFFFE:  # what PDFium generates (spaces, line breaks) is white space too
            flush()
            continue
        owner = text_object(address, index)
        if owner is None or owner != run[0]:  # size, font and angle are the text object's: read once per object
            angle = raw.FPDFText_GetCharAngle(handle, index)
            raw.FPDFText_GetFontInfo(handle, index, name, 256, ctypes.byref(flags))
            upright = angle <= 0.01 or abs(angle - 2 * math.pi) <= 0.01
            raw.FPDFText_GetMatrix(handle, index, ctypes.byref(matrix))
            scale = math.hypot(matrix.c, matrix.d) or 1.0  # the font size is in text space; Chromium scales by 0.75
            size_pt = raw.FPDFText_GetFontSize(handle, index) * scale
            run = (owner, size_pt, name.value.decode("utf-8", "replace"), upright, round(size_pt, 1))
        _, font_size, font, upright, size = run
        if not upright:  # rotated: margin stamps, axis labels
            flush()
            continue
        raw.FPDFText_GetLooseCharBox(handle, index, box_ref)
        raw.FPDFText_GetCharOrigin(handle, index, x_ref, y_ref)
        baseline = height - origin_y.value
        x0, x1, top, bottom = box.left, box.right, baseline - ASCENT * font_size, baseline + DESCENT * font_size
        if current:
            last = current[-1]
            same_line = abs(top - last[3]) <= 2 or abs(bottom - last[4]) <= 2
            gap = x0 - last[2]
            if (size, font) != style or not same_line or gap > 0.15 * size or gap < -0.5 * size:
                flush()
        if not current:
            style = (size, font)
        current.append((char, x0, x1, top, bottom))
    flush()
    return words


def _rules(page: Any, height: float, raw: Any) -> tuple[list[tuple[float, float, float]], int]:
    """Horizontal rules (path objects less than 2 points high) and how many paths could draw a table's
    vertical lines (thin upright strokes).

    Only a page with such strokes is given to pdfplumber's ruled-table finder: its 'lines' strategy finds
    nothing without vertical edges, and reading a page with pdfplumber costs ten times PDFium's read.
    """
    rules, verticals = [], 0
    for left, bottom, right, top in _path_bounds(page.raw, raw):
        if top - bottom < 2:
            rules.append((float(left), float(right), float(height - top)))
        elif top - bottom >= 5 and right - left < 2:
            verticals += 1
    return rules, verticals


MAX_FORM_DEPTH = 15
"""How deep Form XObjects (objects grouped inside objects) are searched for paths, as pypdfium2's
``get_objects`` does."""


def _path_bounds(page: Any, raw: Any) -> list[tuple[float, float, float, float]]:
    """``(left, bottom, right, top)`` of every path object of the page, Form XObjects included.

    Read through PDFium's C calls directly: a page printed by a browser holds thousands of text objects, and
    wrapping each one in a Python object only to learn it is not a path cost more than reading the words.
    """
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    found: list[tuple[float, float, float, float]] = []
    stack: list[tuple[Any, bool, int]] = [(page, False, 0)]
    while stack:
        parent, is_form, level = stack.pop()
        count = raw.FPDFFormObj_CountObjects(parent) if is_form else raw.FPDFPage_CountObjects(parent)
        for index in range(max(count, 0)):
            obj = raw.FPDFFormObj_GetObject(parent, index) if is_form else raw.FPDFPage_GetObject(parent, index)
            if not obj:
                continue
            kind = raw.FPDFPageObj_GetType(obj)
            if kind == raw.FPDF_PAGEOBJ_PATH and raw.FPDFPageObj_GetBounds(
                obj, ctypes.byref(left), ctypes.byref(bottom), ctypes.byref(right), ctypes.byref(top)
            ):
                found.append((left.value, bottom.value, right.value, top.value))
            elif kind == raw.FPDF_PAGEOBJ_FORM and level < MAX_FORM_DEPTH - 1:
                stack.append((obj, True, level + 1))
    return found
