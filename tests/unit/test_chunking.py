"""The two chunkers on small hand-written papers: boundaries, caps, types, locators and spans."""

from __future__ import annotations

import random

import pytest

from lit3r.corpus.chunkers import chunk_paper, chunk_qasper, chunk_structural
from lit3r.corpus.chunkers.qasper import windows
from lit3r.corpus.chunkers.split import split_span
from lit3r.models import Block, Chunk, Paper, ParsedPaper, chunk_id
from lit3r.settings import ChunkerSettings

TITLE = "Sparse Retrieval Revisited"
ABSTRACT = "We revisit BM25 for papers. It holds up well."


def paper(*blocks: Block, venue: str | None = "ACL", year: int | None = 2024, abstract: str = ABSTRACT) -> ParsedPaper:
    return ParsedPaper(
        paper=Paper(id="p1", title=TITLE, abstract=abstract, venue=venue, year=year), blocks=list(blocks)
    )


def text(t: str, section: str | None = "1 Introduction", page: int | None = 1) -> Block:
    return Block(type="text", text=t, section=section, page=page)


def sentences(n: int, words: int = 12, tag: str = "s") -> str:
    """``n`` distinct sentences of ``words`` words each, e.g. 'S0 w1 w2 ... w11.'."""
    return " ".join(f"{tag.upper()}{i} " + " ".join(f"w{i}x{j}" for j in range(1, words)) + "." for i in range(n))


def body(chunks: list[Chunk]) -> list[Chunk]:
    return [c for c in chunks if c.type != "title_abstract"]


def assert_spans(parsed: ParsedPaper, chunks: list[Chunk]) -> None:
    canonical = parsed.canonical_text()
    for c in body(chunks):
        assert canonical[c.locator.char_start : c.locator.char_end] == c.text, c.id


# --- structural ------------------------------------------------------------------------------------------------


def test_title_abstract_first_and_only_once_with_venue_tag():
    parsed = paper(text("One."), text("Two."), Block(type="figure", text="Figure 1: A plot.", object_id="Figure 1"))
    chunks = chunk_structural(parsed)
    assert [c.type for c in chunks].count("title_abstract") == 1
    first = chunks[0]
    assert first.type == "title_abstract"
    assert first.text == f"[ACL 2024] {TITLE}\n\n{ABSTRACT}"
    assert parsed.canonical_text()[first.locator.char_start : first.locator.char_end] == f"{TITLE}\n\n{ABSTRACT}"
    assert [c.id for c in chunks] == [chunk_id("p1", i) for i in range(len(chunks))]


def test_title_abstract_without_tag_when_venue_and_year_unknown():
    chunks = chunk_structural(paper(text("One."), venue=None, year=None))
    assert chunks[0].text == f"{TITLE}\n\n{ABSTRACT}"
    assert not chunks[0].text.startswith("[")
    assert chunk_structural(paper(venue="ACL", year=None))[0].text.startswith(f"[ACL] {TITLE}")


def test_long_abstract_is_cut_at_a_sentence_to_fit():
    abstract = sentences(40)
    chunk = chunk_structural(paper(abstract=abstract), max_chars=300)[0]
    assert len(chunk.text) <= 300
    kept = chunk.text.split("\n\n", 1)[1]
    assert abstract.startswith(kept) and kept.endswith(".")
    assert len(kept) > 300 - len(f"[ACL 2024] {TITLE}\n\n") - 60  # the cut keeps as many sentences as fit


def test_paragraphs_of_one_section_and_page_are_packed_and_joined_canonically():
    parsed = paper(text("Alpha one."), text("Beta two."), text("Gamma three."))
    chunks = body(chunk_structural(parsed))
    assert len(chunks) == 1
    assert chunks[0].text == "Alpha one.\n\nBeta two.\n\nGamma three."
    assert (chunks[0].locator.paragraph, chunks[0].locator.paragraph_end) == (0, 2)
    assert chunks[0].locator.section == "1 Introduction" and chunks[0].locator.page == 1
    assert_spans(parsed, chunks)


def test_page_change_closes_a_chunk():
    parsed = paper(text("On page one."), text("Also page one."), text("On page two.", page=2))
    chunks = body(chunk_structural(parsed))
    assert [c.text for c in chunks] == ["On page one.\n\nAlso page one.", "On page two."]
    assert [c.locator.page for c in chunks] == [1, 2]
    assert [(c.locator.paragraph, c.locator.paragraph_end) for c in chunks] == [(0, 1), (2, 2)]


def test_heading_change_closes_a_chunk():
    parsed = paper(
        text("Intro text."), text("Method text.", section="2 Method"), text("More method.", section="2 Method")
    )
    chunks = body(chunk_structural(parsed))
    assert [c.text for c in chunks] == ["Intro text.", "Method text.\n\nMore method."]
    assert [c.locator.section for c in chunks] == ["1 Introduction", "2 Method"]


def test_a_chunk_closes_before_exceeding_max_chars():
    paragraphs = [("abcdefghi " * 90).strip() for _ in range(5)]  # 899 characters each
    parsed = paper(*(text(p) for p in paragraphs))
    chunks = body(chunk_structural(parsed))
    assert [(c.locator.paragraph, c.locator.paragraph_end) for c in chunks] == [(0, 1), (2, 3), (4, 4)]
    assert all(len(c.text) <= 2000 for c in chunks)
    assert len(chunks[0].text) == 899 * 2 + 2
    assert_spans(parsed, chunks)


def test_a_paragraph_longer_than_max_chars_is_split_at_sentences():
    long = sentences(60)  # ~4,500 characters
    parsed = paper(text("Short lead."), text(long), text("Short tail."))
    chunks = body(chunk_structural(parsed))
    pieces = [c for c in chunks if c.locator.paragraph == 1]
    assert len(pieces) >= 3
    assert all(len(c.text) <= 2000 for c in pieces)
    assert all(c.text.endswith(".") and c.text[:1] == "S" for c in pieces)  # whole sentences only
    assert " ".join(c.text for c in pieces) == long
    assert chunks[0].text == "Short lead." and chunks[-1].text == "Short tail."
    assert_spans(parsed, chunks)


def test_a_sentence_longer_than_max_chars_is_split_at_words():
    words = [f"word{i}" for i in range(120)]
    parsed = paper(text(" ".join(words)))
    chunks = body(chunk_structural(parsed, max_chars=100))
    assert all(len(c.text) <= 100 for c in chunks)
    assert [w for c in chunks for w in c.text.split(" ")] == words
    assert_spans(parsed, chunks)


def test_split_span_cuts_a_word_longer_than_the_limit():
    source = "x" * 25
    assert split_span(source, 0, 25, 10) == [(0, 10), (10, 20), (20, 25)]


def test_table_figure_equation_are_single_typed_chunks_with_object_ids():
    parsed = paper(
        text("Before."),
        Block(type="table", text="Table 1: Recall.\n| Method | R@10 |\n| BM25 | 0.41 |", object_id="Table 1"),
        Block(type="figure", text="Figure 1: Recall grows.", object_id="Figure 1"),
        Block(type="equation", text="s(q,d) = sum_t idf(t)"),
        text("After."),
    )
    chunks = body(chunk_structural(parsed))
    assert [(c.type, c.locator.object_id) for c in chunks] == [
        ("text", None),
        ("table", "Table 1"),
        ("figure", "Figure 1"),
        ("equation", None),
        ("text", None),
    ]
    assert [c.locator.paragraph for c in chunks] == [0, 1, 2, 3, 4]
    assert_spans(parsed, chunks)


def test_an_oversized_table_is_split_between_rows_keeping_its_id():
    rows = ["Table 2: Big.", "| Method | Score |", "|---|---|"] + [f"| method-{i:03d} | 0.{i:03d} |" for i in range(60)]
    parsed = paper(Block(type="table", text="\n".join(rows), object_id="Table 2"))
    chunks = body(chunk_structural(parsed, max_chars=300))
    assert len(chunks) > 1
    assert all(c.type == "table" and c.locator.object_id == "Table 2" and len(c.text) <= 300 for c in chunks)
    assert [line for c in chunks for line in c.text.split("\n")] == rows  # cuts fall between rows
    assert_spans(parsed, chunks)


def test_blank_blocks_are_skipped_and_spans_still_hold():
    parsed = paper(text("One."), text("   "), text(""), text("Two."), Block(type="table", text=" ", object_id="T"))
    chunks = body(chunk_structural(parsed))
    assert len(chunks) == 1 and chunks[0].type == "text"
    assert (chunks[0].locator.paragraph, chunks[0].locator.paragraph_end) == (0, 3)
    assert_spans(parsed, chunks)


def test_spans_and_caps_hold_on_a_random_paper_and_cover_every_block():
    rng = random.Random(7)
    blocks = []
    for i in range(80):
        kind = rng.choice(["text"] * 6 + ["table", "figure", "equation"])
        content = sentences(rng.randint(1, 40), rng.randint(3, 15), tag=f"b{i}")
        blocks.append(Block(type=kind, text=content, section=f"S{i // 12}", page=1 + i // 9, object_id=f"O{i}"))
    parsed = paper(*blocks)
    chunks = chunk_structural(parsed)
    assert_spans(parsed, chunks)
    assert all(len(c.text) <= 2000 for c in chunks)
    starts = [c.locator.char_start for c in body(chunks)]
    assert starts == sorted(starts)
    canonical = parsed.canonical_text()
    covered = "".join(c.text for c in body(chunks))
    assert "".join(canonical[len(TITLE) + len(ABSTRACT) + 4 :].split()) == "".join(covered.split())
    for c in body(chunks):
        first, last = parsed.blocks[c.locator.paragraph], parsed.blocks[c.locator.paragraph_end]
        assert first.section == last.section == c.locator.section and first.page == last.page == c.locator.page


def test_blocks_with_and_without_precomputed_spans_chunk_the_same():
    parsed = paper(text("One. Two."), text("Three.", page=2))
    assert chunk_structural(parsed) == chunk_structural(parsed.with_spans())


# --- QASPER ----------------------------------------------------------------------------------------------------


def words(n: int, tag: str) -> list[str]:
    return [f"{tag}{i}" for i in range(n)]


def window_tokens(chunk: Chunk) -> list[str]:
    return chunk.text.split("\n", 1)[1].split()


def test_qasper_header_format_and_abstract_first():
    parsed = paper(text("Body words here.", section="2 Method"))
    chunks = chunk_qasper(parsed)
    assert chunks[0].type == "title_abstract"
    assert chunks[0].text == f"Title: {TITLE}. Section: Abstract.\n{ABSTRACT}"
    assert chunks[1].text == f"Title: {TITLE}. Section: 2 Method.\nBody words here."
    assert chunks[1].type == "text" and chunks[1].locator.section == "2 Method"


def test_qasper_default_windows_are_500_tokens_with_50_overlap():
    toks = words(1200, "t")
    chunks = body(chunk_qasper(paper(text(" ".join(toks)), abstract="")))
    assert [len(window_tokens(c)) for c in chunks] == [500, 500, 300]
    assert [window_tokens(c) for c in chunks] == [toks[0:500], toks[450:950], toks[900:1200]]
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert window_tokens(a)[-50:] == window_tokens(b)[:50]
        assert window_tokens(a)[-51] != window_tokens(b)[0]  # exactly 50, not more


def test_qasper_settings_are_respected():
    toks = words(25, "t")
    settings = ChunkerSettings(kind="qasper", tokens=10, overlap=0.2)
    chunks = body(chunk_paper(paper(text(" ".join(toks)), abstract=""), settings))
    assert [window_tokens(c) for c in chunks] == [toks[0:10], toks[8:18], toks[16:25]]
    assert windows(18, 10, 0.2) == [(0, 10), (8, 18)]  # no trailing window made only of overlap
    assert windows(10, 10, 0.0) == [(0, 10)]
    assert windows(3, 1, 0.9) == [(0, 1), (1, 2), (2, 3)]  # overlap capped below the window size


def test_qasper_windows_never_cross_a_section_and_spans_hold():
    intro, method = words(23, "i"), words(17, "m")
    parsed = paper(
        text(" ".join(intro[:11])),
        text(" ".join(intro[11:])),
        Block(type="table", text=" ".join(method[:5]), section="2 Method", page=2, object_id="Table 1"),
        text(" ".join(method[5:]), section="2 Method", page=2),
    )
    chunks = chunk_qasper(parsed, tokens=10, overlap=0.2)
    by_section: dict[str, list[str]] = {}
    canonical = parsed.canonical_text()
    for c in chunks:
        toks = window_tokens(c)
        assert len(toks) <= 10
        assert c.text.split("\n", 1)[1] == canonical[c.locator.char_start : c.locator.char_end]
        by_section.setdefault(c.locator.section, []).append(toks)
    assert all(set(t) <= set(intro) for t in by_section["1 Introduction"])
    assert all(set(t) <= set(method) for t in by_section["2 Method"])
    assert [len(t) for t in by_section["1 Introduction"]] == [10, 10, 7]  # last window shorter
    assert [len(t) for t in by_section["2 Method"]] == [10, 9]
    method_chunks = [c for c in chunks if c.locator.section == "2 Method"]
    assert all(c.text.startswith(f"Title: {TITLE}. Section: 2 Method.\n") for c in method_chunks)
    assert [(c.locator.paragraph, c.locator.paragraph_end, c.locator.page) for c in method_chunks] == [
        (2, 3, 2),
        (3, 3, 2),
    ]


def test_qasper_window_of_a_single_table_block_is_a_table_chunk():
    parsed = paper(
        text("Some words."),
        Block(type="table", text="| a | b |\n| 1 | 2 |", section="3 Results", object_id="Table 3"),
        text("Other words.", section="4 Discussion"),
    )
    chunks = chunk_qasper(parsed)
    assert [(c.type, c.locator.object_id, c.locator.section) for c in chunks] == [
        ("title_abstract", None, "Abstract"),
        ("text", None, "1 Introduction"),
        ("table", "Table 3", "3 Results"),
        ("text", None, "4 Discussion"),
    ]


def test_qasper_blocks_without_section_are_headed_body():
    chunks = chunk_qasper(paper(text("Loose words.", section=None), abstract=""))
    assert chunks[0].text == f"Title: {TITLE}. Section: Body.\nLoose words."
    assert chunks[0].locator.section is None


def test_dispatch_follows_the_settings_kind():
    parsed = paper(text("One two three."))
    assert chunk_paper(parsed, ChunkerSettings()) == chunk_structural(parsed)
    assert chunk_paper(parsed, ChunkerSettings(kind="qasper")) == chunk_qasper(parsed)
    with pytest.raises(ValueError, match="unknown chunker kind"):
        chunk_paper(parsed, ChunkerSettings.model_construct(kind="other"))
