"""A quote of a table names its row only when one body row holds it: a value that several rows hold names none
(which row the reader meant is not known). Every reader names its cells itself (test_reader_tables.py,
test_compact_reader.py)."""

from __future__ import annotations

from lit3r.models import Chunk, Locator, TableCell
from lit3r.reading.tables import quote_cell

TABLE = Chunk(
    id="p::c0006",
    paper_id="p",
    type="table",
    text="Table 1: Paper-level recall at 10.\nMethod | Recall@10 | Latency (ms)\nBM25 | 0.44 | 12\n"
    "Dense encoder | 0.55 | 40\nReciprocal rank fusion (k = 60) | 0.63 | 40",
    locator=Locator(section="3 Results", object_id="Table 1"),
)


def test_a_value_several_rows_hold_names_no_row_a_value_one_row_holds_names_its_cell() -> None:
    assert quote_cell(TABLE, "40") is None
    assert quote_cell(TABLE, "0.55") == TableCell(
        table="Table 1", row=2, row_label="Dense encoder", column="Recall@10", value="0.55"
    )


def test_a_row_quoted_with_other_spacing_still_names_its_row() -> None:
    assert quote_cell(TABLE, "Dense  encoder |  0.55") == TableCell(table="Table 1", row=2, row_label="Dense encoder")
