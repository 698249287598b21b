"""The direction a table states about a claim: the rows naming what the claim is about, against the table's first
row, in the column the claim names ("+ verification, one round | 0.62" against "Retrieve and answer | 0.61" in the
"Accuracy" column: accuracy rises with verification).

A table chunk is a caption line, then rows of cells split by `` | `` (:func:`lit3r.corpus.tables.read_table`).
The claim check (:mod:`lit3r.grounding.stance`) reads each body row as a sentence; this module gives such a row
the direction its value takes from the first row's, so "The verification step decreases answer accuracy." meets the
rows that say it rises. Nothing here reads a model: cells are numbers or they are not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lit3r.answers.sentences import cell_number
from lit3r.corpus.tables import read_table
from lit3r.grounding.lexicon import content_stems
from lit3r.grounding.stance_features import Text


@dataclass(frozen=True)
class TableRow:
    """A body row of a table chunk: its line (as the chunk has it), its cells, and its table's header and caption."""

    line: str
    cells: tuple[str, ...]
    header: tuple[str, ...]
    caption: str
    baseline: tuple[str, ...]
    """The table's first body row, which the others are compared with."""


def table_rows(text: str) -> list[TableRow]:
    """The body rows of ``text`` when it is a table chunk's (:func:`lit3r.corpus.tables.read_table`: a caption, a
    header row and at least two body rows of ``a | b`` cells), else []."""
    if " | " not in text:
        return []
    table = read_table(text)
    lines = [line for line in text.split("\n") if line.strip()]
    body = lines[len(lines) - len(table.rows) :]
    if len(table.rows) < 2 or not table.header:
        return []
    header, baseline = tuple(table.header), tuple(table.rows[0])
    return [
        TableRow(line, tuple(cells), header, table.caption, baseline)
        for line, cells in zip(body, table.rows, strict=True)
    ]


def row_direction(claim: Text, row: TableRow) -> int:
    """+1 or -1 when the row names what the claim is about (its first cell holds a claim word the first row's
    lacks) and, in the column whose header holds a claim word, its value is above or below the first row's; 0
    otherwise (the first row itself, no such column, cells without numbers, equal values)."""
    if row.cells == row.baseline or len(row.cells) != len(row.header) or len(row.baseline) != len(row.header):
        return 0
    named = content_stems(row.cells[0]) - content_stems(row.baseline[0])
    if not claim.stems & named:
        return 0
    columns = [j for j in range(1, len(row.header)) if claim.stems & content_stems(row.header[j])]
    if len(columns) != 1:
        return 0
    value, base = cell_number(row.cells[columns[0]]), cell_number(row.baseline[columns[0]])
    if value is None or base is None or value == base:
        return 0
    return 1 if value > base else -1


def row_context(row: TableRow) -> str:
    """What a row is read with besides its own cells: its table's caption and header."""
    return " ".join([row.caption, " | ".join(row.header)]).strip()


def rows_by_line(passages: Sequence[tuple[str, str]]) -> dict[tuple[str, str], TableRow]:
    """Every table body row of ``(chunk_id, text)`` passages by its chunk id and line (two tables may share a line)."""
    return {(chunk_id, row.line): row for chunk_id, text in passages for row in table_rows(text)}
