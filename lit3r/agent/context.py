"""Run-scoped context: what the graph's nodes and tools need for one question, passed as LangGraph ``context``.

Nodes receive it as ``runtime.context`` (``Runtime[Context]``); tools read it with
:func:`current_context`. Nothing here is graph state: the index, models, trace recorder and budget
live for one run and are never checkpointed.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from langgraph.runtime import get_runtime

from lit3r.agent.trace import TraceRecorder
from lit3r.grounding.judge import Judge
from lit3r.index.corpus_index import CorpusIndex
from lit3r.llm.budget import Budget
from lit3r.llm.wrapper import LLM
from lit3r.models import Answer, Chunk, Paper
from lit3r.retrieval.gate import GateThreshold
from lit3r.retrieval.planning import Decomposer, GateVerifier, HydeWriter, KeywordDecomposer, Verifier
from lit3r.retrieval.rerankers import Reranker
from lit3r.settings import Settings

if TYPE_CHECKING:
    from lit3r.agent.llm_reader import LLMReader

PlannerKind = Literal["fixed", "llm"]


class Reader(Protocol):
    """Answers a question from evidence chunks (best first), citing them; abstains when ``sufficient`` is False."""

    def __call__(
        self, question: str, evidence_chunks: Sequence[Chunk], options: Sequence[str] | None, sufficient: bool
    ) -> Answer: ...


def extractive_reader(
    question: str, evidence_chunks: Sequence[Chunk], options: Sequence[str] | None, sufficient: bool
) -> Answer:
    """The offline reader (:func:`lit3r.tools.reader.extractive_answer`): verbatim quotes, never invents."""
    from lit3r.tools.reader import extractive_answer

    return extractive_answer(question, list(evidence_chunks), options=options, sufficient=sufficient)


class LLMReaderAdapter:
    """The two-stage :class:`~lit3r.agent.llm_reader.LLMReader` as a :class:`Reader`.

    Options become lettered choices (A, B, ...); below the gate (``sufficient`` False) the model is not
    called and the answer abstains.
    """

    def __init__(self, reader: LLMReader, papers: Mapping[str, Paper]) -> None:
        self.reader = reader
        self.papers = papers
        self.__name__ = "llm_reader"

    def __call__(
        self, question: str, evidence_chunks: Sequence[Chunk], options: Sequence[str] | None, sufficient: bool
    ) -> Answer:
        from lit3r.prompts.common import AnswerSpec
        from lit3r.tools.reader import insufficient_answer

        if not sufficient:
            return insufficient_answer(question)
        lettered = {string.ascii_uppercase[i]: option for i, option in enumerate(options or [])}
        spec = AnswerSpec(types=["multiple_choice"], options=lettered) if lettered else AnswerSpec()
        order = dict.fromkeys(c.paper_id for c in evidence_chunks)
        papers = [self.papers[p] for p in order if p in self.papers]
        answer = self.reader.read(question, papers, list(evidence_chunks), spec)
        if answer.option in lettered:  # the LLM reader names the letter; answers carry the option itself
            answer = answer.model_copy(update={"option": lettered[answer.option]})
        return answer


@dataclass
class Context:
    """Everything one run of the agent graph uses besides its state.

    Attributes:
        index: The corpus index the tools search.
        settings: All settings; ``settings.retriever`` drives retrieval, rounds and verification.
        reranker: Chunk reranker (None: retrieval order only).
        gate: Calibrated relevance-gate threshold (None: uncalibrated, every question is read).
        planner: 'fixed' emits the Lit3R sequence without a model; 'llm' lets ``planner_model`` choose.
        planner_model: The chat model with the six tools bound, wrapped in :class:`LLM` (llm planner only).
        llm: The plain chat model, for LLM-backed decomposer, verifier, HyDE and reader (None: offline).
        decomposer: Writes subqueries for the fixed planner (offline: keywords in round 1 only).
        verifier: Judges sufficiency; None means :class:`GateVerifier` over ``gate``.
        hyde: Writes HyDE passages for short queries (None: the query itself is the dense query).
        reader: Answers from the final papers' chunks (offline: the extractive reader).
        judge: Checks each sentence of the answer against the chunks it cites (None: answers are not verified);
            ``settings.grounding`` says what happens to unsupported sentences.
        recorder: Collects the trace; also the LLM wrappers' recorder.
        budget: Rounds, time, tokens and cost of this question.
        max_turns: Planner turns after which the answer step is forced (a guard against tool loops).
    """

    index: CorpusIndex
    settings: Settings
    reranker: Reranker | None = None
    gate: GateThreshold | None = None
    planner: PlannerKind = "fixed"
    planner_model: LLM | None = None
    llm: LLM | None = None
    decomposer: Decomposer = field(default_factory=KeywordDecomposer)
    verifier: Verifier | None = None
    hyde: HydeWriter | None = None
    reader: Reader = extractive_reader
    judge: Judge | None = None
    recorder: TraceRecorder = field(default_factory=TraceRecorder)
    budget: Budget = field(default_factory=Budget)
    max_turns: int = 24

    def __post_init__(self) -> None:
        if self.verifier is None:
            self.verifier = GateVerifier(self.gate)
        if self.planner == "llm" and self.planner_model is None:
            raise ValueError("planner 'llm' needs a chat model (planner_model); configure llm or use planner 'fixed'")

    @property
    def max_rounds(self) -> int:
        """The hard cap on retrieval rounds: the retriever's ``max_rounds``, or the budget's if lower."""
        caps = [self.settings.retriever.max_rounds, self.budget.max_rounds]
        return min(c for c in caps if c is not None)


def current_context() -> Context:
    """The :class:`Context` of the graph run this call happens in (for tools, which get no ``runtime``)."""
    context = get_runtime(Context).context
    if not isinstance(context, Context):
        raise RuntimeError("the agent graph was invoked without a lit3r Context (pass context=Context(...))")
    return context
