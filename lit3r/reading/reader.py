"""The one reader protocol: what the ``synthesize_answer`` tool calls, whichever reader is configured.

* :class:`Reader`: answers a question from evidence chunks (best first), citing them; abstains below the gate.
* :class:`ExtractiveReader`: the offline reader (:func:`lit3r.reading.extractive_answer`), verbatim quotes only.
* :class:`ModelReader`: an LLM reader (:class:`~lit3r.reading.llm_reader.LLMReader`, the two-stage Lit3R reader,
  or :class:`~lit3r.reading.compact_reader.CompactReader`, one call over numbered passages) as a :class:`Reader`.
  Both LLM readers share one skeleton, :class:`PaperReader`: a call ``run(question, papers, chunks, spec)`` whose
  :class:`Reading` carries the answer and, when the deterministic reader answered instead, the
  :class:`~lit3r.models.Fallback` that says why.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from lit3r.answers import insufficient_answer
from lit3r.models import Answer, Chunk, Fallback, Paper
from lit3r.prompts.common import AnswerSpec
from lit3r.reading.extractive import extractive_answer


@runtime_checkable
class Reader(Protocol):
    """Answers a question from evidence chunks (best first), citing them; abstains when ``sufficient`` is False."""

    name: str

    def __call__(
        self, question: str, evidence_chunks: Sequence[Chunk], options: Sequence[str] | None, sufficient: bool
    ) -> Answer: ...


class Reading(Protocol):
    """What an LLM reader's run returns: the answer and the fallback, if the deterministic reader answered."""

    answer: Answer
    fallback: Fallback | None


class PaperReader(Protocol):
    """An LLM reader: reads the evidence chunks of the given papers for the answer form ``spec`` asks."""

    def run(self, question: str, papers: Sequence[Paper], chunks: Sequence[Chunk], spec: AnswerSpec) -> Reading: ...


class ExtractiveReader:
    """The offline reader (:func:`lit3r.reading.extractive_answer`): verbatim quotes, never invents.

    Given the corpus's papers it knows their titles, so a question about a named thing is answered first from
    the paper about it (``titles`` of :func:`~lit3r.reading.extractive_answer`).
    """

    name = "extractive"

    def __init__(self, papers: Mapping[str, Paper] | None = None) -> None:
        self.papers = papers or {}

    def __call__(
        self, question: str, evidence_chunks: Sequence[Chunk], options: Sequence[str] | None, sufficient: bool
    ) -> Answer:
        titles = {c.paper_id: p.title for c in evidence_chunks if (p := self.papers.get(c.paper_id)) and p.title}
        return extractive_answer(question, list(evidence_chunks), options=options, sufficient=sufficient, titles=titles)


class ModelReader:
    """An LLM reader (:class:`PaperReader`) as a :class:`Reader`.

    Options become lettered choices (A, B, ...); below the gate (``sufficient`` False) the model is not
    called and the answer abstains. A run that fell back returns the deterministic reader's answer with its
    :class:`~lit3r.models.Fallback` in ``fallback_steps`` (its text is then verbatim quotes, and is verified so).
    """

    name = "llm_reader"

    def __init__(self, reader: PaperReader, papers: Mapping[str, Paper]) -> None:
        self.reader = reader
        self.papers = papers

    def __call__(
        self, question: str, evidence_chunks: Sequence[Chunk], options: Sequence[str] | None, sufficient: bool
    ) -> Answer:
        if not sufficient:
            return insufficient_answer(question)
        lettered = {string.ascii_uppercase[i]: option for i, option in enumerate(options or [])}
        spec = AnswerSpec(types=["multiple_choice"], options=lettered) if lettered else AnswerSpec()
        order = dict.fromkeys(c.paper_id for c in evidence_chunks)
        papers = [self.papers[p] for p in order if p in self.papers]
        result = self.reader.run(question, papers, list(evidence_chunks), spec)
        answer = result.answer
        if result.fallback is not None:
            answer = answer.model_copy(update={"fallback_steps": [result.fallback]})
        if answer.option in lettered:  # the LLM reader names the letter; answers carry the option itself
            answer = answer.model_copy(update={"option": lettered[answer.option]})
        return answer
