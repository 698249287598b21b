"""PDF parser: a two-page paper built with fpdf2, damaged files, and the shared real PDFs."""

from __future__ import annotations

import importlib.util
import time
from collections import Counter
from pathlib import Path

import pytest
from fpdf import FPDF

from lit3r.corpus.parsers import ParseError, parser_for
from lit3r.corpus.parsers.pdf import parse_pdf
from lit3r.corpus.parsers.pdf_backends import read_pdf
from lit3r.models import ParsedPaper

SHARED_PDFS = Path(__file__).parents[2] / ".." / "shared" / "data" / "pdfs"
HAS_PYMUPDF = importlib.util.find_spec("pymupdf") is not None


class _Paper(FPDF):
    def footer(self) -> None:  # a bare page number, which the parser must drop
        self.set_y(-15)
        self.set_font("Times", "", 9)
        self.cell(0, 10, str(self.page_no()), align="C")


def _heading(pdf: FPDF, text: str) -> None:
    pdf.set_font("Helvetica", "B", 12)
    pdf.ln(3)
    pdf.cell(0, 8, text, new_x="LMARGIN", new_y="NEXT")


def _lines(pdf: FPDF, lines: list[str], size: float = 11) -> None:
    pdf.set_font("Times", "", size)
    for line in lines:
        pdf.cell(0, 5.5, line, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)


def build_paper(path: Path) -> Path:
    """A two-page paper: title, authors, abstract, two numbered sections, table, equation, figure, references."""
    pdf = _Paper()
    pdf.set_auto_page_break(auto=False)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 18)
    pdf.cell(0, 10, "Sparse Retrieval for Scientific Papers", align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Times", "", 12)
    pdf.cell(0, 7, "Ada Lovelace, Alan Turing", align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.cell(0, 7, "University of Analytical Engines", align="C", new_x="LMARGIN", new_y="NEXT")
    _heading(pdf, "Abstract")
    _lines(
        pdf,
        [
            "We study sparse retrieval over scientific papers and show that a tuned lexical model",
            "is a strong baseline for question answering with traceable citations.",
        ],
    )
    _heading(pdf, "1 Introduction")
    _lines(
        pdf,
        [
            "Question answering over papers needs a retrie-",
            "val step that finds the right passages quickly;",
            "we revisit the classic lexical approach here.",
        ],
    )
    _lines(pdf, ["Our contributions are a clean evaluation and a set of ablations on term weighting."])
    _lines(pdf, ["Table 1: Retrieval quality on the test set."], size=10)
    with pdf.table(width=100, col_widths=(60, 40), align="LEFT") as table:
        for values in (("Model", "Recall"), ("BM25", "0.412"), ("SPLADE", "0.587")):
            row = table.row()
            for value in values:
                row.cell(value)
    pdf.ln(4)
    _lines(pdf, ["The table shows that learned sparse weights help on every query type we tried."])
    pdf.add_page()
    _heading(pdf, "2 Method")
    _lines(pdf, ["We score a document d for a query q by summing the weights of the shared terms."])
    pdf.set_font("Times", "", 11)
    pdf.cell(0, 8, "s(q, d) = w(t) * idf(t) + b          (1)", align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.rect(60, pdf.get_y() + 2, 90, 30)  # the "figure"
    pdf.set_y(pdf.get_y() + 34)
    pdf.set_font("Times", "", 10)
    pdf.cell(0, 6, "Figure 1: Overview of the retrieval pipeline.", align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)
    _lines(pdf, ["The pipeline indexes every paragraph once and answers each query in milliseconds."])
    _heading(pdf, "References")
    _lines(
        pdf,
        [
            "[1] A. Lovelace and A. Turing. Dense passage retrieval for papers. In Proceedings of",
            "ACL, 2023.",
            "[2] C. Babbage. Analytical engines revisited. arXiv, 2021.",
            "[3] G. Hopper. Compilers for everyone. Journal of Code, 2019.",
        ],
        size=10,
    )
    pdf.output(str(path))
    return path


@pytest.fixture(scope="module")
def sample_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_paper(tmp_path_factory.mktemp("pdf") / "Sparse Retrieval (v2).pdf")


@pytest.fixture(scope="module")
def parsed(sample_pdf: Path) -> ParsedPaper:
    [paper] = parse_pdf(sample_pdf)  # default: pdfplumber in the time-limited child process
    return paper


def test_front_matter(parsed: ParsedPaper, sample_pdf: Path) -> None:
    paper = parsed.paper
    assert paper.id == "sparse-retrieval-v2"
    assert paper.title == "Sparse Retrieval for Scientific Papers"
    assert paper.authors == ["Ada Lovelace", "Alan Turing"]
    assert paper.abstract.startswith("We study sparse retrieval") and paper.abstract.endswith("traceable citations.")
    assert paper.source == str(sample_pdf) and paper.source_format == "pdf"


def test_sections_pages_and_paragraphs(parsed: ParsedPaper) -> None:
    text_blocks = [b for b in parsed.blocks if b.type == "text"]
    assert [b.section for b in text_blocks] == ["1 Introduction"] * 3 + ["2 Method"] * 2
    assert [b.page for b in text_blocks] == [1, 1, 1, 2, 2]
    first = text_blocks[0].text
    assert "a retrieval step that finds the right passages quickly; we revisit" in first  # lines joined, de-hyphenated
    assert not any(b.text.strip() in {"1", "2"} for b in parsed.blocks)  # page numbers dropped


def test_table_block_without_duplicated_text(parsed: ParsedPaper) -> None:
    [table] = [b for b in parsed.blocks if b.type == "table"]
    assert table.object_id == "Table 1" and table.page == 1 and table.section == "1 Introduction"
    assert table.text.splitlines() == [
        "Table 1: Retrieval quality on the test set.",
        "Model | Recall",
        "BM25 | 0.412",
        "SPLADE | 0.587",
    ]
    others = " ".join(b.text for b in parsed.blocks if b.type != "table")
    assert "0.412" not in others and "SPLADE" not in others and "Retrieval quality" not in others


def test_figure_and_equation_blocks(parsed: ParsedPaper) -> None:
    [figure] = [b for b in parsed.blocks if b.type == "figure"]
    assert (figure.object_id, figure.page, figure.text) == (
        "Figure 1",
        2,
        "Figure 1: Overview of the retrieval pipeline.",
    )
    [equation] = [b for b in parsed.blocks if b.type == "equation"]
    assert equation.text == "s(q, d) = w(t) * idf(t) + b (1)" and equation.section == "2 Method"


def test_references_go_to_the_paper_not_the_body(parsed: ParsedPaper) -> None:
    refs = parsed.paper.references
    assert [r.title for r in refs] == [
        "Dense passage retrieval for papers",
        "Analytical engines revisited",
        "Compilers for everyone",
    ]
    assert [r.year for r in refs] == [2023, 2021, 2019]
    assert refs[0].authors == ["A. Lovelace", "A. Turing"]
    assert refs[0].raw.endswith("In Proceedings of ACL, 2023.")  # the wrapped line is part of the entry
    assert not any("Analytical engines" in b.text or b.section == "References" for b in parsed.blocks)


def test_spans_index_the_canonical_text(parsed: ParsedPaper) -> None:
    canonical = parsed.canonical_text()
    assert all(canonical[b.char_start : b.char_end] == b.text for b in parsed.blocks)


def test_registry_picks_the_pdf_parser(sample_pdf: Path) -> None:
    assert parser_for(sample_pdf) is parse_pdf


@pytest.mark.skipif(not HAS_PYMUPDF, reason="the optional pymupdf extra is not installed")
def test_pymupdf_backend_gives_the_same_structure(sample_pdf: Path, parsed: ParsedPaper, monkeypatch) -> None:
    monkeypatch.setenv("LIT3R_PDF_BACKEND", "pymupdf")
    [other] = parse_pdf(sample_pdf, isolate=False)
    assert other.paper.title == parsed.paper.title and other.paper.abstract == parsed.paper.abstract
    assert [(b.type, b.section, b.page, b.object_id) for b in other.blocks] == [
        (b.type, b.section, b.page, b.object_id) for b in parsed.blocks
    ]
    assert [r.title for r in other.paper.references] == [r.title for r in parsed.paper.references]


def test_unknown_backend_is_rejected(sample_pdf: Path) -> None:
    with pytest.raises(ValueError, match="unknown PDF backend"):
        parse_pdf(sample_pdf, backend="poppler")


# --- files that cannot be parsed ----------------------------------------------------------------


def _expect_parse_error(path: Path, match: str, isolate: bool = False) -> None:
    with pytest.raises(ParseError, match=match) as caught:
        parse_pdf(path, isolate=isolate)
    assert caught.value.path == str(path) and str(path) in str(caught.value)


def test_empty_and_non_pdf_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    _expect_parse_error(empty, "empty")
    html = tmp_path / "page.pdf"
    html.write_text("<html>not a pdf</html>")
    _expect_parse_error(html, "not a PDF")


def test_truncated_pdf(tmp_path: Path, sample_pdf: Path) -> None:
    truncated = tmp_path / "truncated.pdf"
    data = sample_pdf.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    _expect_parse_error(truncated, "truncated")


def test_random_bytes_behind_a_pdf_header(tmp_path: Path) -> None:
    garbage = bytes(range(256)) * 40
    no_trailer = tmp_path / "garbage.pdf"
    no_trailer.write_bytes(b"%PDF-1.7\n" + garbage)
    _expect_parse_error(no_trailer, "truncated")
    with_trailer = tmp_path / "garbage-eof.pdf"
    with_trailer.write_bytes(b"%PDF-1.7\n" + garbage + b"\n%%EOF\n")
    _expect_parse_error(with_trailer, "damaged or unreadable PDF", isolate=True)  # through the child process


def test_encrypted_pdf(tmp_path: Path) -> None:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.cell(0, 10, "Secret text that needs a password to read.")
    pdf.set_encryption(owner_password="owner", user_password="secret")
    path = tmp_path / "locked.pdf"
    pdf.output(str(path))
    _expect_parse_error(path, "encrypted")


def test_pdf_without_text(tmp_path: Path) -> None:
    pdf = FPDF()
    pdf.add_page()
    pdf.rect(20, 20, 100, 100)  # like a scan: marks on the page, no text layer
    path = tmp_path / "scan.pdf"
    pdf.output(str(path))
    _expect_parse_error(path, "no extractable text")


def test_reading_is_time_limited(sample_pdf: Path) -> None:
    started = time.monotonic()
    with pytest.raises(ParseError, match="took longer than"):
        read_pdf(sample_pdf, timeout=0.01)
    assert time.monotonic() - started < 10


# --- the shared real PDFs -----------------------------------------------------------------------

REAL = {
    "explanations-molecular-prediction-models.pdf": (
        "A Perspective on Explanations of Molecular Prediction Models",
        41,
    ),
    "pasa-llm-agent-paper-search.pdf": ("PaSa: An LLM Agent for Comprehensive Academic Paper Search", 15),
    "tables-equations-images-sample.pdf": ("SF Districts in the style of Andy Warhol", 5),
}


@pytest.fixture(scope="module")
def real_papers() -> dict[str, tuple[ParsedPaper, float]]:
    if not SHARED_PDFS.is_dir():
        pytest.skip(f"shared PDFs not found at {SHARED_PDFS}")
    results = {}
    for name in REAL:
        started = time.monotonic()
        [paper] = parse_pdf(SHARED_PDFS / name)
        results[name] = (paper, time.monotonic() - started)
    return results


@pytest.mark.shared_data
@pytest.mark.parametrize("name", sorted(REAL))
def test_real_pdf_front_matter_and_pages(real_papers, name: str) -> None:
    paper, seconds = real_papers[name]
    title, pages = REAL[name]
    assert paper.paper.title == title
    pages_with_blocks = {b.page for b in paper.blocks}
    assert pages_with_blocks <= set(range(1, pages + 1)) and len(pages_with_blocks) >= pages / 2
    assert seconds < 120


@pytest.mark.shared_data
@pytest.mark.parametrize(
    ("name", "sections", "references"),
    [
        (
            "explanations-molecular-prediction-models.pdf",
            {"Introduction", "Theory", "Counterfactual explanations"},
            140,
        ),
        ("pasa-llm-agent-paper-search.pdf", {"1 Introduction", "4.2 Crawler", "5.3 Main results", "6 Conclusion"}, 30),
    ],
)
def test_real_arxiv_papers(real_papers, name: str, sections: set[str], references: int) -> None:
    paper, _ = real_papers[name]
    found = {b.section for b in paper.blocks}
    assert sections <= found and len(found) >= 10
    assert len(paper.paper.abstract.split()) > 100
    assert len(paper.paper.references) >= references
    titled = [r for r in paper.paper.references if r.title and r.year]
    assert len(titled) >= 0.9 * len(paper.paper.references)
    assert not any(b.section and "reference" in b.section.lower() for b in paper.blocks)


@pytest.mark.shared_data
def test_real_pasa_tables_and_equations(real_papers) -> None:
    paper, _ = real_papers["pasa-llm-agent-paper-search.pdf"]
    tables = {b.object_id: b for b in paper.blocks if b.type == "table"}
    assert {f"Table {n}" for n in range(1, 17)} <= set(tables)
    assert "PaSa-7b | 0.7931 | 0.1448" in tables["Table 5"].text
    body = " ".join(b.text for b in paper.blocks if b.type == "text")
    assert "0.7931" not in body and "1948 11761" not in body  # table cells are not repeated as text
    equations = [b.text for b in paper.blocks if b.type == "equation"]
    assert {n for n in range(1, 9) if any(f"({n})" in text for text in equations)} == set(range(1, 9))
    assert Counter(b.type for b in paper.blocks)["figure"] == 3


@pytest.mark.shared_data
def test_real_sample_tables_without_captions(real_papers) -> None:
    paper, _ = real_papers["tables-equations-images-sample.pdf"]
    tables = [b for b in paper.blocks if b.type == "table"]
    assert [b.page for b in tables] == [1, 2, 3, 4, 5]
    assert all(b.text == "Col1 | Col2\nVal11 | Val12\nVal21 | Val11" for b in tables)
    assert not any("Val12" in b.text for b in paper.blocks if b.type == "text")
