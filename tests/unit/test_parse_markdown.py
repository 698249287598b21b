"""Markdown parser: front matter, sections, tables with captions, equations, figures, references."""

from __future__ import annotations

from pathlib import Path

import pytest

from lit3r.corpus.parsers import ParseError, parser_for
from lit3r.corpus.parsers.markdown import parse_markdown

DEMO = """---
id: demo-sparse-retrieval        # optional; else slug of file stem
title: Sparse Retrieval Revisited
authors: [Ada Lovelace, Alan Turing]
venue: ACL
year: 2024
---
# Sparse Retrieval Revisited

## Abstract
We revisit sparse retrieval.

Over two paragraphs.

## 1 Introduction
Paragraphs separated by blank lines
and wrapped over lines.

### 1.1 Setup
Table 1: Recall on the test set.
| Model | F1 |
|---|---|
| A | 0.5 |
| B \\| C | 0.7 |

$$
s(q,d) = \\sum_t w_t
$$

![Figure 1: The pipeline.](fig1.png)

Figure 2: A caption written as a paragraph.

```python
print("code is text")
```

| x | y |
|---|---|
| 1 | 2 |

Table 2: Caption after its table.

## References
- Lovelace, A. and Turing, A. 2023. Dense Passage Retrieval for Papers. In Proceedings of ACL.
- Turing, A. 1950. Computing Machinery and
  Intelligence. Mind.
"""


def _write(tmp_path: Path, text: str, name: str = "demo.md") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_front_matter_and_abstract(tmp_path: Path) -> None:
    path = _write(tmp_path, DEMO)
    [parsed] = parse_markdown(path)
    paper = parsed.paper
    assert (paper.id, paper.title, paper.venue, paper.year) == (
        "demo-sparse-retrieval",
        "Sparse Retrieval Revisited",
        "ACL",
        2024,
    )
    assert paper.authors == ["Ada Lovelace", "Alan Turing"]
    assert paper.abstract == "We revisit sparse retrieval.\n\nOver two paragraphs."
    assert (paper.source, paper.source_format) == (str(path), "markdown")
    assert parser_for(path) is parse_markdown


def test_blocks(tmp_path: Path) -> None:
    [parsed] = parse_markdown(_write(tmp_path, DEMO))
    summary = [(b.type, b.section, b.object_id) for b in parsed.blocks]
    assert summary == [
        ("text", "1 Introduction", None),
        ("table", "1.1 Setup", "Table 1"),
        ("equation", "1.1 Setup", None),
        ("figure", "1.1 Setup", "Figure 1"),
        ("figure", "1.1 Setup", "Figure 2"),
        ("text", "1.1 Setup", None),
        ("table", "1.1 Setup", "Table 2"),
    ]
    text, table, equation, figure, _, code, table2 = parsed.blocks
    assert text.text == "Paragraphs separated by blank lines and wrapped over lines."
    assert table.text == "Table 1: Recall on the test set.\nModel | F1\nA | 0.5\nB | C | 0.7"
    assert equation.text == "s(q,d) = \\sum_t w_t"
    assert figure.text == "Figure 1: The pipeline."
    assert code.text == 'print("code is text")'
    assert table2.text == "Table 2: Caption after its table.\nx | y\n1 | 2"
    assert all(b.page is None for b in parsed.blocks)
    canonical = parsed.canonical_text()
    assert all(canonical[b.char_start : b.char_end] == b.text for b in parsed.blocks)


def test_references(tmp_path: Path) -> None:
    [parsed] = parse_markdown(_write(tmp_path, DEMO))
    refs = parsed.paper.references
    assert [(r.title, r.year) for r in refs] == [
        ("Dense Passage Retrieval for Papers", 2023),
        ("Computing Machinery and Intelligence", 1950),
    ]
    assert refs[0].authors == ["Lovelace, A.", "Turing, A."]
    assert not any("Lovelace" in b.text for b in parsed.blocks)


def test_title_from_heading_and_id_from_file_name(tmp_path: Path) -> None:
    path = _write(tmp_path, "# A Heading Title\n\nSome body text.\n", "My Notes (2024).md")
    [parsed] = parse_markdown(path)
    assert (parsed.paper.id, parsed.paper.title) == ("my-notes-2024", "A Heading Title")
    assert [b.text for b in parsed.blocks] == ["Some body text."]
    assert parsed.blocks[0].section is None


@pytest.mark.parametrize("content", ["", "\n\n", "---\ntitle: Only a title\n---\n", "# Only a heading\n"])
def test_empty_files_are_parse_errors(tmp_path: Path, content: str) -> None:
    path = _write(tmp_path, content, "empty.md")
    with pytest.raises(ParseError) as caught:
        parse_markdown(path)
    assert caught.value.path == str(path)


def test_bad_front_matter(tmp_path: Path) -> None:
    path = _write(tmp_path, "---\ntitle: [unclosed\n---\nBody.\n")
    with pytest.raises(ParseError, match="front matter"):
        parse_markdown(path)
