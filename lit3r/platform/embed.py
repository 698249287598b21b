"""lit3r inside a host's LangGraph agent: the six tools bound to a corpus, or the whole agent as one subgraph.

* :class:`CorpusToolkit` hands a host agent the six tools (``search_chunks``, ``rerank``, ``expand_neighbors``,
  ``read_paper``, ``verify_sufficiency``, ``synthesize_answer``) as LangChain tools bound to a
  :class:`~lit3r.app.session.Session`. Their descriptions are the ones lit3r's own planner reads; the shared
  chunk pool, the verdicts and the final papers live in the toolkit (one toolkit per line of inquiry), merged by
  the same rules as lit3r's graph state. ``synthesize_answer`` writes the answer's trace, like ``ask``.
* :func:`agent_subgraph` is lit3r's whole answer path as a compiled graph with a narrow input
  (:class:`AgentInput`: question, options, papers) and output (:class:`AgentOutput`: answer, citations,
  sufficient, candidate papers, trace id). Add it as a node of a host graph whose state has those keys, or call
  it from a node. Each completed trace step is also sent as a custom stream event (``stream_mode="custom"``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NotRequired

from langchain_core.tools import BaseTool, StructuredTool
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from lit3r.agent.adapters import AGENT_TOOLS, answer_status, papers_of
from lit3r.agent.state import append, append_unseen, keep_max, reduce_pool
from lit3r.app.session import Session
from lit3r.app.traces import summarize
from lit3r.models import Answer, TraceEvent
from lit3r.tools import expand_neighbors as expand
from lit3r.tools import read_paper as read
from lit3r.tools import rerank as rescore
from lit3r.tools import search_chunks as search
from lit3r.tools import synthesize_answer as synthesize
from lit3r.tools import verify_sufficiency as verify
from lit3r.tools.context import ToolContext

DESCRIPTIONS = {t.name: t.description for t in AGENT_TOOLS}
"""The planner's contract of each tool, shown to the host's model too."""
SHOWN_PASSAGES = 5
PASSAGE_CHARS = 300


class AgentInput(TypedDict):
    """What the subgraph reads from its caller's state."""

    question: str
    options: NotRequired[list[str] | None]
    """Options of a multiple-choice question."""
    papers: NotRequired[list[str] | None]
    """Answer from these paper ids only."""


class AgentOutput(TypedDict):
    """What the subgraph writes back."""

    answer: str
    """The answer with inline markers [n] (or the abstention sentence)."""
    citations: list[dict[str, Any]]
    """Each marker's chunk: number, chunk_id, paper_id, locator, quote."""
    sufficient: bool
    candidate_papers: list[str]
    trace_id: str | None


class AgentIO(AgentInput, AgentOutput):
    """The subgraph's own state: its input and its output."""


def trace_event_payload(event: TraceEvent) -> dict[str, Any]:
    """A trace event as a custom stream event: kind, name, round, duration and a one-line summary."""
    return {
        "lit3r": "trace_event",
        "type": event.type,
        "name": event.name,
        "round": event.round,
        "duration_ms": event.duration_ms,
        "summary": summarize(event.model_dump()),
    }


def output_of(answer: Answer) -> AgentOutput:
    """The subgraph's output for an answer."""
    cited = [c.model_dump(mode="json") for c in answer.citations]
    trace_id = Path(answer.trace_path).stem if answer.trace_path else None
    return AgentOutput(
        answer=answer.text,
        citations=cited,
        sufficient=answer.sufficient,
        candidate_papers=answer.candidate_papers,
        trace_id=trace_id,
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
        writer = get_stream_writer()
        opened = resolve(runtime.context)
        found = opened.ask(
            state["question"],
            options=state.get("options"),
            allowed_papers=state.get("papers"),
            on_event=lambda event: writer(trace_event_payload(event)),
        )
        return output_of(found)

    builder = StateGraph(AgentIO, input_schema=AgentInput, output_schema=AgentOutput, context_schema=context_schema)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile(name=name)


class CorpusToolkit:
    """The six tools bound to a session, sharing one pool (see the module docstring).

    Args:
        session: The session whose index, reranker, gate, verifier and reader the tools use.
        allowed_papers: Restrict every search to these paper ids (None: the whole corpus).
    """

    def __init__(self, session: Session, *, allowed_papers: list[str] | None = None) -> None:
        self.session = session
        self.context = session.context()
        self.allowed_papers = allowed_papers
        self.state: dict[str, Any] = {
            "pool": {},
            "subqueries": [],
            "verdicts": [],
            "named_papers": [],
            "best_reranker_score": None,
            "final_papers": None,
            "round": 0,
        }
        self.answer: Answer | None = None
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
    def _tools(self) -> ToolContext:
        """What the pure tools work with (this toolkit's run context)."""
        return self.context.tools

    def _merge(self, **update: Any) -> None:
        state = self.state
        if "pool" in update:
            state["pool"] = reduce_pool(state["pool"], update["pool"])
        if "best_reranker_score" in update:
            state["best_reranker_score"] = keep_max(state["best_reranker_score"], update["best_reranker_score"])
        for key, rule in (("subqueries", append), ("verdicts", append), ("named_papers", append_unseen)):
            if key in update:
                state[key] = rule(state[key], update[key])
        if {"pool", "named_papers"} & set(update):
            state["final_papers"] = None  # stale: expand_neighbors computes them again

    def search_chunks(self, query: str) -> str:
        """Search one focused query and add its best passages to the pool."""
        self.state["round"] += 1
        self.context.recorder.round = self.state["round"]
        found = search.search_chunks(self._tools, query, self.allowed_papers)
        self._merge(pool=found.pool, subqueries=[found.query], best_reranker_score=found.best_reranker_score)
        pooled = [c for c, _s in found.pool]
        chunks = [self.session.index.chunk_by_id[c] for c in pooled[:SHOWN_PASSAGES]]
        lines = [f"{found.query!r}: {len(pooled)} passages from {len(papers_of(self._tools, pooled))} papers"]
        for chunk in chunks:
            text = " ".join(chunk.text.split())[:PASSAGE_CHARS]
            lines.append(f"- [{chunk.id}] {chunk.paper_id} {chunk.locator.describe()}: {text}")
        return "\n".join(lines)

    def rerank(self, query: str) -> str:
        """Re-score the pooled passages against a sharper query."""
        found = rescore.rerank(self._tools, query, self.state["pool"])
        if found.best_reranker_score is None:
            return "no reranker is configured: the pool is unchanged"
        self._merge(pool=found.pool_update, best_reranker_score=found.best_reranker_score)
        return f"re-scored {len(found.pool)} pooled passages for {query!r}: {len(found.raised)} moved up"

    def expand_neighbors(self) -> str:
        """Fix the final papers: Ranking A of the pool fused with its neighbours (Ranking B)."""
        if not self.state["pool"]:
            raise ValueError("the pool is empty: call search_chunks first")
        found = expand.expand_neighbors(
            self._tools, self.state["pool"], self.state["named_papers"], self.allowed_papers
        )
        self.state["final_papers"] = found.final
        return f"{len(found.final)} final papers; top: {', '.join(p for p, _s in found.final[:SHOWN_PASSAGES])}"

    def read_paper(self, paper_id: str) -> str:
        """One paper's title and best pooled passages."""
        return read.read_paper(self._tools, paper_id, self.state["pool"])

    def verify_sufficiency(self, question: str) -> str:
        """Whether the pool holds enough evidence to answer ``question``."""
        pool, best = self.state["pool"], self.state["best_reranker_score"]
        found = verify.verify_sufficiency(self._tools, question, pool, best, self.allowed_papers)
        self._merge(verdicts=[found.verdict.model_dump()], named_papers=found.named)
        verdict = found.verdict
        status = "sufficient" if verdict.sufficient else f"insufficient; missing: {verdict.missing or 'not said'}"
        return f"{status}; evidence in: {', '.join(found.named) or 'no paper named'}"

    def synthesize_answer(self, question: str) -> str:
        """The cited answer to ``question`` from the final papers' pooled passages; writes its trace."""
        state = self.state
        answer = synthesize.synthesize_answer(
            self._tools,
            question,
            state["pool"],
            state["final_papers"],
            state["best_reranker_score"],
            None,
            state["round"],
        )
        self.answer = self.session.finish(
            self.context, {"answer": answer.model_dump(mode="json"), "verdicts": state["verdicts"]}, None
        )
        sources = [
            f"[{c.number}] {c.chunk_id} ({c.paper_id}, {c.locator.describe()}): “{c.quote}”"
            for c in self.answer.citations
        ]
        return "\n".join([self.answer.text, f"({answer_status(self._tools, self.answer)})", *sources])


def corpus_tools(session: Session, *, allowed_papers: list[str] | None = None) -> CorpusToolkit:
    """The six tools bound to ``session`` (a fresh pool); see :class:`CorpusToolkit`."""
    return CorpusToolkit(session, allowed_papers=allowed_papers)
