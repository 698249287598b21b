"""The Lit3R structural chunker: one title-abstract chunk, then paragraph-packed text and typed objects.

Rules (Lit3R: "splitting respects paragraph, page and heading boundaries and stops at
2,000 characters"):

* Chunk 0 is the paper's only ``title_abstract`` chunk: ``"[VENUE YEAR] " + title + "\\n\\n" +
  abstract`` (no tag when the paper has neither venue nor year). When it would exceed
  ``max_chars`` the abstract is cut at a sentence (else word) boundary and a debug line is logged.
* Text blocks are packed paragraph by paragraph. A chunk is closed before a block whose
  section or page differs from the chunk's, before a table/figure/equation block, and
  before a paragraph that would take it past ``max_chars``. A paragraph longer than
  ``max_chars`` is cut at sentences, then words, into pieces that are chunks of their own.
* Table, figure and equation blocks are one chunk each, typed as the block, keeping its
  ``object_id``; an oversized one is cut the same way (tables between rows first).
* Blank blocks are skipped: they neither make a chunk nor close one (their white space stays
  inside a text chunk's slice). Leading and trailing white space of a block is left out.

Every body chunk's text is an exact slice of ``parsed.canonical_text()``, and its locator's
``char_start``/``char_end`` are that slice's bounds (paragraphs of one chunk are therefore
joined by the canonical ``"\\n\\n"``). The title-abstract chunk's span covers title and
abstract (as cut) in the canonical text, without the tag.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from lit3r.corpus.chunkers.split import TABLE_LEVELS, TEXT_LEVELS, prefix_span, split_span, strip_span
from lit3r.models import BLOCK_SEPARATOR, Block, Chunk, ChunkType, Locator, ParsedPaper, chunk_id

log = logging.getLogger(__name__)

ABSTRACT_SECTION = "Abstract"
"""The section name the title-abstract chunk's locator carries."""


@dataclass
class _Draft:
    """A chunk being assembled: its type, the body blocks it spans and its character span."""

    type: ChunkType
    first: int
    last: int
    start: int
    end: int
    block: Block


def chunk_structural(parsed: ParsedPaper, max_chars: int = 2000) -> list[Chunk]:
    """Split one parsed paper into Lit3R structural chunks (see the module docstring for the rules)."""
    parsed = parsed.with_spans()  # spans are a pure function of the texts; recomputing keeps them exact
    text = parsed.canonical_text()
    drafts = _body_drafts(parsed, text, max_chars)
    chunks = [_title_abstract(parsed, max_chars)]
    for ordinal, draft in enumerate(drafts, start=1):
        chunks.append(
            Chunk(
                id=chunk_id(parsed.paper.id, ordinal),
                paper_id=parsed.paper.id,
                type=draft.type,
                text=text[draft.start : draft.end],
                locator=Locator(
                    page=draft.block.page,
                    section=draft.block.section,
                    paragraph=draft.first,
                    paragraph_end=draft.last,
                    object_id=draft.block.object_id if draft.type != "text" else None,
                    char_start=draft.start,
                    char_end=draft.end,
                ),
            )
        )
    return chunks


def _title_abstract(parsed: ParsedPaper, max_chars: int) -> Chunk:
    """The paper's single title-abstract chunk, its abstract cut to fit ``max_chars`` if need be."""
    paper = parsed.paper
    tag = paper.venue_tag
    head = f"{tag} {paper.title}" if tag else paper.title
    abstract = paper.abstract
    budget = max_chars - len(head) - len(BLOCK_SEPARATOR)
    if len(abstract) > budget:
        cut = prefix_span(abstract, 0, len(abstract), budget)[1] if budget > 0 else 0
        log.debug("%s: abstract cut from %d to %d characters to fit %d", paper.id, len(abstract), cut, max_chars)
        abstract = abstract[:cut]
    # Canonical text starts with title + separator + abstract; the span leaves out the tag.
    abstract_start = len(paper.title) + len(BLOCK_SEPARATOR)
    return Chunk(
        id=chunk_id(paper.id, 0),
        paper_id=paper.id,
        type="title_abstract",
        text=BLOCK_SEPARATOR.join(part for part in (head, abstract) if part),
        locator=Locator(
            page=1 if any(b.page is not None for b in parsed.blocks) else None,
            section=ABSTRACT_SECTION,
            char_start=0 if paper.title or not abstract else abstract_start,
            char_end=abstract_start + len(abstract) if abstract else len(paper.title),
        ),
    )


def _body_drafts(parsed: ParsedPaper, text: str, max_chars: int) -> list[_Draft]:
    """Walk the body blocks in order and cut them into chunk drafts."""
    drafts: list[_Draft] = []
    open_text: _Draft | None = None  # the text chunk still accepting paragraphs
    for index, block in enumerate(parsed.blocks):
        assert block.char_start is not None and block.char_end is not None  # set by with_spans()
        start, end = strip_span(text, block.char_start, block.char_end)
        if start >= end:
            continue  # blank block
        if block.type != "text":
            open_text = None
            levels = TABLE_LEVELS if block.type == "table" else TEXT_LEVELS
            for s, e in split_span(text, start, end, max_chars, levels):
                drafts.append(_Draft(block.type, index, index, s, e, block))
            continue
        if (
            open_text is not None
            and open_text.block.section == block.section
            and open_text.block.page == block.page
            and end - open_text.start <= max_chars
        ):
            open_text.last, open_text.end = index, end
            continue
        pieces = split_span(text, start, end, max_chars, TEXT_LEVELS)
        for s, e in pieces:
            drafts.append(_Draft("text", index, index, s, e, block))
        open_text = drafts[-1] if len(pieces) == 1 else None
    return drafts
