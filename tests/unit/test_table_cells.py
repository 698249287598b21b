"""Table blocks read back as cells (caption, header, rows), so a citation can name table, row and column."""

from __future__ import annotations

import pytest
from fpdf import FPDF

from lit3r.corpus.parsers.pdf import parse_pdf
from lit3r.corpus.tables import read_table

HEADER = ["Method", "Recall@10", "MRR"]
ROWS = [["BM25", "61.2", "0.41"], ["Dense retrieval", "70.4", "0.52"], ["Hybrid RRF", "74.9", "0.57"]]


def test_read_table_names_rows_and_columns() -> None:
    table = read_table("Table 2: Retrieval results.\nMethod | Recall@10 | MRR\nBM25 | 61.2 | 0.41\nDPR | 70.4 | 0.52")
    assert table.label == "Table 2" and table.header == HEADER
    assert table.cell(2, "MRR") == "0.52" and table.cell(1, 1) == "BM25"
    assert table.cell(3, "MRR") is None and table.cell(1, "F1") is None
    assert table.locate("70.4") == [(2, "Recall@10")]


@pytest.mark.parametrize("style", ["ruled", "booktabs"])
def test_a_rendered_table_keeps_its_cells(tmp_path, style: str) -> None:
    pdf = FPDF(unit="pt", format="letter")
    pdf.add_page()
    pdf.set_font("Times", "", 10)
    pdf.set_xy(72, 72)
    pdf.multi_cell(460, 13, "We compare three retrieval systems on the same questions. " * 6)
    pdf.set_xy(72, 200)
    pdf.cell(0, 12, "Table 1: Retrieval results on the test questions.")
    widths, top = [150, 90, 90], 220
    for r, row in enumerate([HEADER, *ROWS]):
        x = 72
        for width, text in zip(widths, row, strict=True):
            pdf.set_xy(x, top + 16 * r)
            pdf.cell(width, 16, text, border=1 if style == "ruled" else 0)
            x += width
    if style == "booktabs":
        for y in (top, top + 16, top + 16 * (len(ROWS) + 1)):
            pdf.line(72, y, 72 + sum(widths), y)
    pdf.set_xy(72, 300)
    pdf.multi_cell(460, 13, "The hybrid system is the best on both measures in this comparison. " * 5)
    path = tmp_path / f"{style}.pdf"
    pdf.output(str(path))
    [parsed] = parse_pdf(path)
    [block] = [b for b in parsed.blocks if b.type == "table"]
    table = read_table(block.text)
    assert table.label == "Table 1"
    assert table.header == HEADER and table.rows == ROWS
    assert table.cell(2, "Recall@10") == "70.4"
