"""PDF papers: title, authors, abstract, sectioned body blocks, tables, figures, equations, references.

The work is split in steps, one module each:

* :mod:`pdf_backends` reads words, rules and ruled tables (PDFium by default, pdfplumber or PyMuPDF
  with ``backend=`` / ``LIT3R_PDF_BACKEND``) in a time-limited
  child process and turns every failure into a :class:`ParseError`;
* :mod:`pdf_layout` builds lines in reading order (two-column pages included)
  and drops running headers, footers and page numbers;
* :mod:`pdf_floats` replaces table regions by table lines and drops text drawn
  inside figures;
* :mod:`pdf_classify` tells headings, display equations and text apart;
* :mod:`pdf_front` finds title, authors and where the body starts;
* this module assembles paragraphs and blocks under their sections, the
  abstract, and the reference list (to ``Paper.references``, not the body).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lit3r.corpus.parsers import ParseError
from lit3r.corpus.parsers.pdf_backends import DEFAULT_BACKEND, PdfData, read_pdf
from lit3r.corpus.parsers.pdf_classify import FOOTNOTE_MARK, NUMBERED_HEADING, Extents, classify_lines, mark_footnotes
from lit3r.corpus.parsers.pdf_floats import caption_lines, drop_figure_text, replace_tables
from lit3r.corpus.parsers.pdf_front import front_matter
from lit3r.corpus.parsers.pdf_layout import Line, body_style, drop_running_lines, page_lines
from lit3r.corpus.references import parse_reference, split_reference_list
from lit3r.corpus.textutil import Vocabulary, join_lines, slugify
from lit3r.models import Block, Paper, ParsedPaper

REFERENCES_HEADING = re.compile(r"^(?:\d+\.?\s+)?(references|bibliography|literature cited|works cited)$", re.I)
APPENDIX_HEADING = re.compile(r"^(?:[A-H](?:\.\d+)*\.?\s+[A-Z]|appendix|appendices|supplementary)", re.IGNORECASE)
DEFERRED = ("footnote", "table")
"""Lines a paragraph that runs on to the next column or page reads past (they follow it as blocks of their own)."""
INLINE_ABSTRACT = re.compile(r"^abstract\s*[:.—–-]\s*", re.IGNORECASE)


def parse_pdf(
    path: Path,
    backend: str | None = None,
    timeout: float | None = None,
    isolate: bool = True,
    max_pages: int | None = None,
    on_page: Callable[[int, int], None] | None = None,
) -> list[ParsedPaper]:
    """Parse one PDF paper.

    ``backend`` is ``"pdfium"`` (default), ``"pdfplumber"`` or ``"pymupdf"`` (optional extra); when it is
    None the ``LIT3R_PDF_BACKEND`` environment variable decides. A file of more than ``max_pages`` pages is
    refused before a page is read; ``on_page(done, total)`` follows the reading (without ``isolate``).
    Reading runs in a child process killed after ``timeout`` seconds (default: scaled with the file size);
    ``isolate=False`` reads in this process.
    """
    path = Path(path)
    data = read_pdf(
        path, backend or os.environ.get("LIT3R_PDF_BACKEND", DEFAULT_BACKEND), timeout, isolate, max_pages, on_page
    )
    return [paper_from_pages(data, path)]


def paper_from_pages(data: PdfData, path: Path) -> ParsedPaper:
    """The paper in what a backend read (pages of words, rules and tables); ``path`` names the source."""
    pages = drop_running_lines([page_lines(page) for page in data.pages], [page.height for page in data.pages])
    all_lines = [line for lines in pages for line in lines]
    if sum(len(line.text) for line in all_lines) < 40:
        raise ParseError(path, "no extractable text (a scanned or image-only PDF?)")
    body_size, body_font = body_style(all_lines)
    stream: list[Line] = []
    for page, lines in zip(data.pages, pages, strict=True):
        stream.extend(replace_tables(page, lines, body_size))
    stream = drop_figure_text(stream, body_size, body_font)
    extents = classify_lines(stream, body_size)
    mark_footnotes(stream, body_size, {page.number: (page.height, page.rules) for page in data.pages})
    front = front_matter(stream, body_size, data.metadata_title)
    blocks, abstract, raw_references = assemble(stream[front.body_start :], body_size, extents)
    if not abstract:
        blocks, abstract = _first_paragraph_as_abstract(blocks)
    paper = Paper(
        id=slugify(path.stem),
        title=front.title or path.stem,
        abstract=abstract,
        authors=front.authors,
        references=[parse_reference(raw) for raw in split_reference_list(raw_references)],
        source=str(path),
        source_format="pdf",
    )
    parsed = ParsedPaper(paper=paper, blocks=blocks)
    if parsed.is_empty:
        raise ParseError(path, "no body text found")
    return parsed.with_spans()


def _first_paragraph_as_abstract(blocks: list[Block]) -> tuple[list[Block], str]:
    """Without an 'Abstract' heading, the first substantial paragraph before any section is the abstract."""
    for index, block in enumerate(blocks):
        if block.section is not None:
            break
        if block.type == "text" and len(block.text.split()) >= 30:
            return blocks[:index] + blocks[index + 1 :], block.text
    return blocks, ""


def typical_gap(lines: list[Line], body_size: float) -> float:
    """The usual blank space between two body-text lines of a paragraph (larger in double-spaced preprints)."""
    gaps = sorted(
        line.top - previous.bottom
        for previous, line in zip(lines, lines[1:], strict=False)
        if line.page == previous.page
        and line.column == previous.column
        and line.kind == previous.kind == "text"
        and abs(line.size - body_size) < 0.3
        and abs(previous.size - body_size) < 0.3
        and -2 < line.top - previous.bottom < 2 * line.height
    )
    return gaps[len(gaps) // 2] if gaps else 0.2 * body_size


def indents_paragraphs(lines: list[Line], body_size: float, extents: Extents) -> bool:
    """Whether the paper marks a new paragraph by indenting its first line (most papers; others leave a blank).

    Read where paragraphs visibly end inside a column: after a body line that ends a sentence well short of
    the right edge, the next body line is indented in at least 60% of three or more such places.
    """
    starts = [
        line.x0 > left + 0.8 * line.size
        for previous, line in zip(lines, lines[1:], strict=False)
        for left, right in [extents[(line.page, line.column)]]
        if (previous.page, previous.column) == (line.page, line.column)
        and previous.kind == line.kind == "text"
        and abs(previous.size - body_size) < 0.3
        and abs(line.size - body_size) < 0.3
        and previous.text.rstrip().endswith((".", "!", "?"))
        and previous.x1 < right - 0.15 * (right - left)
    ]
    return len(starts) >= 3 and sum(starts) >= 0.6 * len(starts)


def assemble(lines: list[Line], body_size: float, extents: Extents) -> tuple[list[Block], str, str]:
    """Blocks, abstract text and the raw reference list from classified body lines."""
    layout = Flow(
        typical_gap(lines, body_size),
        extents,
        Vocabulary([line.text for line in lines]),
        indents_paragraphs(lines, body_size, extents),
    )
    blocks: list[Block] = []
    abstract: list[str] = []
    references: list[Line] = []
    section: str | None = None
    abstract_size: float | None = None
    mode = "body"  # or "abstract", "references"
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.kind == "heading":
            heading, index = _heading(lines, index)
            if REFERENCES_HEADING.match(heading):
                mode = "references"
            elif heading.lower().rstrip(".:") == "abstract":
                mode = "abstract"
            elif mode != "references" or APPENDIX_HEADING.match(heading):
                mode, section = "body", heading
            continue
        if mode == "references":
            references.append(line)
            index += 1
            continue
        if mode == "abstract" and abstract_size is not None and abs(line.size - abstract_size) > 0.8:
            mode = "body"  # a footnote under the abstract ('Equal contribution.') is not part of it
        if line.kind == "footnote":
            end = next((i for i in range(index, len(lines)) if lines[i].kind != "footnote"), len(lines))
            blocks.extend(b.model_copy(update={"section": section}) for b in _footnotes(lines[index:end], layout))
            index = end
            continue
        block, index = _block(lines, index, layout)
        if block is None:
            continue
        if mode == "body" and section is None and not abstract and INLINE_ABSTRACT.match(block.text):
            mode, block = "abstract", block.model_copy(update={"text": INLINE_ABSTRACT.sub("", block.text, count=1)})
        if mode == "abstract" and block.type == "text":
            abstract.append(block.text)
            abstract_size = line.size if abstract_size is None else abstract_size
        else:
            blocks.append(block.model_copy(update={"section": section}))
        if layout.deferred:  # footnotes and tables the paragraph ran past: after it
            blocks.extend(b.model_copy(update={"section": section}) for b in _deferred_blocks(layout))
    return blocks, "\n\n".join(abstract), reference_text(references)


def _heading(lines: list[Line], index: int) -> tuple[str, int]:
    """The heading at ``index`` (joined with a wrapped second line in the same style) and the next index."""
    first = lines[index]
    parts, index = [first.text], index + 1
    if index < len(lines):
        nxt = lines[index]
        same_style = nxt.kind in ("heading", "text") and nxt.bold == first.bold and abs(nxt.size - first.size) < 0.3
        close = nxt.page == first.page and 0 <= nxt.top - first.bottom < 0.5 * first.height
        if same_style and close and not NUMBERED_HEADING.match(nxt.text):
            parts.append(nxt.text)
            index += 1
    return " ".join(" ".join(parts).split()), index


def reference_text(lines: list[Line]) -> str:
    """The reference list as text, with a blank line before every entry the layout shows to start one.

    With hanging indentation (most styles) an entry starts at its column's left margin; otherwise
    at a vertical gap, or at a column change after a line that ended a sentence.
    """
    margins: dict[tuple[int, int], float] = {}
    for line in lines:
        margins[(line.page, line.column)] = min(margins.get((line.page, line.column), line.x0), line.x0)
    indented = sum(line.x0 > margins[(line.page, line.column)] + 5 for line in lines)
    hanging = indented >= 0.2 * len(lines)
    parts = []
    for previous, line in zip([None, *lines], lines, strict=False):
        if previous is None:
            starts = False
        elif hanging:
            starts = line.x0 <= margins[(line.page, line.column)] + 2
        elif previous.page != line.page or previous.column != line.column:
            starts = previous.text.rstrip().endswith(".")
        else:
            starts = line.top - previous.bottom > 0.6 * previous.height
        parts.append(("\n" if starts else "") + line.text)
    return "\n".join(parts)


def _block(lines: list[Line], index: int, layout: Flow) -> tuple[Block | None, int]:
    """The block starting at ``lines[index]`` and the index after it."""
    line = lines[index]
    if line.kind == "table":
        return Block(
            type="table", text=line.text, page=line.page, object_id=line.extra.get("object_id") or None
        ), index + 1
    if line.kind == "caption":
        caption = caption_lines(lines, index)
        text = join_lines([c.text for c in caption], layout.vocabulary)
        return Block(type="figure", text=text, page=line.page, object_id=line.extra["object_id"]), index + len(caption)
    if line.kind in ("equation", "fragment"):
        group = [line]
        while index + len(group) < len(lines) and _continues_equation(group[-1], lines[index + len(group)]):
            group.append(lines[index + len(group)])
        if all(g.kind == "fragment" for g in group):
            return None, index + len(group)
        return Block(type="equation", text=" ".join(g.text for g in group), page=line.page), index + len(group)
    paragraph, end = [line], index + 1
    while end < len(lines):
        if lines[end].kind in DEFERRED and lines[end].page != paragraph[-1].page or lines[end].kind == "footnote":
            # a footnote, or a table at the top of the next page, between two parts of a paragraph: after it
            after = next((later for later in lines[end:] if later.kind not in DEFERRED), None)
            if after is None or not layout.continues(paragraph, after):
                break
            layout.deferred.append(lines[end])
            end += 1
            continue
        if not layout.continues(paragraph, lines[end]):
            break
        if lines[end].kind == "fragment":  # stray sub/superscripts: dropped, unless they open an equation
            after = next((later for later in lines[end:] if later.kind != "fragment"), None)
            if after is not None and after.kind == "equation":
                break
        else:
            paragraph.append(lines[end])
        end += 1
    return Block(type="text", text=join_lines([p.text for p in paragraph], layout.vocabulary), page=line.page), end


def _deferred_blocks(layout: Flow) -> list[Block]:
    """The blocks of the footnotes and tables a paragraph ran past, in their order; the list is emptied."""
    deferred, layout.deferred = layout.deferred, []
    blocks: list[Block] = []
    footnotes: list[Line] = []
    for line in [*deferred, None]:
        if line is not None and line.kind == "footnote":
            footnotes.append(line)
            continue
        blocks.extend(_footnotes(footnotes, layout) if footnotes else [])
        footnotes = []
        if line is not None:
            blocks.append(_block([line], 0, layout)[0])
    return blocks


def _footnotes(lines: list[Line], layout: Flow) -> list[Block]:
    """Footnote lines as text blocks, one per footnote: a new one starts at a mark or a wider gap."""
    groups: list[list[Line]] = []
    for previous, line in zip([None, *lines], lines, strict=False):
        starts = (
            previous is None
            or FOOTNOTE_MARK.match(line.text) is not None
            or line.page != previous.page
            or line.top - previous.bottom > 0.6 * previous.height
        )
        if starts:
            groups.append([line])
        else:
            groups[-1].append(line)
    return [
        Block(type="text", text=join_lines([g.text for g in group], layout.vocabulary), page=group[0].page)
        for group in groups
    ]


def _continues_equation(last: Line, line: Line) -> bool:
    close = line.page == last.page and line.column == last.column and line.top - last.bottom < 1.2 * last.height
    return close and line.kind in ("equation", "fragment")


@dataclass
class Flow:
    """What paragraph joining needs to know about the page layout."""

    usual_gap: float
    """The blank space between two lines of one paragraph."""
    extents: Extents
    """Left and right text edges per (page, column)."""
    vocabulary: Vocabulary
    """The paper's words, which tell a word split at a line end from a hyphenated compound."""
    indents: bool = False
    """Whether the paper indents a paragraph's first line (:func:`indents_paragraphs`)."""
    deferred: list[Line] = field(default_factory=list)
    """Footnote lines a paragraph ran past (to the next column or page), placed after it."""

    def continues(self, paragraph: list[Line], line: Line) -> bool:
        """Whether ``line`` continues the paragraph whose lines so far are ``paragraph``.

        Within a column a blank wider than the usual line spacing, or an indent after a line that ends a
        sentence or stops short, starts a new paragraph. At the top of a new column or page an indent does, or
        a sentence ended short of the edge; in a paper that does not indent paragraphs, also a capital after a
        sentence's end.
        """
        if line.kind in ("fragment", "footnote"):
            return True
        last = paragraph[-1]
        if line.kind != "text" or abs(line.size - last.size) > 1.0:
            return False
        ended = last.text.rstrip().endswith((".", "!", "?", ":"))
        indented = self.indented(line, last if len(paragraph) > 1 else None)
        short = self.short(last)
        if line.page != last.page or line.column != last.column:  # no gap to read: the line's shape decides
            if indented or (ended and short):
                return False
            return self.indents or not (ended and line.text[:1].isupper())
        gap = line.top - last.bottom
        starts = (ended and (indented or short)) or (short and self.indented(line))  # a short line, then an indent
        return -2 < gap < self.usual_gap + 0.3 * last.height and not starts

    def short(self, line: Line) -> bool:
        """Whether ``line`` stops well before its column's right edge, as a paragraph's last line does."""
        left, right = self.extents[(line.page, line.column)]
        return line.x1 < right - 0.15 * (right - left)

    def indented(self, line: Line, inner: Line | None = None) -> bool:
        """Whether ``line`` starts right of its column's margin as a first line does, and of ``inner`` if given.

        Measured from the margin: a one-line paragraph is itself indented, and the first line of a new column
        has no line above it. ``inner`` is an inner line of the paragraph (not its first): a list item's
        lines hang at an indent of their own, and only a line indented further than them starts a paragraph.
        """
        if inner is not None and line.x0 - self.margin(line) <= inner.x0 - self.margin(inner) + 0.8 * line.size:
            return False
        return line.x0 > self.margin(line) + 0.8 * line.size

    def margin(self, line: Line) -> float:
        """The left edge of the column ``line`` is in."""
        return self.extents[(line.page, line.column)][0]
