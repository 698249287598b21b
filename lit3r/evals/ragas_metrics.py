"""RAGAS-style metrics judged by an LLM: faithfulness, answer relevancy, context precision, context recall.

Our own implementation of the published definitions (Es et al., 2023, "RAGAS: Automated Evaluation of Retrieval
Augmented Generation", and the ragas documentation): the ``ragas`` library would replace our pinned openai,
langchain-openai, rich and tenacity versions, so it is not used. Each metric is a pure function of the judge's
verdicts (below), and :class:`RagasJudge` gets the verdicts from an :class:`~lit3r.llm.wrapper.LLM` with structured
output (prompts in :mod:`lit3r.prompts.ragas`).

* **faithfulness** = statements of the answer the retrieved contexts support / statements of the answer. The LLM
  breaks the answer into statements (one call), then judges each against the contexts (one call).
* **answer relevancy** = mean cosine similarity between the question and ``n`` questions the LLM writes from the
  answer alone (ragas' ``strictness``, 3), 0 when the LLM finds the answer noncommittal. The embeddings are the
  project's dense query encoder. (ragas samples the ``n`` questions in ``n`` generations; we ask for ``n``
  different questions in one call.)
* **context precision** = sum over ranks k of precision@k x v_k, divided by the number of useful contexts, where
  v_k = 1 when the k-th context was useful in arriving at the reference answer (0 when none is). One call judges
  all the ranked contexts.
* **context recall** = statements of the reference answer attributable to the contexts / statements of the
  reference answer (one call breaks the reference into statements and attributes each).

A metric whose judge call fails (:class:`~lit3r.llm.errors.LLMError`) is left out for that question and counted
in ``ragas_errors``; a metric with no statement to score (faithfulness of an answer asserting nothing) is left out
too, as ragas returns NaN there. Reported values are means over the questions that have one.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from lit3r.index.encoders import Encoder
from lit3r.llm.errors import LLMError
from lit3r.llm.wrapper import LLM
from lit3r.prompts import ragas as prompts

log = logging.getLogger(__name__)

METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")
QUESTIONS_PER_ANSWER = 3
"""ragas' default ``strictness``: how many questions are generated from an answer."""


class Statements(BaseModel):
    """The statements an answer makes."""

    statements: list[str] = Field(default_factory=list, description="Self-contained statements, in order.")


class StatementVerdict(BaseModel):
    """Whether the contexts support one numbered statement."""

    index: int = Field(description="The statement's 1-based number.")
    supported: bool = Field(description="True when the statement can be inferred from the passages.")
    reason: str = Field(default="", description="One short sentence.")


class StatementVerdicts(BaseModel):
    """A verdict per statement."""

    verdicts: list[StatementVerdict] = Field(default_factory=list)


class GeneratedQuestions(BaseModel):
    """Questions the answer answers, and whether the answer is noncommittal."""

    questions: list[str] = Field(default_factory=list, description="Different questions the answer answers.")
    noncommittal: bool = Field(default=False, description="True for an evasive or 'cannot answer' answer.")


class ContextVerdict(BaseModel):
    """Whether one ranked context was useful for the reference answer."""

    id: str = Field(description="The passage id, c1 for the first ranked passage.")
    useful: bool = Field(description="True when the passage states something the reference answer needs.")
    reason: str = Field(default="", description="One short sentence.")


class ContextVerdicts(BaseModel):
    """A usefulness verdict per ranked context."""

    verdicts: list[ContextVerdict] = Field(default_factory=list)


class ReferenceStatement(BaseModel):
    """One statement of the reference answer and whether the contexts hold it."""

    statement: str = Field(description="One fact the reference answer asserts.")
    attributed: bool = Field(description="True when the passages state it or it follows from them.")
    reason: str = Field(default="", description="One short sentence.")


class ReferenceStatements(BaseModel):
    """The reference answer's statements, each attributed or not."""

    statements: list[ReferenceStatement] = Field(default_factory=list)


# The definitions, as pure functions of the verdicts.


def faithfulness_score(supported: Sequence[bool]) -> float | None:
    """Supported statements / statements; None without statements."""
    return sum(supported) / len(supported) if supported else None


def context_precision_score(useful: Sequence[bool]) -> float:
    """Mean of precision@k over the ranks k of the useful contexts (0 when none is useful)."""
    hits, total = 0, 0.0
    for k, relevant in enumerate(useful, 1):
        if relevant:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


def context_recall_score(attributed: Sequence[bool]) -> float | None:
    """Attributed reference statements / reference statements; None without statements."""
    return sum(attributed) / len(attributed) if attributed else None


def answer_relevancy_score(question: np.ndarray, generated: np.ndarray, noncommittal: bool) -> float | None:
    """Mean cosine similarity of the question vector to each generated question's; 0 if noncommittal."""
    if generated.size == 0:
        return None
    if noncommittal:
        return 0.0
    norms = np.linalg.norm(generated, axis=1) * np.linalg.norm(question)
    cosines = generated @ question / np.where(norms == 0, 1.0, norms)
    return float(np.mean(cosines))


# The judge.


@dataclass(frozen=True)
class RagasSample:
    """What the metrics read for one question: the answer (markers removed), ranked contexts, a reference."""

    question_id: str
    question: str
    answer: str
    contexts: tuple[str, ...]
    reference: str | None = None
    """A gold answer; without one, context precision and recall are not computed."""


class RagasJudge:
    """Computes the four metrics of one sample with an LLM judge and a query encoder."""

    def __init__(self, llm: LLM, encoder: Encoder, questions_per_answer: int = QUESTIONS_PER_ANSWER) -> None:
        self.llm = llm
        self.encoder = encoder
        self.questions_per_answer = questions_per_answer

    def faithfulness(self, sample: RagasSample) -> float | None:
        """Share of the answer's statements the contexts support."""
        messages = self._messages(prompts.render_statements(sample.question, sample.answer))
        statements = [s for s in self.llm.structured(messages, Statements, name="ragas.statements").statements if s]
        if not statements:
            return None
        prompt = prompts.render_faithfulness(statements, sample.contexts)
        reply = self.llm.structured(self._messages(prompt), StatementVerdicts, name="ragas.faithfulness")
        supported = {v.index for v in reply.verdicts if v.supported}
        return faithfulness_score([i in supported for i in range(1, len(statements) + 1)])

    def answer_relevancy(self, sample: RagasSample) -> float | None:
        """Mean cosine similarity of the question to questions generated from the answer."""
        prompt = prompts.render_answer_relevancy(sample.answer, self.questions_per_answer)
        reply = self.llm.structured(self._messages(prompt), GeneratedQuestions, name="ragas.answer_relevancy")
        generated = [q for q in reply.questions if q.strip()]
        if not generated:
            return None
        vectors = np.asarray(self.encoder.encode_queries([sample.question, *generated]), dtype=float)
        return answer_relevancy_score(vectors[0], vectors[1:], reply.noncommittal)

    def context_precision(self, sample: RagasSample) -> float | None:
        """Mean precision@k over the ranks of the contexts useful for the reference answer."""
        if sample.reference is None or not sample.contexts:
            return None
        prompt = prompts.render_context_precision(sample.question, sample.reference, sample.contexts)
        reply = self.llm.structured(self._messages(prompt), ContextVerdicts, name="ragas.context_precision")
        useful = {v.id.strip() for v in reply.verdicts if v.useful}
        return context_precision_score([f"c{k}" in useful for k in range(1, len(sample.contexts) + 1)])

    def context_recall(self, sample: RagasSample) -> float | None:
        """Share of the reference answer's statements attributable to the contexts."""
        if sample.reference is None or not sample.contexts:
            return None
        prompt = prompts.render_context_recall(sample.question, sample.reference, sample.contexts)
        reply = self.llm.structured(self._messages(prompt), ReferenceStatements, name="ragas.context_recall")
        return context_recall_score([s.attributed for s in reply.statements if s.statement.strip()])

    def score(self, sample: RagasSample) -> tuple[dict[str, float | None], list[str]]:
        """Every metric of one sample, and the errors of the judge calls that failed (their metric is None)."""
        scores: dict[str, float | None] = {}
        errors = []
        for metric in METRICS:
            try:
                scores[metric] = getattr(self, metric)(sample)
            except LLMError as exc:  # one failed judge call loses one metric of one question, not the run
                log.warning("ragas %s of question %s failed: %s", metric, sample.question_id, exc)
                scores[metric] = None
                errors.append(f"{sample.question_id} {metric}: {exc}")
        return scores, errors

    @staticmethod
    def _messages(prompt: str) -> list[tuple[str, str]]:
        return [("system", prompts.RAGAS_SYSTEM), ("human", prompt)]


def ragas_metrics(
    samples: Sequence[RagasSample], judge: RagasJudge, on_sample: Callable[[], None] | None = None
) -> dict[str, Any]:
    """The four metrics averaged over ``samples`` (each over the samples that have it), with counts and errors."""
    values: dict[str, list[float]] = {metric: [] for metric in METRICS}
    errors: list[str] = []
    for sample in samples:
        scores, failed = judge.score(sample)
        errors += failed
        for metric, value in scores.items():
            if value is not None:
                values[metric].append(value)
        if on_sample:
            on_sample()
    report: dict[str, Any] = {m: statistics.fmean(v) if v else None for m, v in values.items()}
    report["ragas_counts"] = {m: len(v) for m, v in values.items()}
    report["ragas_errors"] = errors
    return report
