"""The page highlight of a quote after ligatures: pdfplumber gives 'fi' as one character with two letters, and
the highlight (and the text the server calls an exact match) must still cover exactly the quoted letters."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from lit3r.server import pages

SHARED_PDFS = Path(__file__).parents[2] / ".." / "shared" / "data" / "pdfs"


def _chars(text: str, ligatures: dict[int, str] | None = None) -> list[dict]:
    """Characters of one line, 5 points wide each; ``ligatures`` puts a two-letter glyph at a position."""
    out, x = [], 10.0
    glyphs = list(text)
    for position, glyph in sorted((ligatures or {}).items(), reverse=True):
        glyphs[position : position + len(glyph)] = [glyph]
    for glyph in glyphs:
        out.append({"text": glyph, "x0": x, "x1": x + 5.0, "top": 100.0, "bottom": 110.0})
        x += 5.0
    return out


def _locate(chars: list[dict], quote: str) -> pages.Passage:
    start, length = pages._match(chars, pages.fold(quote)[0])
    page = SimpleNamespace(width=600, height=800)
    found = "exact" if length == len(pages.fold(quote)[0]) else "partial"
    return pages._passage(page, 1, chars, start, length, found)


def test_a_ligature_does_not_shift_what_follows_it() -> None:
    line = "the first fine field"
    chars = _chars(line, {4: "fi", 10: "fi", 15: "fi"})  # three glyphs of two letters
    passage = _locate(chars, "field")
    assert passage.found == "exact" and passage.matched_text == "field"
    [box] = passage.boxes
    glyph = next(c for c in chars if c["text"] == "fi" and c["x0"] > 60)
    assert box[0] == pytest.approx(glyph["x0"]) and box[2] == pytest.approx(chars[-1]["x1"])


def test_a_quote_that_starts_inside_a_ligature_covers_only_its_letters() -> None:
    chars = _chars("a fine day", {2: "fi"})
    passage = _locate(chars, "ine day")
    glyph = chars[2]
    [box] = passage.boxes
    assert passage.matched_text == "ine day"
    assert box[0] == pytest.approx((glyph["x0"] + glyph["x1"]) / 2), "half of the two-letter glyph"
    one_codepoint = _chars("a \ufb01ne day")  # the ligature as U+FB01, NFKC gives 'fi'
    assert _locate(one_codepoint, "ine day").matched_text == "ine day"


@pytest.mark.shared_data
def test_real_pdf_highlights_match_the_quote_after_ligatures() -> None:
    path = SHARED_PDFS / "pasa-llm-agent-paper-search.pdf"
    if not path.is_file():
        pytest.skip(f"shared PDFs not found at {SHARED_PDFS}")
    import pdfplumber

    with pdfplumber.open(path) as pdf:
        words = pdf.pages[0].extract_words()
        chars = pdf.pages[0].chars
    ligatures = sum(len(c["text"]) > 1 for c in chars)
    assert ligatures >= 3, "page 1 of the PaSa paper sets 'fi' ligatures"
    checked = 0
    for word in words[-60:]:  # words late on the page: every ligature before them used to shift the box
        text = word["text"]
        if len(text) < 6 or not text.isalpha():
            continue
        found = pages.locate(str(path), "sha", 1, text)
        if found.found != "exact":
            continue
        checked += 1
        assert pages.fold(found.matched_text)[0] == pages.fold(text)[0]
        if len(found.boxes) > 1:  # the first occurrence is a word split over two lines
            continue
        box = found.boxes[0]
        starts_a_word = [w for w in words if pages.fold(w["text"])[0].startswith(pages.fold(text)[0])]
        assert any(abs(box[0] - w["x0"]) < 0.5 and box[2] <= w["x1"] + 0.5 for w in starts_a_word), text
    assert checked >= 10
