"""Quoted text becomes an answer: the quotable units of the evidence, and the answer text with its citations.

Everything the extractive reader writes is a slice of an evidence chunk followed by that chunk's marker
``[n]``; each cited chunk gets one :class:`~lit3r.models.Citation` whose quote is a verbatim slice of it.
:func:`render` quotes whole units (sentences, table rows); :func:`render_span` quotes part of one sentence
as the answer and the whole sentence as the citation's quote, so the reader of the answer sees the
context the span was cut from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lit3r.answers.sentences import Span, Unit, chunk_units, split_sentences
from lit3r.answers.validate import MARKER
from lit3r.models import Answer, Chunk, Citation


@dataclass(frozen=True)
class Candidate:
    """A unit of one evidence chunk, ready to score."""

    rank: int
    chunk: Chunk
    unit: Unit

    @property
    def text(self) -> str:
        """The verbatim unit text (what is quoted)."""
        return self.chunk.text[self.unit.start : self.unit.end]

    @property
    def scoring_text(self) -> str:
        """The unit with its context (a table row with caption and header), what the scorer sees."""
        return f"{self.text}\n{self.unit.context}" if self.unit.context else self.text

    def sentences(self) -> list[Span]:
        """The unit's sentences as spans of ``chunk.text`` (a table row or a one-sentence unit is one span)."""
        found = split_sentences(self.chunk.text, self.unit.start, self.unit.end)
        return found or [(self.unit.start, self.unit.end)]


def candidates(evidence: Sequence[Chunk]) -> list[Candidate]:
    """Every quotable unit of the evidence, in evidence order then position."""
    found = [Candidate(rank, chunk, unit) for rank, chunk in enumerate(evidence) for unit in chunk_units(chunk)]
    return [c for c in found if not MARKER.search(c.text)]


def render(question: str, chosen: list[Candidate], prefix: str = "") -> Answer:
    """The answer text ``"<sentence> [1] <sentence> [2]"`` and one citation per distinct chunk.

    A chosen unit of several sentences (a caption, a paragraph's closing lines) gets its marker after each
    of them, so every sentence of the answer is a claim that names its source. A chunk's quote runs from
    its first chosen unit to its last, so it is one verbatim slice; its ``quotes`` hold each marker's own
    sentence, in the order of the markers, so a chunk cited by two sentences shows each its own quote.
    """
    numbers: dict[str, int] = {}
    spans: dict[str, tuple[Chunk, int, int]] = {}
    own: dict[str, list[str]] = {}
    parts = []
    for candidate in chosen:
        chunk, unit = candidate.chunk, candidate.unit
        number = numbers.setdefault(chunk.id, len(numbers) + 1)
        _, start, end = spans.get(chunk.id, (chunk, unit.start, unit.end))
        spans[chunk.id] = (chunk, min(start, unit.start), max(end, unit.end))
        for s, e in candidate.sentences():
            parts.append(f"{chunk.text[s:e]} [{number}]")
            own.setdefault(chunk.id, []).append(chunk.text[s:e])
    citations = [
        Citation(
            number=numbers[cid],
            chunk_id=cid,
            paper_id=c.paper_id,
            locator=c.locator,
            quote=c.text[s:e],
            quotes=own[cid],
        )
        for cid, (c, s, e) in spans.items()
    ]
    return Answer(question=question, text=prefix + " ".join(parts), citations=citations, sufficient=True)


def render_span(question: str, chunk: Chunk, span: Span, context: Span, prefix: str = "") -> Answer:
    """The answer ``"<prefix><chunk.text[span]> [1]"``, citing ``chunk`` with the sentence ``chunk.text[context]``."""
    if not (context[0] <= span[0] < span[1] <= context[1]):
        raise ValueError(f"span {span} is not inside its context {context}")
    citation = Citation(
        number=1, chunk_id=chunk.id, paper_id=chunk.paper_id, locator=chunk.locator, quote=chunk.text[slice(*context)]
    )
    text = f"{prefix}{chunk.text[slice(*span)]} [1]"
    return Answer(question=question, text=text, citations=[citation], sufficient=True)


def joined(question: str, answers: Sequence[Answer], chunks: Mapping[str, Chunk]) -> Answer:
    """One answer made of several quoted answers in order (the parts of a question that asks two things): the
    markers renumbered so that each chunk keeps one number, a chunk cited by several parts quoted once from its
    first quoted sentence to its last, each marker's own quote kept. Every part must be sufficient."""
    numbers: dict[str, int] = {}
    own: dict[str, list[str]] = {}
    texts = []
    for answer in answers:
        by_number = {c.number: c for c in answer.citations}
        for citation in answer.citations:
            numbers.setdefault(citation.chunk_id, len(numbers) + 1)
            own.setdefault(citation.chunk_id, []).extend(citation.quotes or [citation.quote])

        def renumber(match, by_number=by_number) -> str:
            cited = [numbers[by_number[int(n)].chunk_id] for n in match.group(1).split(",")]
            return "[" + ", ".join(str(n) for n in dict.fromkeys(cited)) + "]"

        texts.append(MARKER.sub(renumber, answer.text))
    citations = []
    for chunk_id, number in numbers.items():
        chunk = chunks[chunk_id]
        found = [(at, at + len(q)) for q in own[chunk_id] if (at := chunk.text.find(q)) >= 0]
        start, end = min(s for s, _ in found), max(e for _, e in found)
        citations.append(
            Citation(
                number=number, chunk_id=chunk_id, paper_id=chunk.paper_id, locator=chunk.locator,
                quote=chunk.text[start:end], quotes=own[chunk_id],
                cell=next((c.cell for a in answers for c in a.citations if c.chunk_id == chunk_id and c.cell), None),
            )
        )  # fmt: skip
    return Answer(question=question, text=" ".join(texts), citations=citations, sufficient=True)
