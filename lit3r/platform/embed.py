"""lit3r inside a host's LangGraph agent: the six tools bound to a corpus, or the whole agent as one subgraph.

* :class:`CorpusToolkit` hands a host agent the six tools (``search_chunks``, ``rerank``, ``expand_neighbors``,
  ``read_paper``, ``verify_sufficiency``, ``synthesize_answer``) as LangChain tools bound to a
  :class:`~lit3r.app.session.Session`. Their descriptions are the ones lit3r's planner reads, and each call runs
  the same step as lit3r's own tool of that name (:data:`lit3r.agent.adapters.STEPS`), its update merged into
  the toolkit's state by the graph state's reducers (:func:`lit3r.agent.state.apply_update`): one toolkit is
  one line of inquiry with one pool. ``synthesize_answer`` closes the answer as the graph does (stable citation
  numbers, fallbacks) and writes its trace, like ``ask``.
* :func:`agent_subgraph` is lit3r's whole answer path as a compiled graph with a narrow input
  (:class:`AgentInput`: question, options, papers) and output (:class:`AgentOutput`: answer, citations,
  sufficient, candidate papers, trace id, and the whole answer document). Add it as a node of a host graph whose
  state has those keys (keys the host lacks are left out), or call it from a node. Each completed trace step is
  also sent as a custom stream event (``stream_mode="custom"``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, NotRequired

from langchain_core.tools import BaseTool, StructuredTool
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from lit3r.agent.adapters import AGENT_TOOLS, STEPS, Step
from lit3r.agent.nodes import closing_update
from lit3r.agent.planner import search_round
from lit3r.agent.state import apply_update, question_reset
from lit3r.app.documents import AnswerDocument, step_view
from lit3r.app.errors import UserError
from lit3r.app.session import Session
from lit3r.models import Answer, TraceEvent

DESCRIPTIONS = {t.name: t.description for t in AGENT_TOOLS}
"""The planner's contract of each tool, shown to the host's model too."""


class AgentInput(TypedDict):
    """What the subgraph reads from its caller's state."""

    question: str
    options: NotRequired[list[str] | None]
    """Options of a multiple-choice question."""
    papers: NotRequired[list[str] | None]
    """Answer from these paper ids only."""


INPUT_SHAPE = "{'question': str} (optional: 'options': [str], 'papers': [paper id])"


def check_input(state: dict[str, Any]) -> None:
    """A run's input as :class:`AgentInput` wants it; :class:`UserError` naming the expected input and the keys
    received otherwise (the graph drops keys it does not know before this node sees them)."""
    question = state.get("question")
    if isinstance(question, str) and question.strip():
        return
    received = sorted(k for k, v in state.items() if v is not None) or "none of them"
    problem = "an empty 'question'" if isinstance(question, str) else "no 'question'"
    raise UserError(f"the run's input has {problem}: it must be {INPUT_SHAPE}; keys received: {received}",
                    "invalid_input")  # fmt: skip


class AgentOutput(TypedDict):
    """What the subgraph writes back: fields of the answer document, and the document itself."""

    answer: str
    """The answer with inline markers [n] (or the abstention sentence)."""
    citations: list[dict[str, Any]]
    """Each marker's chunk: number, chunk_id, paper_id, paper_title, locator, quote."""
    sufficient: bool
    candidate_papers: list[str]
    trace_id: str | None
    document: dict[str, Any]
    """The whole answer document (:class:`~lit3r.app.documents.AnswerDocument`, as JSON)."""


class AgentIO(AgentInput, AgentOutput):
    """The subgraph's own state: its input and its output."""


def trace_event_payload(event: TraceEvent) -> dict[str, Any]:
    """A trace event as a custom stream event: the stream step of :func:`~lit3r.app.documents.step_view`."""
    return {"lit3r": "trace_event", **step_view(event)}


def output_of(document: AnswerDocument) -> AgentOutput:
    """The subgraph's output for an answer document."""
    data = document.model_dump(mode="json")
    return AgentOutput(
        answer=data["answer"],
        citations=data["citations"],
        sufficient=data["sufficient"],
        candidate_papers=data["candidate_papers"],
        trace_id=data["trace_id"],
        document=data,
    )


def agent_subgraph(
    session: Session | Callable[[Any], Session],
    *,
    context_schema: type | None = None,
    name: str = "lit3r",
) -> CompiledStateGraph:
    """lit3r's agent as a graph from :class:`AgentInput` to :class:`AgentOutput`, compiled without a
    checkpointer (a host's, or the platform's, applies).

    Args:
        session: The session that answers, or a function from the run's context (``runtime.context``) to one.
        context_schema: The graph's context schema when ``session`` is such a function.
        name: The compiled graph's name.
    """
    resolve = session if callable(session) and not isinstance(session, Session) else (lambda _context: session)

    def answer(state: AgentInput, runtime: Runtime) -> AgentOutput:
        check_input(state)
        writer = get_stream_writer()
        reply = resolve(runtime.context).reply(
            state["question"],
            options=state.get("options"),
            allowed_papers=state.get("papers"),
            on_event=lambda event: writer(trace_event_payload(event)),
        )
        return output_of(reply.document)

    builder = StateGraph(AgentIO, input_schema=AgentInput, output_schema=AgentOutput, context_schema=context_schema)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile(name=name)


class CorpusToolkit:
    """The six tools bound to a session, sharing one state (see the module docstring).

    A run of ``search_chunks`` calls with no other call between them is one retrieval round, as the calls of
    one planner turn are in lit3r's graph (a host's tool node may run them in parallel).

    Args:
        session: The session whose index, reranker, gate, verifier and reader the tools use.
        allowed_papers: Restrict every search to these paper ids (None: the whole corpus).
    """

    def __init__(self, session: Session, *, allowed_papers: list[str] | None = None) -> None:
        self.session = session
        self.context = session.context()
        self.allowed_papers = session.check_papers(allowed_papers)
        self.state: dict[str, Any] = apply_update(
            {"question": "", "options": None, "allowed_papers": self.allowed_papers}, question_reset()
        )
        self.answer: Answer | None = None
        self._last_call: str | None = None
        self._lock = threading.Lock()
        self.tools: list[BaseTool] = [
            self._tool(self.search_chunks),
            self._tool(self.rerank),
            self._tool(self.expand_neighbors),
            self._tool(self.read_paper),
            self._tool(self.verify_sufficiency),
            self._tool(self.synthesize_answer),
        ]

    @staticmethod
    def _tool(method: Callable[..., str]) -> BaseTool:
        return StructuredTool.from_function(method, name=method.__name__, description=DESCRIPTIONS[method.__name__])

    @property
    def stale(self) -> bool:
        """Whether the pool or the named papers changed since the final papers were computed (or never were)."""
        expanded = self.state.get("expanded_at")
        return expanded is None or expanded < self.state.get("changes", 0)

    def _call(self, name: str, **args: Any) -> Step:
        """Run lit3r's step ``name`` on this toolkit's state, recorded as a ``tool`` trace event, and merge its
        update with the state's reducers."""
        with self._lock:
            if name == "search_chunks" and self._last_call != "search_chunks":
                apply_update(self.state, search_round(self.state, self.context, {}))
            self._last_call = name
            state = dict(self.state)
        with self.context.recorder.step("tool", name) as data:
            data["args"] = args
            step = STEPS[name](self.context.tools, state, **args)
            data["status"] = step.status
        with self._lock:
            apply_update(self.state, step.update)
        return step

    def search_chunks(self, query: str) -> str:
        """Search one focused query and add its best passages to the pool."""
        return self._call("search_chunks", query=query).status

    def rerank(self, query: str) -> str:
        """Re-score the pooled passages against a sharper query."""
        return self._call("rerank", query=query).status

    def expand_neighbors(self) -> str:
        """Fix the final papers: Ranking A of the pool fused with its neighbours (Ranking B)."""
        return self._call("expand_neighbors").status

    def read_paper(self, paper_id: str) -> str:
        """One paper's title and best pooled passages."""
        return self._call("read_paper", paper_id=paper_id).status

    def verify_sufficiency(self, question: str) -> str:
        """Whether the pool holds enough evidence to answer ``question``."""
        self.state["question"] = " ".join(question.split())
        return self._call("verify_sufficiency").status

    def synthesize_answer(self, question: str) -> str:
        """The cited answer to ``question`` from the final papers' pooled passages; writes its trace."""
        self.state["question"] = " ".join(question.split())
        step = self._call("synthesize_answer")
        with self.context.recorder.step("node", "finish") as data:
            apply_update(self.state, closing_update(self.state, self.context, data))  # type: ignore[arg-type]
        self.answer = self.session.finish(self.context, self.state, None)
        sources = [
            f"[{c.number}] {c.chunk_id} ({c.paper_id}, {c.locator.describe()}): “{c.quote}”"
            for c in self.answer.citations
        ]
        return "\n".join([self.answer.text, f"({step.status})", *sources])


def corpus_tools(session: Session, *, allowed_papers: list[str] | None = None) -> CorpusToolkit:
    """The six tools bound to ``session`` (a fresh pool); see :class:`CorpusToolkit`."""
    return CorpusToolkit(session, allowed_papers=allowed_papers)
