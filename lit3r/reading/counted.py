"""A "how many N" question's evidence completed with the chunks of the papers read that count N.

Retrieval ranks chunks by how much of the question they share, and the learned fusion has learned that an
abstract or a table is rarely QASPER's gold evidence; so a paper's count of what is asked ("a benchmark of 1,240
questions", a table captioned "Number of questions per family and split") can be missing from the reader's
evidence while another paper's count of a part ("the 1,000 test questions of LocatorQA") is there. When no
evidence chunk counts N (:func:`lit3r.reading.scoring.counts`: a number followed by N, or numbers under "number
of N"; a count of one split only when the question names a split), each paper read adds its first
:data:`PER_PAPER` chunks, in reading order, that do. Nothing is added for any other question, or when the
evidence already holds a count of N.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lit3r.models import Chunk
from lit3r.reading.scoring import counted_noun, counts, names_split

PER_PAPER = 2
"""At most this many counting chunks added per paper read (its first ones in reading order)."""


def counting_chunks(
    evidence: Sequence[Chunk], paper_chunks: Mapping[str, Sequence[Chunk]], question: str
) -> list[Chunk]:
    """``evidence``, then the chunks of its papers (``paper_chunks``: each paper's chunks in reading order) that
    count what the question counts, when none of it does (see the module docstring); the same list otherwise."""
    noun = counted_noun(question)
    if noun is None:
        return list(evidence)
    splits = names_split(question)
    if any(counts(chunk.text, noun, splits) for chunk in evidence):
        return list(evidence)
    present = {chunk.id for chunk in evidence}
    added: list[Chunk] = []
    for paper in dict.fromkeys(chunk.paper_id for chunk in evidence):
        found = [c for c in paper_chunks.get(paper, ()) if c.id not in present and counts(c.text, noun, splits)]
        added += found[:PER_PAPER]
    return [*evidence, *added]
