"""A table block's cells: its caption, header row and body rows, read back from the block's text.

Table blocks of every parser are written the same way: the caption on the first line, then one line
per row with the cells separated by ``" | "`` (see :mod:`lit3r.corpus.parsers.pdf_floats`). This module
reads that back so that a citation can name a table, a row and a column, and a reader can quote one
cell: ``table.cell(2, "MRR")`` is the MRR of the second body row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

CAPTION_ID = re.compile(r"^(?P<kind>Table|TABLE|Tab\.)\s*(?P<num>\d+|[IVX]+)\b")


@dataclass(frozen=True)
class Table:
    """The cells of one table block."""

    caption: str
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)

    @property
    def label(self) -> str | None:
        """'Table 3' when the caption names the table."""
        match = CAPTION_ID.match(self.caption)
        return f"Table {match.group('num')}" if match else None

    def cell(self, row: int, column: int | str) -> str | None:
        """The cell of body row ``row`` (1-based) in ``column`` (1-based index or header name), or None."""
        if isinstance(column, str):
            names = [name.casefold() for name in self.header]
            if column.casefold() not in names:
                return None
            column = names.index(column.casefold()) + 1
        if not (1 <= row <= len(self.rows) and 1 <= column <= len(self.rows[row - 1])):
            return None
        return self.rows[row - 1][column - 1]

    def locate(self, text: str) -> list[tuple[int, str]]:
        """``(row, column name)`` of every body cell whose text is ``text`` (white space and case folded)."""
        wanted = " ".join(text.split()).casefold()
        return [
            (r, self.header[c] if c < len(self.header) else str(c + 1))
            for r, row in enumerate(self.rows, 1)
            for c, value in enumerate(row)
            if " ".join(value.split()).casefold() == wanted
        ]


def read_table(text: str) -> Table:
    """The :class:`Table` of a table block's text (caption line, then ``a | b`` rows; the first is the header)."""
    lines = [line for line in text.split("\n") if line.strip()]
    if not lines:
        return Table("")
    caption, rows = (lines[0], lines[1:]) if " | " not in lines[0] else ("", lines)
    cells = [[" ".join(cell.split()) for cell in line.split(" | ")] for line in rows]
    return Table(caption.strip(), cells[0] if cells else [], cells[1:])
