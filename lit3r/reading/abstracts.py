"""A which-paper question's evidence completed with the abstracts of the papers read.

"Which paper introduced LocatorQA?" is answered by what a paper says it does, and a paper says that in its
abstract; but the learned fusion has learned that an abstract is rarely QASPER's gold evidence, so a paper's
abstract can be missing from the reader's evidence while five of its body chunks are there. For a question asking
which paper or papers say something (:func:`lit3r.answers.question.asked_papers`), each paper read adds its
title-abstract chunk when the evidence lacks it. Nothing is added for any other question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lit3r.answers.question import asked_papers
from lit3r.models import Chunk


def with_abstracts(
    evidence: Sequence[Chunk], paper_chunks: Mapping[str, Sequence[Chunk]], question: str
) -> list[Chunk]:
    """``evidence``, then the title-abstract chunks of its papers (``paper_chunks``: each paper's chunks) that it
    lacks, for a which-paper question (see the module docstring); the same list otherwise."""
    if asked_papers(question) is None:
        return list(evidence)
    present = {chunk.id for chunk in evidence}
    added = [
        c
        for paper in dict.fromkeys(chunk.paper_id for chunk in evidence)
        for c in paper_chunks.get(paper, ())
        if c.type == "title_abstract" and c.id not in present
    ]
    return [*evidence, *added]
