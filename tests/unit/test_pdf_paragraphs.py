"""PDF paragraphs from page layouts: where a paragraph ends (indents, blanks, a new column), floats' boxes and
captions, display equations against justified lines, running heads of short papers.

The pages are layout records (words with boxes, rules), the shape every backend fills, so each rule is tested
on exactly the geometry it reads.
"""

from __future__ import annotations

from pathlib import Path

from lit3r.corpus.parsers.pdf import paper_from_pages
from lit3r.corpus.parsers.pdf_backends import PageData, PdfData, Word
from lit3r.corpus.parsers.pdf_classify import classify_lines
from lit3r.corpus.parsers.pdf_floats import _cell_like
from lit3r.corpus.parsers.pdf_layout import Line, drop_running_lines
from lit3r.models import ParsedPaper

LEFT, RIGHT = 60.0, 290.0
"""The edges of the (left) column."""
SIZE = 10.0
PITCH = 12.5
"""Baseline to baseline: 2.5 pt of blank between the boxes of two lines of a paragraph."""
FILLER = (
    "the measurements were repeated on every sample of the collection and the results agree with the "
    "values reported for the earlier campaign within the stated uncertainty of the instrument we used"
).split()


def words(text: str, x0: float, top: float, size: float = SIZE, right: float | None = None, font: str = "Times"):
    """The words of one line from ``x0``; spread to end at ``right`` when given (a justified line)."""
    tokens = text.split()
    widths = [0.4 * size * len(token) for token in tokens]
    space = 0.25 * size
    if right is not None and len(tokens) > 1:
        space = (right - x0 - sum(widths)) / (len(tokens) - 1)
    out, x = [], x0
    for token, width in zip(tokens, widths, strict=True):
        out.append(Word(token, x, x + width, top, top + size, size, font))
        x += width + space
    return out


def full(count: int, last: str = "") -> list[str]:
    """``count`` lines of filler text that fill the column (8 words a line), then ``last`` if given."""
    lines = [" ".join(FILLER[(7 * i) % 20 :][:8]) for i in range(count)]
    return [*lines, last] if last else lines


def front() -> list[Word]:
    return [
        *words("Layout Rules For Paper Parsing", LEFT, 60, size=16, font="Times-Bold"),
        *words("1 Introduction", LEFT, 100, size=12, font="Times-Bold"),
    ]


def paragraphs(blocks: list[tuple[list[str], bool]], top: float = 120.0, column: tuple[float, float] = (LEFT, RIGHT)):
    """Words of paragraphs ``(lines, indented)``: every line justified but a paragraph's last; then the next top."""
    left, right = column
    out: list[Word] = []
    for lines, indented in blocks:
        for index, text in enumerate(lines):
            x0 = left + (1.2 * SIZE if indented and index == 0 else 0)
            last = index == len(lines) - 1
            out.extend(words(text, x0, top, right=None if last else right))
            top += PITCH
    return out, top


def parse(*pages: list[Word], rules: list[list[tuple[float, float, float]]] | None = None) -> ParsedPaper:
    data = PdfData(
        [
            PageData(number, 612.0, 792.0, list(page), rules=(rules or [[]] * len(pages))[number - 1])
            for number, page in enumerate(pages, 1)
        ]
    )
    return paper_from_pages(data, Path("layout.pdf"))


def texts(parsed: ParsedPaper) -> list[str]:
    return [b.text for b in parsed.blocks if b.type == "text"]


def test_one_line_paragraphs_are_kept_apart() -> None:
    """Each of several one-line, indented paragraphs (rows of an example, items) is a paragraph of its own."""
    body, _ = paragraphs(
        [
            (full(4, "and it ends here."), True),
            (["(1) How are the samples chosen?"], True),
            (["(2) How often are they measured?"], True),
            (["2 am AUX VBP 3 aux"], True),
            (["3 writing VERB VBG 0 root"], True),
        ]
    )
    found = texts(parse(front() + body))
    assert found[1:] == [
        "(1) How are the samples chosen?",
        "(2) How often are they measured?",
        "2 am AUX VBP 3 aux",
        "3 writing VERB VBG 0 root",
    ]


def test_a_blank_wider_than_the_line_spacing_starts_a_paragraph() -> None:
    """Paragraphs set apart by a blank (no indent), the first one's last line full and ending a sentence."""
    first, top = paragraphs([(full(3) + ["the values reported for the campaign agree with the new ones."], False)])
    second, _ = paragraphs([(full(3, "and that closes the second one."), False)], top=top + 4.5)
    found = texts(parse(front() + first + second))
    assert len(found) == 2 and found[1].endswith("closes the second one.")


def test_at_the_top_of_a_column_an_indent_starts_a_paragraph() -> None:
    """The left column ends in mid-sentence at its foot; the right column's first line decides."""
    left, _ = paragraphs([(full(40) + ["the probability of a word is computed as"], False)])
    assert left[-1].top > 600
    right_column = (320.0, 550.0)
    indented, _ = paragraphs([(["where the sum runs over the words of the sentence."], True)], column=right_column)
    flush, _ = paragraphs([(["INLINEFORM2 ngram embeddings of the sentence."], False)], column=right_column)
    rest, _ = paragraphs([(full(30, "the end of the column."), True)], top=150, column=right_column)
    starts = texts(parse(front() + left + indented + rest))
    assert starts[0].endswith("is computed as") and starts[1].startswith("where the sum runs")
    runs_on = texts(parse(front() + left + flush + rest))
    assert runs_on[0].endswith("is computed as INLINEFORM2 ngram embeddings of the sentence.")


def test_a_list_item_runs_on_at_its_hanging_indent() -> None:
    """An item's lines hang at an indent of their own: a sentence ending at a line end does not end the item."""
    intro, top = paragraphs([(full(3, "We compare three systems:"), False)])
    hang = LEFT + 1.5 * SIZE
    item = [
        *words("• Retrieval. We submit the query to the index and we", LEFT, top, right=RIGHT),
        *words("take the first hundred papers it returns for it.", hang, top + PITCH, right=RIGHT),
        *words("Ranking them is left to the second stage.", hang, top + 2 * PITCH),
    ]
    found = texts(parse(front() + intro + item))
    assert found[1].startswith("• Retrieval.") and found[1].endswith("to the second stage.")


def test_body_text_between_two_float_boxes_is_not_a_table() -> None:
    """Two captioned boxes (a rule above and below each) in one column with a paragraph between them."""
    intro, _ = paragraphs([(full(4, "as the tables show."), True)])
    first = words("Table 1: Results on the test set.", LEFT, 220, size=9)
    between, _ = paragraphs([(full(5, "which the second table details."), True)], top=250)
    second = words("Table 2: Results on the development set.", LEFT, 350, size=9)
    rules = [(LEFT, RIGHT, 205.0), (LEFT, RIGHT, 235.0), (LEFT, RIGHT, 335.0), (LEFT, RIGHT, 365.0)]
    parsed = parse(front() + intro + first + between + second, rules=[rules])
    tables = [b.text for b in parsed.blocks if b.type == "table"]
    assert tables == ["Table 1: Results on the test set.", "Table 2: Results on the development set."]
    assert any(t.endswith("which the second table details.") for t in texts(parsed))


def test_a_justified_body_line_is_not_a_table_row() -> None:
    """At the body size a row needs em-wide gaps to split into cells; a justified line's spaces are narrower."""
    justified = Line(words("spaces of seven tenths", LEFT, 100, right=LEFT + 0.4 * SIZE * 19 + 3 * 0.7 * SIZE), 1)
    row = Line(words("Model Recall Precision", LEFT, 100) + words("0.41 0.52", 250, 100), 1)
    small = Line(words("a b c", LEFT, 100, size=8), 1)
    assert not _cell_like(justified, SIZE)
    assert _cell_like(row, SIZE)
    assert _cell_like(small, SIZE)


def test_a_stacked_caption_keeps_its_lines() -> None:
    """A figure's caption right above the next figure is not taken for text drawn inside that figure."""
    intro, _ = paragraphs([(full(4, "as the figures show."), True)])
    caption = [
        *words("Figure 1: The English and Russian datasets. For English", LEFT, 220, size=9, right=RIGHT),
        *words("there is still a gap between the two curves.", LEFT, 231, size=9),
    ]
    nxt = words("Figure 2: The Polish dataset.", LEFT, 300, size=9)
    figures = [b.text for b in parse(front() + intro + caption + nxt).blocks if b.type == "figure"]
    assert (
        figures[0]
        == "Figure 1: The English and Russian datasets. For English there is still a gap between the two curves."
    )


def _classified(*lines: Line) -> list[str]:
    stream = [Line(words("x " * 30, LEFT, 40, right=RIGHT), 1), *lines]  # the column's edges
    classify_lines(stream, SIZE)
    return [line.kind for line in stream[1:]]


def test_a_justified_line_full_of_symbols_is_text_and_a_display_equation_is_not() -> None:
    """A formula's source printed in a paragraph's text font: its first (indented) and last lines stay text."""
    justified = Line(
        words("$$&h_1 = f(W_{h_1} x_1 + b_{h_1}) \\\\ &h_2 = f(W_{h_2} x_2)", LEFT + SIZE, 100, right=RIGHT), 1
    )
    last_line = Line(words("h_y + b_{y}) \\\\ (Eq. 20)", LEFT, 100 + PITCH), 1)
    display = Line(words("s(q, d) = w(t) · idf(t) + b (1)", 130, 200, font="CMMI10"), 1)
    assert _classified(justified, last_line, display) == ["text", "text", "equation"]


def test_a_two_page_papers_running_head_is_dropped() -> None:
    def page(number: int) -> list[Line]:
        head = Line(words("Layout Rules For Paper Parsing", 200, 30, size=8), number)
        body = Line(words("some body text of the page", LEFT, 300), number)
        return [head, body]

    kept = drop_running_lines([page(1), page(2)], [792.0, 792.0])
    assert [[line.text for line in lines] for lines in kept] == [["some body text of the page"]] * 2


def test_a_paper_that_indents_runs_a_sentence_on_over_a_column_top() -> None:
    """The left column's foot ends a sentence at the right edge; the right column starts flush with a capital.

    A paper that indents its paragraphs continues the paragraph there; one that sets paragraphs apart by a
    blank (no indent) starts a new one.
    """
    right_column = (320.0, 550.0)

    def left(indent: bool) -> list[Word]:
        blank = 0.0 if indent else 6.0
        out, top = [], 120.0
        for _ in range(6):
            lines, top = paragraphs([(full(4, "and the sample ends."), indent)], top=top)
            out, top = out + lines, top + blank
        foot, top = paragraphs([(full(9), indent)], top=top)
        last = words("as values are reported for the earlier campaign too.", LEFT, top - PITCH, right=RIGHT)
        return out + foot[: -len(full(9)[-1].split())] + last

    top_line, _ = paragraphs([(["Later the values were measured again."], False)], column=right_column)
    rest, _ = paragraphs([(full(30, "the end of the column."), True)], top=150, column=right_column)
    indenting = texts(parse(front() + left(True) + top_line + rest))
    assert any(t.endswith("earlier campaign too. Later the values were measured again.") for t in indenting)
    blocked = texts(parse(front() + left(False) + top_line + rest))
    assert "Later the values were measured again." in blocked
