"""Floats on a PDF page: table regions (with their captions) and the text drawn inside figures.

A table is anchored on its caption ('Table 2: ...'). Its region is, in order
of preference, a ruled table pdfplumber/PyMuPDF found next to the caption, the
span of horizontal rules (booktabs style) on the caption's side, or the run of
cell-like lines there. A few uncaptioned ruled grids are found from stacked
rules of equal width. Every line inside a region is replaced by one ``table``
line whose text is the caption plus pipe-separated rows, so that table text
never reappears as paragraphs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lit3r.corpus.parsers.pdf_backends import PageData, RawTable
from lit3r.corpus.parsers.pdf_layout import Line, cluster_rows
from lit3r.corpus.textutil import join_lines

CAPTION = re.compile(r"^(?P<kind>Table|TABLE|Tab\.|Figure|FIGURE|Fig\.)\s*(?P<num>\d+|[IVX]+)\s*[:.|]")
NEAR = 40.0
"""Largest gap, in points, between a caption and the table it names."""


@dataclass
class Region:
    """A rectangle on a page."""

    x0: float
    top: float
    x1: float
    bottom: float

    def holds(self, line: Line) -> bool:
        """True when the line's middle lies inside the region."""
        middle_x, middle_y = (line.x0 + line.x1) / 2, (line.top + line.bottom) / 2
        return self.x0 - 2 <= middle_x <= self.x1 + 2 and self.top - 2 <= middle_y <= self.bottom + 2


def caption_of(line: Line) -> tuple[str, str] | None:
    """``("table" | "figure", "Table 2")`` when the line's text starts like a caption."""
    match = CAPTION.match(line.text)
    if not match:
        return None
    kind = "table" if match["kind"].lower().startswith("tab") else "figure"
    return kind, f"{kind.title()} {match['num']}"


def mark_captions(lines: list[Line]) -> None:
    """Mark caption lines (``kind="caption"``); 'Table 3.' wrapped to a line start inside a paragraph is not one."""
    for index, line in enumerate(lines):
        found = caption_of(line)
        if not found:
            continue
        previous = lines[index - 1] if index else None
        starts_block = (
            previous is None
            or previous.column != line.column
            or previous.kind != "text"
            or previous.text.rstrip().endswith((".", ":", "!", "?"))
            or line.top - previous.bottom > 0.5 * line.height
            or abs(previous.size - line.size) > 0.3
        )
        if starts_block:
            line.kind = "caption"
            line.extra.update(caption_kind=found[0], object_id=found[1])


def caption_lines(lines: list[Line], start: int) -> list[Line]:
    """The caption starting at ``lines[start]`` and the lines that continue it (same size, no paragraph gap)."""
    caption = [lines[start]]
    for line in lines[start + 1 : start + 10]:
        last = caption[-1]
        gap = line.top - last.bottom
        aligned = line.column == last.column or abs(line.x0 - caption[0].x0) < 2
        if not aligned or line.kind != "text" or abs(line.size - last.size) > 0.3 or not -2 < gap < 0.7 * last.height:
            break
        if line.x0 > caption[0].x0 + 0.8 * line.size or len(line.cells(1.2 * line.size)) > 1:  # indent / table row
            break
        caption.append(line)
    return caption


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0)) / max(1e-6, min(a1 - a0, b1 - b0))


def _raw_table_region(caption: list[Line], tables: list[RawTable]) -> tuple[Region, list[list[str]]] | None:
    top, bottom = caption[0].top, caption[-1].bottom
    for table in tables:
        x0, t_top, x1, t_bottom = table.bbox
        near = -2 < top - t_bottom < NEAR or -2 < t_top - bottom < NEAR
        filled = sum(1 for row in table.rows for cell in row if cell) >= 2
        if near and filled and _overlap(x0, x1, caption[0].x0, caption[0].x1) > 0.5:
            return Region(x0, t_top, x1, t_bottom), table.rows
    return None


def _rule_groups(caption: list[Line], page: PageData, lines: list[Line], body_size: float) -> dict[str, Region]:
    """Per side ('above', 'below'), the span of rules starting within NEAR of the caption.

    The span stops before another caption and before body text: two rules of one width with a paragraph of
    the body between them are the edges of two floats, not one table.
    """
    others = [line for line in lines if line.kind == "caption" and line not in caption]
    top, bottom = caption[0].top, caption[-1].bottom
    x0, x1 = min(c.x0 for c in caption), max(c.x1 for c in caption)
    rules = [r for r in page.rules if _overlap(r[0], r[1], x0, x1) > 0.6]
    sides = {
        "above": sorted((r for r in rules if r[2] < top + 2), key=lambda r: -r[2]),
        "below": sorted((r for r in rules if r[2] > bottom - 2), key=lambda r: r[2]),
    }
    groups = {}
    for side, ordered in sides.items():
        if not ordered or abs(ordered[0][2] - (top if side == "above" else bottom)) > NEAR:
            continue
        width = ordered[0][1] - ordered[0][0]
        chosen = [ordered[0]]
        for rule in ordered[1:]:
            low, high = sorted((chosen[-1][2], rule[2]))
            between = [line for line in lines if low < (line.top + line.bottom) / 2 < high]
            if any(o in between for o in others) or abs(rule[1] - rule[0] - width) > 0.5 * width:
                break
            if _body_text(between, rule[0], rule[1], body_size):
                break
            chosen.append(rule)
        if len(chosen) >= 2:
            ys = [r[2] for r in chosen]
            groups[side] = Region(min(r[0] for r in chosen), min(ys), max(r[1] for r in chosen), max(ys))
    return groups


def _body_text(lines: list[Line], x0: float, x1: float, body_size: float) -> bool:
    """Whether lines across ``x0``-``x1`` read as the body's running text: two or more at the body size, most
    of them one cell wide.

    Table rows split into cells at gaps of an em or more, a paragraph's words (even justified) rarely do; text
    inside a table (a prompt in a box) is set smaller than the body.
    """
    across = [
        line
        for line in lines
        if line.kind == "text" and abs(line.size - body_size) < 0.5 and _overlap(line.x0, line.x1, x0, x1) > 0.5
    ]
    single = sum(len(line.cells(line.size)) == 1 for line in across)
    return len(across) >= 2 and single > len(across) / 2


def _choose_rule_regions(candidates: list[dict[str, Region]], captions: list[list[Line]]) -> list[Region | None]:
    """One rule region per caption: a side claimed by a caption with no other choice goes to that caption."""
    claimed = [next(iter(c.values())) for c in candidates if len(c) == 1]
    chosen: list[Region | None] = []
    for groups, caption in zip(candidates, captions, strict=True):
        if len(groups) < 2:
            chosen.append(next(iter(groups.values()), None))
            continue
        free = [side for side, region in groups.items() if region not in claimed]
        gaps = {"above": caption[0].top - groups["above"].bottom, "below": groups["below"].top - caption[-1].bottom}
        side = free[0] if len(free) == 1 else min(gaps, key=lambda k: gaps[k])
        chosen.append(groups[side])
    return chosen


def _cell_run_region(caption: list[Line], lines: list[Line], body_size: float) -> Region | None:
    """Lines next to the caption that split into cells, when no rules mark the table."""
    best: list[Line] = []
    start, end = lines.index(caption[0]), lines.index(caption[-1])
    for step, first in ((-1, start - 1), (1, end + 1)):
        run, index = [], first
        while (
            0 <= index < len(lines) and _cell_like(lines[index], body_size) and lines[index].column == caption[0].column
        ):
            run.append(lines[index])
            index += step
        best = run if len(run) > len(best) else best
    if len(best) < 2:
        return None
    return Region(
        min(b.x0 for b in best), min(b.top for b in best), max(b.x1 for b in best), max(b.bottom for b in best)
    )


def _cell_like(line: Line, body_size: float) -> bool:
    """A table row: smaller than the body, or split into cells; at the body size by gaps of an em or more,
    wider than the spaces of a justified line."""
    if line.kind != "text":
        return False
    small = line.size < body_size - 1.0
    return small or len(line.cells(line.size if abs(line.size - body_size) < 0.5 else None)) >= 2


def _uncaptioned_regions(page: PageData, lines: list[Line], taken: list[Region]) -> list[tuple[Region, None]]:
    """Grids of three or more stacked rules of one width whose rows split into cells."""
    found = []
    by_extent: dict[tuple[int, int], list[float]] = {}
    for x0, x1, y in page.rules:
        by_extent.setdefault((round(x0), round(x1)), []).append(y)
    for (x0, x1), ys in by_extent.items():
        region = Region(x0, min(ys), x1, max(ys))
        inside = [line for line in lines if region.holds(line)]
        if len(ys) < 3 or region.bottom - region.top > 0.6 * page.height or len(inside) < 2:
            continue
        if any(line.kind == "caption" for line in inside) or any(
            _overlap(t.top, t.bottom, region.top, region.bottom) for t in taken
        ):
            continue
        if sum(len(line.cells()) >= 2 for line in inside) >= 0.6 * len(inside):
            found.append((region, None))
    return found


def render_rows(region: Region, lines: list[Line]) -> list[str]:
    """Pipe-separated rows from the words inside a region."""
    words = [w for line in lines if region.holds(line) for w in line.words]
    rows = [Line(row, 0) for row in cluster_rows(words)]
    return [" | ".join(row.cells()) for row in sorted(rows, key=lambda r: r.top)]


def replace_tables(page: PageData, lines: list[Line], body_size: float) -> list[Line]:
    """The page's lines with every table region and its caption replaced by a single ``table`` line."""
    mark_captions(lines)
    starts = [i for i, line in enumerate(lines) if line.kind == "caption"]
    table_starts = [i for i in starts if lines[i].extra["caption_kind"] == "table"]
    captions = [caption_lines(lines, i) for i in table_starts]
    raw = [_raw_table_region(caption, page.tables) for caption in captions]
    groups = [_rule_groups(c, page, lines, body_size) for c in captions]
    by_rules = _choose_rule_regions(groups, captions)
    anchors: list[tuple[Region | None, list[Line], list[list[str]] | None]] = []
    for caption, found, ruled in zip(captions, raw, by_rules, strict=True):
        region = found[0] if found else ruled or _cell_run_region(caption, lines, body_size)
        anchors.append((region, caption, found[1] if found else None))
    taken = [a[0] for a in anchors if a[0]]
    for region, _ in _uncaptioned_regions(page, lines, taken):
        anchors.append((region, [], None))
    return _apply(lines, anchors)


def _apply(lines: list[Line], anchors: list[tuple[Region | None, list[Line], list[list[str]] | None]]) -> list[Line]:
    """Swap each anchor's caption (or its region's first line) for a table line and drop the region's lines."""
    replaced: dict[int, Line] = {}
    dropped: set[int] = set()
    for region, caption, raw_rows in anchors:
        inside = [line for line in lines if region and region.holds(line) and line not in caption]
        if raw_rows is not None:
            rows = [" | ".join(cell for cell in row) for row in raw_rows if any(row)]
        else:
            rows = render_rows(region, lines) if region else []
        members = caption or inside[:1]
        if not members:
            continue
        table = Line(list(members[0].words), members[0].page, column=members[0].column, kind="table")
        table.text = "\n".join([join_lines([c.text for c in caption]), *rows]).strip()
        table.extra["object_id"] = caption[0].extra.get("object_id", "") if caption else ""
        replaced[id(members[0])] = table
        dropped.update(id(line) for line in [*caption, *inside])
    result = []
    for line in lines:
        if id(line) in replaced:
            result.append(replaced[id(line)])
        elif id(line) not in dropped:
            result.append(line)
    return result


def drop_figure_text(lines: list[Line], body_size: float, body_font: str) -> list[Line]:
    """Remove text drawn inside figures: small or foreign-font lines just above a figure caption.

    The lines of another caption are never figure text: a figure stacked under another float has that
    float's caption (set as small as figure labels) just above it.
    """
    captions = {
        id(c) for index, line in enumerate(lines) if line.kind == "caption" for c in caption_lines(lines, index)
    }
    dropped: set[int] = set()
    for index, line in enumerate(lines):
        if line.kind != "caption" or line.extra["caption_kind"] != "figure":
            continue
        above = sorted(
            (
                o
                for o in lines[:index]
                if o.page == line.page and o.bottom <= line.top + 1 and _overlap(o.x0, o.x1, line.x0, line.x1) > 0
            ),
            key=lambda o: -o.top,
        )
        for other in above:
            if other.kind != "text" or (abs(other.size - body_size) <= 0.6 and other.font == body_font):
                break
            if id(other) in captions:
                break
            dropped.add(id(other))
    return [line for line in lines if id(line) not in dropped]
