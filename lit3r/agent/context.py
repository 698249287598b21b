"""Run-scoped context: what the graph's nodes and tools need for one question, passed as LangGraph ``context``.

Nodes receive it as ``runtime.context`` (``Runtime[Context]``); tools read it with :func:`current_context`.
It is built in one go for each run (:meth:`lit3r.app.session.Session.context`) and never changed after;
nothing here is graph state: the index, models, trace recorder and budget live for one run and are never
checkpointed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from langgraph.runtime import get_runtime

from lit3r.index.corpus_index import CorpusIndex
from lit3r.llm.budget import Budget
from lit3r.llm.trace import TraceRecorder
from lit3r.llm.wrapper import LLM
from lit3r.retrieval.planning import Decomposer, KeywordDecomposer
from lit3r.settings import Settings
from lit3r.tools.context import ToolContext

PlannerKind = Literal["fixed", "llm"]
StopAfter = Literal["answer", "retrieval"]


@dataclass(frozen=True)
class Context:
    """Everything one run of the agent graph uses besides its state.

    Attributes:
        tools: What the six tools work with (index, settings, reranker, gate, verifier, reader, judge, recorder).
        decomposer: Writes subqueries for the fixed planner (offline: keywords in round 1 only).
        planner: 'fixed' emits the Lit3R sequence without a model; 'llm' lets ``planner_model`` choose.
        planner_model: The chat model with the six tools bound (llm planner only).
        llm: The run's plain chat model (None: offline), e.g. for the chat follow-up rewrite.
        budget: Tokens, cost and time of this question.
        max_turns: Planner turns after which the answer step is forced (a guard against tool loops).
        stop_after: 'answer' runs the whole graph; 'retrieval' ends after the final papers, before the reader
            (what the retrieval evaluation and gate calibration run: the same path, stopped early).
    """

    tools: ToolContext
    decomposer: Decomposer = field(default_factory=KeywordDecomposer)
    planner: PlannerKind = "fixed"
    planner_model: LLM | None = None
    llm: LLM | None = None
    budget: Budget = field(default_factory=Budget)
    max_turns: int = 24
    stop_after: StopAfter = "answer"

    def __post_init__(self) -> None:
        if self.planner == "llm" and self.planner_model is None:
            raise ValueError("planner 'llm' needs a chat model (planner_model); configure llm or use planner 'fixed'")

    @property
    def index(self) -> CorpusIndex:
        return self.tools.index

    @property
    def settings(self) -> Settings:
        return self.tools.settings

    @property
    def recorder(self) -> TraceRecorder:
        return self.tools.recorder

    @property
    def max_rounds(self) -> int:
        """The one cap on retrieval rounds: ``settings.retriever.max_rounds``."""
        return self.settings.retriever.max_rounds


def current_context() -> Context:
    """The :class:`Context` of the graph run this call happens in (for tools, which get no ``runtime``)."""
    context = get_runtime(Context).context
    if not isinstance(context, Context):
        raise RuntimeError("the agent graph was invoked without a lit3r Context (pass context=Context(...))")
    return context
