"""The QASPER chunker of the hybrid-RAG seed: overlapping token windows per section, with a header.

Rules:

* Sections: the abstract first (heading ``Abstract``), then each run of consecutive
  non-blank body blocks with the same ``section``. Tables, figure captions and equations
  count as text of their section. Blocks without a section are headed ``Body`` in the
  header and keep ``section=None`` in the locator.
* Tokens are white-space-separated words (``\\S+``). The seed's "500 tokens" are read as
  500 words: no model tokenizer becomes a dependency of chunking, window boundaries do not
  change when the embedder does, and every token maps to an exact character span.
* Windows of ``tokens`` tokens start every ``tokens - round(tokens * overlap)`` tokens (500 and
  0.1: 450), so consecutive windows of one section share exactly ``round(tokens * overlap)``
  tokens; the last window of a section is whatever remains (shorter), and no window is
  started once the previous one reached the section's end. No window crosses a section.
* Each chunk's text is ``f"Title: {title}. Section: {heading}.\\n"`` followed by the window's
  exact slice of ``parsed.canonical_text()`` (original spacing kept); the locator's
  ``char_start``/``char_end`` are that slice's bounds, header excluded. Title and heading
  have their white space collapsed so the header stays on one line.
* Type: ``title_abstract`` for abstract windows; for a body window the type of its block when
  it touches exactly one block (a table on its own is a ``table`` chunk with its object id),
  else ``text``. Locator: section, page of the first block touched, paragraph/paragraph_end =
  first/last body block index touched (``None`` for abstract windows).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lit3r.models import BLOCK_SEPARATOR, Chunk, ChunkType, Locator, ParsedPaper, chunk_id

TOKEN = re.compile(r"\S+")
ABSTRACT_HEADING = "Abstract"
UNTITLED_HEADING = "Body"
ABSTRACT_BLOCK = -1
"""Block index used internally for tokens of the abstract."""


@dataclass(frozen=True)
class _Token:
    start: int
    end: int
    block: int


def header(title: str, heading: str) -> str:
    """The seed's chunk header, e.g. ``'Title: BERT. Section: Abstract.\\n'``."""
    return f"Title: {' '.join(title.split())}. Section: {' '.join(heading.split())}.\n"


def windows(n_tokens: int, tokens: int, overlap: float) -> list[tuple[int, int]]:
    """``(start, end)`` token ranges covering ``n_tokens`` tokens with the configured size and overlap."""
    shared = min(round(tokens * overlap), tokens - 1)
    stride = tokens - shared
    out: list[tuple[int, int]] = []
    start = 0
    while start < n_tokens:
        end = min(start + tokens, n_tokens)
        out.append((start, end))
        if end == n_tokens:
            break
        start += stride
    return out


def chunk_qasper(parsed: ParsedPaper, tokens: int = 500, overlap: float = 0.1) -> list[Chunk]:
    """Split one parsed paper into QASPER-style windows (see the module docstring for the rules)."""
    parsed = parsed.with_spans()
    text = parsed.canonical_text()
    paper = parsed.paper
    chunks: list[Chunk] = []
    for heading, section, section_tokens in _sections(parsed, text):
        for lo, hi in windows(len(section_tokens), tokens, overlap):
            window = section_tokens[lo:hi]
            start, end = window[0].start, window[-1].end
            touched = sorted({t.block for t in window})
            chunk_type: ChunkType = "text"
            object_id = None
            if touched == [ABSTRACT_BLOCK]:
                chunk_type = "title_abstract"
            elif len(touched) == 1:
                block = parsed.blocks[touched[0]]
                chunk_type, object_id = block.type, block.object_id
            first = parsed.blocks[touched[0]] if touched[0] != ABSTRACT_BLOCK else None
            chunks.append(
                Chunk(
                    id=chunk_id(paper.id, len(chunks)),
                    paper_id=paper.id,
                    type=chunk_type,
                    text=header(paper.title, heading) + text[start:end],
                    locator=Locator(
                        page=first.page if first else _abstract_page(parsed),
                        section=section,
                        paragraph=touched[0] if first else None,
                        paragraph_end=touched[-1] if first else None,
                        object_id=object_id,
                        char_start=start,
                        char_end=end,
                    ),
                )
            )
    return chunks


def _sections(parsed: ParsedPaper, text: str) -> list[tuple[str, str | None, list[_Token]]]:
    """``(heading, locator section, tokens)`` per section, the abstract first; empty sections dropped."""
    abstract_start = len(parsed.paper.title) + len(BLOCK_SEPARATOR)
    abstract_end = abstract_start + len(parsed.paper.abstract)
    sections: list[tuple[str, str | None, list[_Token]]] = []
    abstract_tokens = _tokens(text, abstract_start, abstract_end, ABSTRACT_BLOCK)
    if abstract_tokens:
        sections.append((ABSTRACT_HEADING, ABSTRACT_HEADING, abstract_tokens))
    current: tuple[str, str | None, list[_Token]] | None = None
    for index, block in enumerate(parsed.blocks):
        assert block.char_start is not None and block.char_end is not None  # set by with_spans()
        block_tokens = _tokens(text, block.char_start, block.char_end, index)
        if not block_tokens:
            continue  # blank block: neither tokens nor a section change
        if current is None or current[1] != block.section:
            current = (block.section or UNTITLED_HEADING, block.section, [])
            sections.append(current)
        current[2].extend(block_tokens)
    return sections


def _tokens(text: str, start: int, end: int, block: int) -> list[_Token]:
    return [_Token(m.start(), m.end(), block) for m in TOKEN.finditer(text, start, end)]


def _abstract_page(parsed: ParsedPaper) -> int | None:
    """Page 1 for paged sources (the abstract precedes every body block), else unknown."""
    return 1 if any(b.page is not None for b in parsed.blocks) else None
