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


def write_two_collections(folder: Path, doi: str | None = None) -> Path:
    """A .bib of two papers with their PDFs, one per collection: "Thesis" holds moraine2021radar (2021, Moraine
    and Firn; the tongue flows 182 metres per year; its ``doi`` when given), "Reading" serac2019model (2019, Serac;
    150 metres per year). Returns the .bib's path."""
    write_paper_pdf(folder / "pdfs" / "glacier.pdf", "Draft", "anon", [
        "We measure the surface flow of Alpine glaciers with satellite radar interferometry.",
        "The median surface velocity of the Aletsch glacier tongue was 182 metres per year, a fifth faster than "
        "stake measurements suggested."])  # fmt: skip
    write_paper_pdf(folder / "pdfs" / "glacier2.pdf", "Draft two", "anon", [
        "We model the Aletsch glacier tongue with a flow law tuned to borehole data.",
        "The modelled median surface velocity of the Aletsch glacier tongue was 150 metres per year."])  # fmt: skip
    bib = folder / "library.bib"
    bib.write_text(
        "@article{moraine2021radar, title = {Radar Interferometry of Alpine Glacier Flow},\n"
        " author = {Moraine, Ines and Firn, Tomas}, journal = {Journal of Glaciology}, year = 2021,\n"
        + (f" doi = {{{doi}}}," if doi else "")
        + " groups = {Thesis}, file = {:pdfs/glacier.pdf:PDF}}\n"
        "@article{serac2019model, title = {Modelling the Aletsch Glacier}, author = {Serac, Ana}, year = 2019,\n"
        " groups = {Reading}, file = {:pdfs/glacier2.pdf:PDF}}\n",
        encoding="utf-8",
    )
    return bib
