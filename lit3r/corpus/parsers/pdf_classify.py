"""Line kinds in a PDF's text stream: section headings, display equations, stray sub/superscripts, text.

Captions and tables are marked earlier (:mod:`pdf_floats`); this module decides
for the remaining lines from their style (bold, size, math fonts), their text
(numbered heading patterns, math-symbol density, '(n)' equation numbers) and
their position (indented display lines next to an equation belong to it).
"""

from __future__ import annotations

import re

from lit3r.corpus.parsers.pdf_layout import Line

NUMBERED_HEADING = re.compile(r"^(?:(?:\d{1,2}|[A-H])(?:\.\d{1,2})*\.?|[IVX]{1,5}\.)\s+[A-Z]\S*")
KNOWN_HEADING = re.compile(
    r"^(abstract|introduction|related work|background|methods?|methodology|experiments?|results|discussion|"
    r"conclusions?|acknowledge?ments?|references|bibliography|appendix|appendices|limitations)$",
    re.IGNORECASE,
)
EQUATION_NUMBER = re.compile(r"\(\d{1,3}[a-z]?\)$")
MATH_CHARS = frozenset("=+−×·∑∏∫√≤≥≈≠∈∉⊂⊆∀∃∂∇∞^_|<>αβγδεζηθικλμνξπρστυφχψωΓΔΘΛΞΠΣΦΨΩ()[]{}/*")
PROSE_WORD = re.compile(r"[A-Za-z]{4,}")
Extents = dict[tuple[int, int], tuple[float, float]]
"""Left and right text edges per (page, column)."""


def classify_lines(lines: list[Line], body_size: float) -> Extents:
    """Set ``kind`` on every still unclassified line; return the column extents it measured."""
    extents = column_extents(lines)
    for line in lines:
        if line.kind == "text":
            left, right = extents[(line.page, line.column)]
            line.kind = classify(line, body_size, line.x0 - left, right - line.x1)
    reclaim_last_lines(lines, extents)
    absorb_display_lines(lines, extents)
    return extents


def column_extents(lines: list[Line]) -> Extents:
    """The left and right edges of the text in every (page, column)."""
    extents: Extents = {}
    for line in lines:
        left, right = extents.get((line.page, line.column), (line.x0, line.x1))
        extents[(line.page, line.column)] = (min(left, line.x0), max(right, line.x1))
    return extents


def classify(line: Line, body_size: float, indent: float, short_by: float = 0.0) -> str:
    """``heading``, ``equation``, ``fragment`` (stray sub/superscripts) or ``text``.

    ``indent`` is the line's distance from the column's left margin, ``short_by`` from its right edge.
    """
    text = line.text.strip()
    if is_heading(line, body_size):
        return "heading"
    if line.size < body_size - 1.5 and len(text) <= 15 and (line.math >= 0.5 or not PROSE_WORD.search(text)):
        return "fragment"
    if is_equation(line, flush=indent < line.size) and not _justified(line, indent, short_by):
        return "equation"
    return "text"


def is_heading(line: Line, body_size: float) -> bool:
    """Numbered or known section titles set bold or larger than the body; a bare 'Abstract'/'References' too."""
    text = line.text.strip()
    if KNOWN_HEADING.match(text.rstrip(".:")) and len(text) < 20:
        return True
    if len(text) > 100 or len(text.split()) > 14 or text.endswith((".", ",", ";")) or line.math > 0.3:
        return False
    if line.size < body_size - 0.3 or not (line.bold or line.size >= body_size + 0.8):
        return False
    return bool(NUMBERED_HEADING.match(text)) or (text[:1].isupper() and len(text.split()) <= 10)


def is_equation(line: Line, flush: bool = False) -> bool:
    """A display equation: math fonts or math symbols dominate, few prose words, or an '(n)' number.

    A ``flush`` line (starting at the column margin) with a prose word is the end of a paragraph with inline math.
    """
    text = line.text.strip()
    compact = text.replace(" ", "")
    if not compact or len(text) > 200:
        return False
    density = sum(ch in MATH_CHARS for ch in compact) / len(compact)
    prose = len(PROSE_WORD.findall(text))
    if EQUATION_NUMBER.search(text) and (line.math >= 0.15 or density >= 0.15) and prose <= 6:
        return True
    return prose <= (0 if flush else 2) and len(compact) >= 3 and (line.math >= 0.5 or density >= 0.3)


def _justified(line: Line, indent: float, short_by: float) -> bool:
    """A line in text fonts that runs from the margin (or a paragraph indent) to the right edge.

    That is a line of a justified paragraph, however many symbols it holds (formulas written inline, code, a
    formula's source); a display equation is set apart and in math fonts.
    """
    return line.math < 0.15 and indent < 2 * line.size and short_by < 0.5 * line.size


def reclaim_last_lines(lines: list[Line], extents: Extents) -> None:
    """A symbol-heavy line flush at the margin right under a justified text line ends that paragraph.

    It is set as the paragraph's last line (its end, '... + b_c)$$ (Eq. 6)'), not apart as a display
    equation, which stands off the margin and below a wider gap.
    """
    for above, line in zip(lines, lines[1:], strict=False):
        if line.kind != "equation" or above.kind != "text" or (above.page, above.column) != (line.page, line.column):
            continue
        left, right = extents[(line.page, line.column)]
        close = 0 <= line.top - above.bottom < 0.5 * line.height
        if close and line.math < 0.15 and line.x0 - left < 0.5 * line.size and right - above.x1 < 0.5 * line.size:
            line.kind = "text"


def absorb_display_lines(lines: list[Line], extents: Extents) -> None:
    """Short, indented lines next to an equation are part of it (cases, 'such that' rows, a lone '(5)')."""
    changed = True
    while changed:
        changed = False
        for index, line in enumerate(lines):
            if (
                line.kind != "text"
                or len(line.text) > 60
                or line.x0 - extents[(line.page, line.column)][0] < 3 * line.size
            ):
                continue
            neighbours = [lines[j] for j in (index - 1, index + 1) if 0 <= j < len(lines)]
            if any(
                n.kind == "equation" and n.page == line.page and _vertical_gap(n, line) < 1.2 * line.height
                for n in neighbours
            ):
                line.kind, changed = "equation", True


def _vertical_gap(a: Line, b: Line) -> float:
    return max(a.top - b.bottom, b.top - a.bottom)


FOOTNOTE_ZONE = 0.5
"""Footnotes sit in the lower part of a page: below this share of its height."""
FOOTNOTE_MARK = re.compile(r"^(?:\d{1,2}|[∗*†‡§¶⋆])\s*\S")
"""How a footnote starts: its number or symbol ('1 https://...', '∗Equal contribution')."""


def mark_footnotes(lines: list[Line], body_size: float, pages: dict[int, tuple[float, list]]) -> None:
    """Mark footnotes: the run of small text lines at the foot of a column under a rule or a footnote mark.

    ``pages`` maps a page number to its height and horizontal rules ``(x0, x1, y)``. In every (page,
    column) with body text above it, the text lines at the bottom set at least a point smaller than the
    body, in the lower half of the page and no taller than a third of it, become ``footnote`` lines when
    the first of them starts with a mark or sits under a rule (LaTeX's footnote rule). The structure step
    keeps them out of the paragraphs they interrupt and makes them blocks of their own.
    """
    groups: dict[tuple[int, int], list[Line]] = {}
    for line in lines:
        groups.setdefault((line.page, line.column), []).append(line)
    for (page, _), group in groups.items():
        height, rules = pages.get(page, (792.0, []))
        ordered = sorted(group, key=lambda line: line.top, reverse=True)
        foot: list[Line] = []
        for line in ordered:
            small = line.kind == "text" and line.size <= body_size - 1.0
            if not small or line.top < FOOTNOTE_ZONE * height:
                break
            foot.append(line)
        body_above = any(line.kind == "text" and abs(line.size - body_size) < 0.5 for line in ordered[len(foot) :])
        if not foot or not body_above or foot[0].bottom - foot[-1].top > height / 3:
            continue
        first = foot[-1]
        ruled = any(
            0 <= first.top - y < 2.5 * first.height and x0 - 3 <= first.x0 and x1 > first.x0 for x0, x1, y in rules
        )
        if ruled or FOOTNOTE_MARK.match(first.text):
            for line in foot:
                line.kind = "footnote"
