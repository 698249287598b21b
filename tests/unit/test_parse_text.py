"""Plain-text parser: title, abstract, numbered sections, references, bad bytes, empty files."""

from __future__ import annotations

from pathlib import Path

import pytest

from lit3r.corpus.parsers import ParseError, parser_for
from lit3r.corpus.parsers.text import parse_text
from lit3r.corpus.textutil import join_lines, slugify

PAPER = """
Sparse Retrieval Revisited

Abstract
We revisit sparse retrieval for
scientific papers.

1 Introduction
Lexical retrie-
val is strong on long queries.

A second paragraph about GPT-
4o and K.-
R. Müller.

2.1 Method Details
We score terms.

References
[1] A. Lovelace. Dense passage retrieval for papers. ACL, 2023.
[2] A. Turing. Computing machinery and intelligence. Mind,
1950.
"""


def _write(tmp_path: Path, text: str | bytes, name: str = "My Paper.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def test_structure(tmp_path: Path) -> None:
    path = _write(tmp_path, PAPER)
    [parsed] = parse_text(path)
    paper = parsed.paper
    assert (paper.id, paper.title, paper.source_format) == ("my-paper", "Sparse Retrieval Revisited", "text")
    assert paper.abstract == "We revisit sparse retrieval for scientific papers."
    assert [(b.section, b.text) for b in parsed.blocks] == [
        ("1 Introduction", "Lexical retrieval is strong on long queries."),
        ("1 Introduction", "A second paragraph about GPT-4o and K.-R. Müller."),
        ("2.1 Method Details", "We score terms."),
    ]
    assert all(b.type == "text" and b.page is None for b in parsed.blocks)
    assert [(r.title, r.year) for r in paper.references] == [
        ("Dense passage retrieval for papers", 2023),
        ("Computing machinery and intelligence", 1950),
    ]
    canonical = parsed.canonical_text()
    assert all(canonical[b.char_start : b.char_end] == b.text for b in parsed.blocks)
    assert parser_for(path) is parse_text


def test_inline_abstract_and_no_headings(tmp_path: Path) -> None:
    path = _write(tmp_path, "A Title\n\nAbstract: Short abstract here.\n\nBody one.\n\nBody two.\n")
    [parsed] = parse_text(path)
    assert parsed.paper.abstract == "Short abstract here."
    assert [b.text for b in parsed.blocks] == ["Body one.", "Body two."]
    assert all(b.section is None for b in parsed.blocks)


def test_first_paragraph_is_not_abstract_without_the_word(tmp_path: Path) -> None:
    [parsed] = parse_text(_write(tmp_path, "Title\n\nJust a first paragraph.\n"))
    assert parsed.paper.abstract == ""
    assert [b.text for b in parsed.blocks] == ["Just a first paragraph."]


def test_latin1_bytes_are_decoded_not_replaced(tmp_path: Path) -> None:
    [parsed] = parse_text(_write(tmp_path, "Résumé\n\nBody with a naïve café byte.\n".encode("latin-1")))
    assert parsed.paper.title == "Résumé"
    assert parsed.blocks[0].text == "Body with a naïve café byte."


@pytest.mark.parametrize("content", ["", "   \n\n  \n", "Only a title\n"])
def test_empty_files_are_parse_errors(tmp_path: Path, content: str) -> None:
    path = _write(tmp_path, content, "empty.txt")
    with pytest.raises(ParseError) as caught:
        parse_text(path)
    assert caught.value.path == str(path)


def test_missing_file_is_a_parse_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="cannot read"):
        parse_text(tmp_path / "absent.txt")


def test_helpers() -> None:
    assert slugify("Ünïcode Paper (v2) — final") == "unicode-paper-v2-final"
    assert slugify("***") == "paper"
    assert join_lines(["retrie-", "val", "GPT-", "4o", "self-", "Attention"]) == "retrieval GPT-4o self-Attention"
