"""Page layout: words into lines in reading order, columns, running headers and footers.

Backend-neutral: it reads :class:`~lit3r.corpus.parsers.pdf_backends.PageData`
and produces :class:`Line` objects that the structure step in :mod:`pdf`
classifies (heading, caption, equation, paragraph text, ...). Superscript
reference and footnote marks ('discovery.¹²⁰ Small molecule') are dropped from
their lines here, so their numbers never read as part of the text.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace

from lit3r.corpus.parsers.pdf_backends import PageData, Word

BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi|medi|(?<![a-z])bx|cmbx|\+cmb", re.IGNORECASE)
MATH_FONT = re.compile(r"cmmi|cmsy|cmex|msbm|msam|math|symbol|mt(?:syn|ex)|rsfs|esint|stix", re.IGNORECASE)
MARGIN = 0.07
"""Share of the page height at top and bottom where running headers and footers live."""
REFERENCE_MARK = re.compile(r"[\d,–\-−]*\d[\d,–\-−]*|[∗*†‡§¶⋆]+")
"""What a superscript citation or footnote mark reads: '12', '1–3', '9,28', '60,66–70', '†'."""
POWER_OF_TEN = re.compile(r"(?:^|[×x·*])10$")
EXPONENT = re.compile(r"[−-]?\d{1,3}")


@dataclass
class Line:
    """A line of text: its words, box, dominant font size and style, and where it sits."""

    words: list[Word]
    page: int
    column: int = 0
    """0 for full-width (or single-column) lines, 1 for the left column, 2 for the right."""
    text: str = ""
    x0: float = 0.0
    x1: float = 0.0
    top: float = 0.0
    bottom: float = 0.0
    size: float = 0.0
    font: str = ""
    bold: bool = False
    math: float = 0.0
    """Share of characters set in math fonts."""
    kind: str = "text"
    """What the structure step decided the line is: text, heading, caption, equation, table, ..."""
    extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.words.sort(key=lambda w: w.x0)
        self.text = self.words[0].text
        for previous, word in zip(self.words, self.words[1:], strict=False):
            touching = word.x0 - previous.x1 < 0.1 * min(word.size, previous.size)  # split only by a font change
            self.text += ("" if touching else " ") + word.text
        self.x0 = min(w.x0 for w in self.words)
        self.x1 = max(w.x1 for w in self.words)
        self.top = min(w.top for w in self.words)
        self.bottom = max(w.bottom for w in self.words)
        weights: Counter[tuple[float, str]] = Counter()
        for w in self.words:
            weights[(w.size, w.font)] += len(w.text)
        self.size, self.font = max(weights, key=lambda key: (weights[key], key[0]))
        chars = sum(weights.values()) or 1
        self.bold = sum(n for (_, font), n in weights.items() if BOLD_FONT.search(font)) / chars >= 0.85
        self.math = sum(n for (_, font), n in weights.items() if MATH_FONT.search(font)) / chars

    @property
    def height(self) -> float:
        """Line height in points."""
        return self.bottom - self.top

    def cells(self, min_gap: float | None = None) -> list[str]:
        """The line's text split where words are further apart than a word space (table cells)."""
        gap = min_gap if min_gap is not None else max(4.0, 0.55 * self.size)
        cells, current = [], [self.words[0]]
        for previous, word in zip(self.words, self.words[1:], strict=False):
            if word.x0 - previous.x1 > gap:
                cells.append(" ".join(w.text for w in current))
                current = []
            current.append(word)
        cells.append(" ".join(w.text for w in current))
        return cells


def drop_reference_marks(row: list[Word]) -> list[Word]:
    """The row without its superscript citation and footnote marks.

    A mark is a word that reads like one (:data:`REFERENCE_MARK`), set at most 0.8 times the size of the
    word it hugs (the word before it, or after it at the start of a row) and raised above that word's
    baseline. Exponents stay: a raised number on a 10 is written ``10^5`` or ``10^−3`` (not '105'); one
    after another number, a word in a math font ('mc²') or a closing bracket in a row with math
    ('(x + a)²') is kept as it was; so is a row that is nothing but marks (the structure step reads
    those as fragments).
    """
    ordered = sorted(row, key=lambda w: w.x0)
    has_math = any(MATH_FONT.search(w.font) for w in ordered)
    kept: list[Word] = []
    widen_next_to: float | None = None
    for index, word in enumerate(ordered):
        kind = _superscript(ordered, index, has_math)
        if kind == "power":
            word = replace(word, text=f"^{word.text}")
        elif kind == "mark":
            if kept:  # the word before takes the mark's place, so no gap opens where it was (a 'table cell')
                kept[-1] = replace(kept[-1], x1=word.x1)
            else:
                widen_next_to = word.x0
            continue
        if widen_next_to is not None:
            word, widen_next_to = replace(word, x0=widen_next_to), None
        kept.append(word)
    return kept if kept else ordered


def _superscript(row: list[Word], index: int, row_has_math: bool) -> str | None:
    """'mark' for a citation or footnote mark, 'power' for an exponent on 10, None for anything else."""
    word = row[index]
    anchor = _raised_from(row, index)
    if anchor is None:
        return None
    after_anchor = index > 0 and anchor is row[index - 1]
    if after_anchor and POWER_OF_TEN.search(anchor.text) and EXPONENT.fullmatch(word.text):
        return "power"
    if REFERENCE_MARK.fullmatch(word.text) and not (after_anchor and _exponent_base(anchor, row_has_math)):
        return "mark"
    return None


def _raised_from(row: list[Word], index: int) -> Word | None:
    """The word that ``row[index]`` hugs as a smaller, raised superscript, or None."""
    word = row[index]
    before = row[index - 1] if index > 0 else None
    after = row[index + 1] if index + 1 < len(row) else None
    if before is not None and word.x0 - before.x1 < 0.35 * before.size:
        anchor = before
    elif before is None and after is not None and after.x0 - word.x1 < 0.6 * after.size:
        anchor = after
    else:
        return None
    raised = word.bottom < anchor.bottom - 0.2 * anchor.size and word.top <= anchor.top + 0.1 * anchor.size
    return anchor if word.size <= 0.8 * anchor.size and raised else None


def _exponent_base(anchor: Word, row_has_math: bool) -> bool:
    """True when a superscript right after ``anchor`` is an exponent: on a number, math, or a bracket in math."""
    return (
        anchor.text[-1:].isdigit()
        or bool(MATH_FONT.search(anchor.font))
        or (row_has_math and anchor.text[-1:] in ")]}")
    )


def cluster_rows(words: list[Word]) -> list[list[Word]]:
    """Group words into rows: a word joins a row when its vertical middle lies inside the row's first word."""
    rows: list[tuple[float, float, list[Word]]] = []
    for word in sorted(words, key=lambda w: ((w.top + w.bottom) / 2, w.x0)):
        middle = (word.top + word.bottom) / 2
        for top, bottom, members in reversed(rows[-4:]):
            if top <= middle <= bottom:
                members.append(word)
                break
        else:
            rows.append((word.top, word.bottom, [word]))
    return [members for _, _, members in rows]


def find_gutter(words: list[Word], width: float) -> float | None:
    """The x of the empty band between two text columns, or None on a single-column page.

    Column text never crosses the gutter: across the middle of the page, the band of x positions
    crossed by the fewest words (only full-width titles, figures or tables) is the gutter when it is
    wide enough, few enough words cross it, and both sides hold lines of text.
    """
    if len(words) < 40:
        return None
    rows = len({round(w.top / 3) for w in words})
    crossings = _crossings(words, int(width * 0.35), int(width * 0.65))
    fewest = min(crossings.values())
    if fewest > 0.15 * rows:
        return None
    start, end = _widest_run([x for x, n in crossings.items() if n <= fewest + max(2, 0.1 * rows)])
    gutter = (start + end) / 2
    left = {round(w.top / 3) for w in words if w.x1 <= gutter}
    right = {round(w.top / 3) for w in words if w.x0 >= gutter}
    return gutter if end - start >= 6 and min(len(left), len(right)) >= max(5, 0.2 * rows) else None


def _crossings(words: list[Word], low: int, high: int) -> dict[int, int]:
    """For every integer x in ``[low, high)``, how many words span it."""
    delta = [0] * (high + 2)
    for w in words:
        start, end = max(int(w.x0) + 1, low), min(int(-(-w.x1 // 1)) - 1, high)  # integers strictly inside the word
        if start <= end:
            delta[start] += 1
            delta[end + 1] -= 1
    counts, running = {}, 0
    for x in range(low, high):
        running += delta[x]
        counts[x] = running
    return counts


def _widest_run(xs: list[int]) -> tuple[int, int]:
    """The first and last x of the longest run of consecutive integers in sorted ``xs``."""
    best = current = (xs[0], xs[0])
    for x in xs[1:]:
        current = (current[0], x) if x == current[1] + 1 else (x, x)
        best = max(best, current, key=lambda run: run[1] - run[0])
    return best


def page_lines(page: PageData) -> list[Line]:
    """The page's lines in reading order: full-width bands split the page, each band's columns left to right."""
    gutter = find_gutter(page.words, page.width) or find_gutter(_below_front_block(page), page.width)
    if gutter is None:
        return [Line(drop_reference_marks(row), page.number) for row in cluster_rows(page.words)]
    full: list[Line] = []
    column_words: list[Word] = []
    for row in sorted(cluster_rows(page.words), key=lambda r: min(w.top for w in r)):
        if any(w.x0 < gutter < w.x1 for w in row) or _spans_gutter(row, gutter) or _ends_full_row(row, full, gutter):
            full.append(Line(drop_reference_marks(row), page.number, column=0))
        else:
            column_words.extend(row)
    lines = list(full)
    for column, side in (
        (1, [w for w in column_words if w.x1 <= gutter]),
        (2, [w for w in column_words if w.x0 >= gutter]),
    ):
        lines.extend(Line(drop_reference_marks(row), page.number, column=column) for row in cluster_rows(side))
    full_tops = sorted(line.top for line in full)

    def order(line: Line) -> tuple[int, int, float]:
        band = sum(1 for top in full_tops if top < line.top)
        return band, (3 if line.column == 0 else line.column), line.top

    return sorted(lines, key=order)


def _below_front_block(page: PageData) -> list[Word]:
    """The words under the full-width block that opens a first page (title, authors, a long abstract).

    A long abstract set across both columns crosses the gutter on many rows, so the gutter of the columns
    under it is looked for again without the rows above the last word of the upper half of the page
    that crosses the page's middle.
    """
    middle = page.width / 2
    crossing = [w.bottom for w in page.words if w.x0 < middle < w.x1 and w.bottom < page.height / 2]
    if not crossing:
        return []
    cut = max(crossing)
    return [w for w in page.words if w.top > cut]


def _ends_full_row(row: list[Word], full: list[Line], gutter: float) -> bool:
    """A short last line of a full-width paragraph: left of the gutter, flush and close under a full-width line."""
    if not full or any(w.x0 >= gutter for w in row):
        return False
    above = full[-1]
    top = min(w.top for w in row)
    return 0 <= top - above.bottom < 0.7 * above.height and abs(min(w.x0 for w in row) - above.x0) < 2


def _spans_gutter(row: list[Word], gutter: float) -> bool:
    """True when a row has words on both sides of the gutter with only a word space between them."""
    left = [w for w in row if w.x1 <= gutter]
    right = [w for w in row if w.x0 >= gutter]
    if not left or not right:
        return False
    gap = min(w.x0 for w in right) - max(w.x1 for w in left)
    return gap < 0.6 * max(w.size for w in row)


def drop_running_lines(pages: list[list[Line]], heights: list[float]) -> list[list[Line]]:
    """Remove page numbers and headers/footers that repeat (digits aside) on many pages.

    Many is 40% of the pages and three or more, or both pages of a two-page paper.
    """

    def key(line: Line) -> str:
        return re.sub(r"\d+", "#", line.text.lower()).strip()

    def in_margin(line: Line, height: float) -> bool:
        return line.bottom < height * MARGIN or line.top > height * (1 - MARGIN)

    counts: Counter[str] = Counter()
    for lines, height in zip(pages, heights, strict=True):
        counts.update({key(line) for line in lines if in_margin(line, height)})
    repeated = {k for k, n in counts.items() if n >= min(3, max(2, len(pages))) and n >= 0.4 * len(pages)}
    page_number = re.compile(r"^(page\s+)?#(\s+of\s+#)?$|^[-–]\s*#\s*[-–]$")
    return [
        [
            line
            for line in lines
            if not (in_margin(line, height) and (key(line) in repeated or page_number.match(key(line))))
        ]
        for lines, height in zip(pages, heights, strict=True)
    ]


def body_style(lines: list[Line]) -> tuple[float, str]:
    """The font size and font name most characters are set in."""
    sizes: Counter[float] = Counter()
    fonts: Counter[str] = Counter()
    for line in lines:
        sizes[line.size] += len(line.text)
        fonts[line.font] += len(line.text)
    return (sizes.most_common(1)[0][0], fonts.most_common(1)[0][0]) if sizes else (10.0, "")
