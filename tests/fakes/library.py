"""Small real PDFs and HTML snapshots for the library tests, written with fpdf2 (a title the PDF shows that the
library corrects, a DOI or arXiv stamp on page 1, a few paragraphs a question can find)."""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF


def write_paper_pdf(path: Path, title: str, authors: str, paragraphs: list[str], stamp: str = "") -> Path:
    """A one-page paper: title, author line, optional stamp line (e.g. 'arXiv:2401.01234v2 [cs.CL]'), abstract
    and an introduction of ``paragraphs``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 16)
    pdf.multi_cell(0, 9, title, align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Times", "", 12)
    pdf.cell(0, 7, authors, align="C", new_x="LMARGIN", new_y="NEXT")
    if stamp:
        pdf.set_font("Times", "", 9)
        pdf.cell(0, 6, stamp, align="C", new_x="LMARGIN", new_y="NEXT")
    for heading, texts in (("Abstract", paragraphs[:1]), ("1 Introduction", paragraphs[1:])):
        pdf.set_font("Helvetica", "B", 12)
        pdf.ln(3)
        pdf.cell(0, 8, heading, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Times", "", 11)
        for text in texts:
            pdf.multi_cell(0, 5.5, text, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
    pdf.output(str(path))
    return path


def write_snapshot(path: Path, title: str, paragraphs: list[str]) -> Path:
    """A saved web page: navigation and a script that must not be read, a heading, paragraphs and a table."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    path.write_text(
        f"<html><head><title>{title}</title><script>var tracker = 'ignore me';</script></head><body>"
        f"<nav><a href='/'>Home</a> <a href='/login'>Log in</a></nav><h1>{title}</h1><h2>Abstract</h2>{body[:0]}"
        f"<p>{paragraphs[0]}</p><h2>Results</h2>{''.join(f'<p>{p}</p>' for p in paragraphs[1:])}"
        "<table><caption>Table 1: Scores.</caption><tr><th>Model</th><th>F1</th></tr><tr><td>Ours</td><td>0.61</td>"
        "</tr></table><h2>References</h2><ol><li>A. Lovelace. Notes on the analytical engine. Engines, 1998.</li></ol>"
        "<footer>Copyright notice</footer></body></html>",
        encoding="utf-8",
    )
    return path
