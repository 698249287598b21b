"""Superscript reference and footnote marks stay out of PDF text; exponents stay in it."""

from __future__ import annotations

from pathlib import Path

import pytest
from fpdf import FPDF

from lit3r.corpus.parsers.pdf import parse_pdf
from lit3r.corpus.parsers.pdf_backends import Word
from lit3r.corpus.parsers.pdf_layout import Line, drop_reference_marks, page_lines

from conftest import shared


def _superscripted_pdf(path: Path) -> Path:
    """Body text with citation marks set as superscripts (smaller and raised), and one exponent."""
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 16)
    pdf.cell(0, 10, "Superscript Marks In Text", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Times", "", 11)
    for text, raised in [
        ("Deep learning has been applied from drug discovery.", False),
        ("120", True),
        (" Small molecule permeability was measured on 10", False),
        ("5", True),
        (" compounds, as Miller", False),
        ("25", True),
        (" defines it, in several studies.", False),
        ("3,4", True),
        (" The end.", False),
    ]:
        pdf.char_vpos = "SUP" if raised else "LINE"
        pdf.write(6, text)
    pdf.output(str(path))
    return path


def test_citation_marks_are_dropped_and_exponents_of_ten_kept(tmp_path: Path) -> None:
    [parsed] = parse_pdf(_superscripted_pdf(tmp_path / "marks.pdf"), isolate=False)
    assert [b.text for b in parsed.blocks] == [
        "Deep learning has been applied from drug discovery. Small molecule permeability was measured on "
        "10^5 compounds, as Miller defines it, in several studies. The end."
    ]


def _word(text: str, x0: float, x1: float, size: float = 10.0, raised: bool = False, font: str = "Times") -> Word:
    top, bottom = (9.0, 16.0) if raised else (10.0, 20.0)
    return Word(text, x0, x1, top, bottom, size if not raised else 0.7 * size, font)


@pytest.mark.parametrize(
    ("words", "text"),
    [
        ([_word("al.", 0, 12), _word("9,28", 12.5, 20, raised=True), _word("show", 23, 40)], "al. show"),
        ([_word("12", 0, 6, raised=True), _word("Footnote", 6.5, 40)], "Footnote"),  # a mark that opens a row
        ([_word("mc", 0, 10, font="CMMI10"), _word("2", 10, 14, raised=True, font="CMR7")], "mc2"),  # math
        (
            [
                _word("(x", 0, 8),
                _word("+", 10, 14, font="CMSY10"),
                _word("a)", 16, 24),
                _word("2", 24, 27, raised=True),
            ],
            "(x + a)2",
        ),
        ([_word("2023", 0, 20), _word("1", 20, 23, raised=True), _word(",", 23, 25)], "20231,"),  # not a mark
        ([_word("×10", 0, 15), _word("−3", 15, 22, raised=True)], "×10^−3"),
        ([_word("Table", 0, 20), _word("3", 30, 34, raised=True)], "Table 3"),  # too far to be its mark
        ([_word("word", 0, 20), _word("12", 20.5, 27)], "word12"),  # same size, not raised
        ([_word("12", 0, 6, raised=True)], "12"),  # nothing but a mark: kept, the structure step drops it
    ],
)
def test_marks_exponents_and_plain_words(words: list[Word], text: str) -> None:
    assert Line(drop_reference_marks(words), 1).text == text


def test_no_gap_opens_where_a_mark_was() -> None:
    """Table detection splits cells at wide gaps; the word before a dropped mark takes its place."""
    kept = drop_reference_marks([_word("al.", 0, 12), _word("132", 12.5, 24, raised=True), _word(".", 24.5, 26)])
    assert [(w.text, w.x1) for w in kept] == [("al.", 24), (".", 26)]


@pytest.mark.shared_data
def test_real_paper_citation_numbers_do_not_read_as_text() -> None:
    """'... discovery.¹²⁰ Small molecule ...' on page 15 of the shared molecular-prediction paper (read alone)."""
    import pdfplumber

    from lit3r.corpus.parsers.pdf_backends import _plumber_page

    with pdfplumber.open(shared("pdfs", "explanations-molecular-prediction-models.pdf")) as pdf:
        pages = {number: _plumber_page(pdf.pages[number - 1]) for number in (2, 15)}
    text = {number: " ".join(line.text for line in page_lines(page)) for number, page in pages.items()}
    assert "discovery. Small molecule blood-brain barrier" in text[15] and "120" not in text[15].split()
    assert "non-linear structure-function relationships. Applications of DL" in text[2]
    assert "drug discovery to materials design. According to" in text[2]
