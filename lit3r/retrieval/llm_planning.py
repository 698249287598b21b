"""LLM versions of the retrieval-round planners of :mod:`lit3r.retrieval.planning` (seed §2.1.2, Appendix C).

* :class:`LLMDecomposer` writes the round's subqueries; on a failed call it falls back to the question itself.
* :class:`LLMVerifier` judges the pool's top papers; on a failed call the verdict is "insufficient" with a
  'verifier failed' note, so the rounds go on (or stop at the round limit) instead of crashing.
* :class:`LLMHyde` writes a hypothetical passage for a short query; on a failed call the query is used as is.

Each asks :meth:`LLM.structured` for a pydantic schema; only :class:`~lit3r.llm.errors.LLMError` is caught. Every
fallback is logged and recorded as a :class:`~lit3r.models.Fallback` in the run's trace (the recorder given, else
one of its own).

They live in :mod:`lit3r.retrieval` beside the protocols they implement and their model-free versions
(:mod:`lit3r.retrieval.planning`): the round machinery takes any of them, and nothing here knows the graph.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from lit3r.llm.errors import LLMError
from lit3r.llm.trace import TraceRecorder
from lit3r.llm.wrapper import LLM
from lit3r.models import Chunk, Fallback, Paper, PaperEvidence
from lit3r.prompts.common import RETRIEVER_SYSTEM, AnswerSpec
from lit3r.prompts.retrieval import (
    KNOWN_VENUES,
    render_decompose,
    render_hyde,
    render_listing,
    render_verify,
    venue_year_tag,
)
from lit3r.retrieval.planning import Verdict, new_subqueries
from lit3r.textutil import fold_space

logger = logging.getLogger(__name__)

VERIFIER_FAILED = "verifier failed"
"""Starts the missing note of a verdict made up after a failed verification call."""


class Subqueries(BaseModel):
    """Search subqueries for one retrieval round."""

    subqueries: list[str] = Field(description="Short, self-contained search queries; empty when nothing is new.")


class EvidenceVerdict(BaseModel):
    """Which papers hold evidence and whether the evidence suffices."""

    papers_with_evidence: list[str] = Field(default_factory=list, description="Ids of papers holding evidence.")
    sufficient: bool = Field(description="True when the listed chunks answer the question completely.")
    missing: str = Field(default="", description="What is still missing; empty when sufficient.")


class HydePassage(BaseModel):
    """A hypothetical passage that would answer the query."""

    passage: str = Field(description="80 to 150 words in the style of a scientific paper.")


def _messages(prompt: str) -> list[SystemMessage | HumanMessage]:
    """The retriever system prompt and one user message (no history is carried across calls)."""
    return [SystemMessage(RETRIEVER_SYSTEM), HumanMessage(prompt)]


def clean_subqueries(raw: Iterable[str], previous: Sequence[str], limit: int, tag: str | None) -> list[str]:
    """Subqueries with the venue tag put in front when missing, then :func:`new_subqueries` (spacing folded,
    empties and repeats of each other or of ``previous`` dropped, case ignored), at most ``limit``."""
    folded = [fold_space(q) for q in raw]
    tagged = [f"{tag} {q}" if q and tag and not q.startswith(tag) else q for q in folded]
    return new_subqueries(tagged, previous, limit)


class LLMDecomposer:
    """:class:`~lit3r.retrieval.planning.Decomposer` over an LLM (Figures 3, 4 and 6 of the seed).

    Round 1 asks for ``limit`` subqueries; later rounds show the earlier subqueries and the verifier's missing
    note and accept an empty list (which ends the rounds). A failed call gives ``[question]``.
    """

    name = "llm"

    def __init__(
        self, llm: LLM, *, venues: Iterable[str] = KNOWN_VENUES, recorder: TraceRecorder | None = None
    ) -> None:
        self.llm = llm
        self.venues = tuple(venues)
        self.recorder = recorder if recorder is not None else TraceRecorder()

    def decompose(self, question: str, previous: Sequence[str], missing: str, limit: int) -> list[str]:
        """Up to ``limit`` new subqueries; round 1 (``previous`` empty) never returns an empty list."""
        if limit < 1:
            return []
        prompt = render_decompose(question, previous, missing, limit, self.venues)
        try:
            reply = self.llm.structured(_messages(prompt), Subqueries, name="decompose")
        except LLMError as exc:
            self.recorder.fallback(Fallback(stage="decompose", reason=str(exc)), subqueries=[question])
            return [question]
        out = clean_subqueries(reply.subqueries, previous, limit, venue_year_tag(question, self.venues))
        return out or ([] if previous else [question])


class LLMVerifier:
    """:class:`~lit3r.retrieval.planning.Verifier` over an LLM (Figure 5 of the seed).

    Args:
        llm: the model wrapper.
        papers: paper records by id, for venue and year in the listing (e.g. ``CorpusIndex.papers``).
        chunks: chunks by id, for type and locator in the listing (e.g. ``CorpusIndex.chunk_by_id``).
        spec: the answer form the question asks for (set per question; free form when omitted).
        chunk_chars: characters each shown chunk is cut to.
        recorder: the run's trace, which gets a fallback when a call fails.
    """

    name = "llm"

    def __init__(
        self,
        llm: LLM,
        *,
        papers: Mapping[str, Paper] | None = None,
        chunks: Mapping[str, Chunk] | None = None,
        spec: AnswerSpec | None = None,
        chunk_chars: int = 1800,
        recorder: TraceRecorder | None = None,
    ) -> None:
        self.llm = llm
        self.papers = papers or {}
        self.chunks = chunks or {}
        self.spec = spec
        self.chunk_chars = chunk_chars
        self.recorder = recorder if recorder is not None else TraceRecorder()

    def verify(self, question: str, evidence: Sequence[PaperEvidence], best_score: float | None) -> Verdict:
        """The model's verdict; paper ids it did not see are dropped. ``best_score`` is not shown to it."""
        if not evidence:
            return Verdict(sufficient=False, missing="nothing was retrieved yet")
        listing = render_listing(self.papers, evidence, self.chunks, chunk_chars=self.chunk_chars)
        try:
            reply = self.llm.structured(
                _messages(render_verify(question, listing, self.spec)), EvidenceVerdict, name="verify"
            )
        except LLMError as exc:
            self.recorder.fallback(Fallback(stage="verify", reason=str(exc)))
            return Verdict(sufficient=False, missing=f"{VERIFIER_FAILED} ({type(exc).__name__})")
        shown = {item.paper_id for item in evidence}
        papers = list(dict.fromkeys(p.strip() for p in reply.papers_with_evidence if p.strip() in shown))
        missing = "" if reply.sufficient else reply.missing.strip()
        return Verdict(sufficient=reply.sufficient, papers_with_evidence=papers, missing=missing)


class LLMHyde:
    """:class:`~lit3r.retrieval.planning.HydeWriter` over an LLM; a failed call returns the query itself."""

    name = "llm"

    def __init__(self, llm: LLM, *, recorder: TraceRecorder | None = None) -> None:
        self.llm = llm
        self.recorder = recorder if recorder is not None else TraceRecorder()

    def write(self, query: str) -> str:
        """A passage that would answer ``query`` (or ``query`` when the model fails or writes nothing)."""
        try:
            reply = self.llm.structured(_messages(render_hyde(query)), HydePassage, name="hyde")
        except LLMError as exc:
            self.recorder.fallback(Fallback(stage="hyde", reason=str(exc)))
            return query
        return " ".join(reply.passage.split()) or query
