"""Plain-text papers, and the small text helpers the other file parsers share.

Format of a ``.txt`` paper::

    Sparse Retrieval Revisited            <- first non-empty line: the title

    Abstract                              <- an 'Abstract' heading line and the paragraph under it,
    We revisit sparse retrieval ...          or a paragraph starting 'Abstract:' / 'Abstract.'

    1 Introduction                        <- numbered heading lines set the section
    Paragraphs are separated by blank lines; lines inside a
    paragraph are joined and hyphenated line breaks undone.

    References                            <- the rest is the reference list
    [1] A. Author. A cited paper. ACL, 2023.

The encoding is detected (:func:`lit3r.corpus.sniff.decode_text`): UTF-8, UTF-16/32 with or
without a byte-order mark, Windows-1252/Latin-1 when clearly that, else refused with the reason.
"""

from __future__ import annotations

import re
from pathlib import Path

from lit3r.corpus.parsers import ParseError, read_text
from lit3r.corpus.textutil import clean_text, join_lines, slugify
from lit3r.models import Block, Paper, ParsedPaper

NUMBERED_HEADING = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2})*\.?|[IVX]{1,5}\.)\s+[A-Z][^.!?]{0,80}$")
KNOWN_HEADING = re.compile(
    r"^(introduction|related work|background|methods?|methodology|experiments?|results|discussion|conclusions?|"
    r"acknowledge?ments?|limitations|appendix)$",
    re.IGNORECASE,
)
REFERENCES_HEADING = re.compile(r"^(?:\d+\.?\s+)?(references|bibliography|literature cited|works cited)\s*:?$", re.I)
ABSTRACT_HEADING = re.compile(r"^abstract\s*:?$", re.IGNORECASE)
INLINE_ABSTRACT = re.compile(r"^abstract\s*(?:[:.—–-]\s*|\n)", re.IGNORECASE)


def paragraphs(text: str) -> list[list[str]]:
    """Blank-line separated paragraphs, each as its stripped non-empty lines."""
    result = []
    for chunk in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in chunk.split("\n") if line.strip()]
        if lines:
            result.append(lines)
    return result


def parse_text(path: Path) -> list[ParsedPaper]:
    """Parse one plain-text paper (see the module docstring for the layout)."""
    path = Path(path)
    return parse_plain_text(read_text(path), path)


def parse_plain_text(text: str, path: Path) -> list[ParsedPaper]:
    """Parse the decoded text of a plain-text paper; ``path`` names its source (and gives its id)."""
    paras = paragraphs(clean_text(text))
    if not paras:
        raise ParseError(path, "the file is empty")
    title, paras[0] = paras[0][0], paras[0][1:]
    blocks: list[Block] = []
    abstract: list[str] = []
    references: list[str] = []
    section: str | None = None
    mode = "body"
    for lines in filter(None, paras):
        first = lines[0]
        if mode == "references":
            references.append("\n".join(lines))
            continue
        if REFERENCES_HEADING.match(first):
            mode = "references"
            references.append("\n".join(lines[1:]))
            continue
        if ABSTRACT_HEADING.match(first) and section is None and not abstract:
            mode, lines = "abstract", lines[1:]
        elif INLINE_ABSTRACT.match("\n".join(lines)) and section is None and not abstract:
            mode, lines = "abstract", [INLINE_ABSTRACT.sub("", "\n".join(lines), count=1)]
        elif NUMBERED_HEADING.match(first) or KNOWN_HEADING.match(first.rstrip(":")):
            mode, section, lines = "body", first, lines[1:]
        if not lines:
            continue
        if mode == "abstract":  # one paragraph: a file without headings must not become all abstract
            abstract.append(join_lines(lines))
            mode = "body"
        else:
            blocks.append(Block(type="text", text=join_lines(lines), section=section))
    return [_paper(path, title, abstract, blocks, references)]


def _paper(path: Path, title: str, abstract: list[str], blocks: list[Block], references: list[str]) -> ParsedPaper:
    from lit3r.corpus.references import parse_reference, split_reference_list

    paper = Paper(
        id=slugify(path.stem),
        title=title,
        abstract="\n\n".join(abstract),
        references=[parse_reference(raw) for raw in split_reference_list("\n\n".join(references))],
        source=str(path),
        source_format="text",
    )
    parsed = ParsedPaper(paper=paper, blocks=blocks)
    if parsed.is_empty:
        raise ParseError(path, "no text besides the title")
    return parsed.with_spans()
