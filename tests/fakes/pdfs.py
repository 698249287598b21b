"""A two-page PDF paper written with fpdf2 for the server's page-image tests: glacier radar measurements, a topic no
demo paper has, so a question about it cites this paper; its key sentences are wrapped over several lines (one
hyphenated) on page 2."""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF

TITLE = "Radar Interferometry of Alpine Glacier Flow"
QUESTION = "What was the median surface velocity of the Aletsch glacier tongue?"
ANSWER_WORDS = ("182 metres per year",)
"""Words the cited passage holds."""


def _heading(pdf: FPDF, text: str) -> None:
    pdf.set_font("Helvetica", "B", 12)
    pdf.ln(3)
    pdf.cell(0, 8, text, new_x="LMARGIN", new_y="NEXT")


def _lines(pdf: FPDF, lines: list[str]) -> None:
    pdf.set_font("Times", "", 11)
    for line in lines:
        pdf.cell(0, 5.5, line, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)


def write_glacier_pdf(path: Path) -> Path:
    """Write the paper to ``path`` (its folder is made) and return it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf = FPDF()
    pdf.set_auto_page_break(auto=False)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 18)
    pdf.cell(0, 10, TITLE, align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Times", "", 12)
    pdf.cell(0, 7, "Ines Moraine, Tomas Firn", align="C", new_x="LMARGIN", new_y="NEXT")
    _heading(pdf, "Abstract")
    _lines(
        pdf,
        [
            "We measure the surface flow of three Alpine glaciers with satellite radar interferometry",
            "and compare the velocities with stakes drilled into the ice during two summers.",
        ],
    )
    _heading(pdf, "1 Introduction")
    _lines(
        pdf,
        [
            "Glacier flow responds to melt water reaching the bed, so velocity maps tell us how a",
            "warming climate changes the ice. Interferometric phase gives displacement along the",
            "line of sight with millimetre precision when the coherence between passes stays high.",
        ],
    )
    pdf.add_page()
    _heading(pdf, "2 Results")
    _lines(
        pdf,
        [
            "The median surface velocity of the Aletsch glacier tongue was 182 metres per year,",
            "about a fifth faster than the stake measurements of the previous decade suggested,",
            "and the speed-up was largest in late summer when melt water drained to the bed.",
        ],
    )
    _lines(
        pdf,
        [
            "Coherence dropped below 0.3 on fresh snow, so winter pairs were discarded; the",
            "remaining thirty-one pairs covered every month from May to October.",
        ],
    )
    _heading(pdf, "References")
    _lines(pdf, ["[1] R. Goldstein. Radar interferometry for glaciology. Journal of Ice, 1993."])
    pdf.output(str(path))
    return path
