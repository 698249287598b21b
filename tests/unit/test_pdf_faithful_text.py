"""Faithful PDF text: line-end hyphens undone only inside split words, footnotes, running heads and page numbers
kept out of paragraphs (a paragraph that runs past a footnote onto the next page stays whole)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fpdf import FPDF

from lit3r.corpus.parsers.pdf import parse_pdf
from lit3r.corpus.textutil import Vocabulary, join_lines

SHARED_PDFS = Path(__file__).parents[2] / ".." / "shared" / "data" / "pdfs"


def test_split_words_are_joined_and_compounds_keep_their_hyphen() -> None:
    assert join_lines(["dense retrie-", "val works"]) == "dense retrieval works"
    assert join_lines(["the strongest Google-", "based baseline"]) == "the strongest Google-based baseline"
    assert join_lines(["we fine-", "tuned GPT-", "4o"]) == "we fine-tuned GPT-4o"
    assert join_lines(["a token-", "level decision"]) == "a token-level decision"


def test_the_papers_own_spelling_decides() -> None:
    vocabulary = Vocabulary(["moreover the results hold", "a well-known result"])
    assert join_lines(["more-", "over it works"], vocabulary) == "moreover it works"
    assert join_lines(["a well-", "known fact"], vocabulary) == "a well-known fact"
    # the first word after a line-end hyphen is the rest of a split word, not evidence of a word
    split = Vocabulary(["it was real-", "ized later", "a real number"])
    assert "ized" not in split.words
    assert join_lines(["was real-", "ized later"], split) == "was realized later"


BODY = [
    "Glacier flow responds to melt water reaching the bed, so velocity maps tell us how a",
    "warming climate changes the ice. Interferometric phase gives displacement along the",
    "line of sight with millimetre precision when the coherence between the passes stays",
    "high, and we use it on three Alpine glaciers together with stakes drilled into the",
    "ice during two summers, which the radar measurements are compared with in the sub-",
]
AFTER = [
    "sequent section on every glacier tongue and for every month from May to October.",
    "The median surface velocity of the Aletsch glacier tongue was 182 metres per year.",
]


def _write_paper(path: Path) -> Path:
    pdf = FPDF(unit="pt", format="letter")
    pdf.set_auto_page_break(auto=False)
    for number in (1, 2, 3):
        pdf.add_page()
        pdf.set_font("Helvetica", "", 8)
        pdf.text(72, 40, "Journal of Glaciological Tests, vol. 12")
        pdf.text(300, 760, str(number))
        pdf.set_font("Times", "", 11)
        y = 90
        if number == 1:
            pdf.set_font("Helvetica", "B", 16)
            pdf.text(72, y, "Radar Interferometry of Alpine Glacier Flow")
            pdf.set_font("Helvetica", "B", 12)
            pdf.text(72, y + 30, "1 Introduction")
            pdf.set_font("Times", "", 11)
            y += 60
            for line in [*BODY, *BODY[:4]] * 3 + BODY:
                pdf.text(72, y, line)
                y += 13.5
            pdf.line(72, 690, 200, 690)
            pdf.set_font("Times", "", 8)
            pdf.text(72, 702, "1 The stakes were read by the park rangers every second week.")
        elif number == 2:
            for line in AFTER:
                pdf.text(72, y, line)
                y += 13.5
            pdf.set_font("Helvetica", "B", 12)
            pdf.text(72, y + 20, "2 Results")
            pdf.set_font("Times", "", 11)
            y += 45
            for line in BODY[:4] * 4:
                pdf.text(72, y, line)
                y += 13.5
        else:
            for line in BODY[:4] * 3:
                pdf.text(72, y, line)
                y += 13.5
    pdf.output(str(path))
    return path


@pytest.fixture(scope="module")
def paper(tmp_path_factory: pytest.TempPathFactory):
    [parsed] = parse_pdf(_write_paper(tmp_path_factory.mktemp("faithful") / "glacier.pdf"))
    return parsed


def test_a_paragraph_runs_past_a_footnote_onto_the_next_page(paper) -> None:
    texts = [b.text for b in paper.blocks]
    whole = [t for t in texts if "in the subsequent section on every glacier tongue" in t]
    assert len(whole) == 1, texts
    assert not any(t.startswith("sequent section") for t in texts)
    footnote = [b for b in paper.blocks if b.text.startswith("1 The stakes were read")]
    assert len(footnote) == 1 and footnote[0].page == 1
    assert texts.index(footnote[0].text) == texts.index(whole[0]) + 1, "the footnote follows the paragraph"
    assert all("stakes were read" not in t for t in texts if t is not footnote[0].text)


def test_running_heads_and_page_numbers_stay_out(paper) -> None:
    text = paper.canonical_text()
    assert "Journal of Glaciological Tests" not in text
    assert all(not b.text.strip().isdigit() for b in paper.blocks)


@pytest.mark.shared_data
def test_real_pdf_keeps_real_hyphens_and_joins_split_words() -> None:
    if not SHARED_PDFS.is_dir():
        pytest.skip(f"shared PDFs not found at {SHARED_PDFS}")
    [parsed] = parse_pdf(SHARED_PDFS / "pasa-llm-agent-paper-search.pdf")
    text = parsed.canonical_text()
    assert "Google-based search" in text and "Googlebased" not in text
    assert "token-level Markov Decision Process" in text
    assert "AutoScholarQuery" in text and "Au-toScholarQuery" not in text
    assert "Due to the need for manual query submission, we evaluate only 100" in text
