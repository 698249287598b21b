"""Building and running the agent graph in tests: a run context over any index, the graph run, and checks."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from lit3r.agent.adapters import AGENT_TOOLS
from lit3r.agent.context import Context
from lit3r.graphs.agent import build_graph, run_config
from lit3r.llm.budget import Budget
from lit3r.llm.trace import TraceRecorder
from lit3r.llm.wrapper import LLM
from lit3r.models import Answer
from lit3r.retrieval.planning import GateVerifier, KeywordDecomposer
from lit3r.retrieval.rerankers.factory import reranker_for_index
from lit3r.tools.context import ToolContext

DEFAULT: Any = object()


def make_context(
    index: Any,
    model: Any = None,
    *,
    reranker: Any = DEFAULT,
    decomposer: Any = None,
    budget: Budget | None = None,
    stop_after: str = "answer",
    **tools: Any,
) -> Context:
    """A run context over ``index`` with the bi-encoder reranker; with ``model`` (a scripted chat model), the LLM
    planner. ``tools`` override fields of the :class:`ToolContext` (verifier, reader, gate, judge, hyde)."""
    recorder = tools.pop("recorder", None) or TraceRecorder()
    tools.setdefault("verifier", GateVerifier(tools.get("gate")))
    tools.setdefault("settings", index.settings)
    chosen = reranker_for_index("bi-encoder", index) if reranker is DEFAULT else reranker
    budget = budget or Budget()
    toolkit = ToolContext(index=index, reranker=chosen, recorder=recorder, **tools)
    planner_model = LLM(model, recorder=recorder, budget=budget).bind_tools(AGENT_TOOLS) if model is not None else None
    return Context(
        toolkit,
        decomposer or KeywordDecomposer(),
        "llm" if model is not None else "fixed",
        planner_model,
        budget=budget,
        stop_after=stop_after,  # type: ignore[arg-type]
    )


def run_agent(
    context: Context,
    question: str,
    *,
    options: list[str] | None = None,
    allowed_papers: list[str] | None = None,
    thread_id: str | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
) -> dict[str, Any]:
    """Run the graph for one question and return its final state."""
    inputs = {"question": question, "options": options, "allowed_papers": allowed_papers}
    graph = build_graph(checkpointer)
    return graph.invoke(inputs, config=run_config(thread_id, context.max_turns), context=context)


def assert_grounded(answer: Answer, index: Any) -> None:
    """Every citation resolves to a corpus chunk of its paper that contains its quote, and every marker is cited."""
    assert answer.citations
    for citation in answer.citations:
        chunk = index.chunk_by_id[citation.chunk_id]
        assert chunk.paper_id == citation.paper_id
        assert chunk.locator == citation.locator
        assert " ".join(citation.quote.split()) in " ".join(chunk.text.split())
        assert f"[{citation.number}]" in answer.text


def tool_messages(state: dict, name: str | None = None) -> list[ToolMessage]:
    """The state's tool messages (of one tool when ``name`` is given)."""
    return [m for m in state["messages"] if isinstance(m, ToolMessage) and name in (None, m.name)]
