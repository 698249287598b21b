"""The agent graph, wiring only.

    START -> start_question -> planner --route_planner--> tools -> planner
                                                     \\--> expand_neighbors --route_expanded--> synthesize_answer
                                                     \\--> finish                          \\--> END (retrieval only)
                                                           synthesize_answer -> finish -> END

The planner (fixed Lit3R sequence or LLM) either posts tool calls, which the ToolNode runs (turning a tool's
exception into an error message for the planner and recording every call in the trace), or sets the phase to
'answer': then the answer path runs as nodes: the final papers (unless up to date), the answer, the closing
message. A run with ``Context.stop_after == 'retrieval'`` ends after the final papers.
"""

from __future__ import annotations

from typing import Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode

from lit3r.agent.adapters import AGENT_TOOLS, record_tool_call
from lit3r.agent.context import Context
from lit3r.agent.nodes import expand_neighbors, finish, planner, start_question, synthesize_answer
from lit3r.agent.state import AgentState, InputState


def route_planner(state: AgentState) -> Literal["tools", "expand_neighbors", "finish"]:
    """Tool calls go to the ToolNode; the answer path starts with the final papers, or finishes an answer the
    planner already has."""
    if state.get("phase") == "plan":
        return "tools"
    return "finish" if state.get("answer") else "expand_neighbors"


def route_expanded(state: AgentState) -> Literal["synthesize_answer", "__end__"]:
    """A retrieval-only run is done once the final papers are fixed; otherwise the answer is written."""
    return END if state.get("phase") == "done" else "synthesize_answer"


def build_graph(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """The compiled agent graph; pass a checkpointer to keep a thread's state between questions (chat)."""
    builder = StateGraph(AgentState, context_schema=Context, input_schema=InputState)
    builder.add_node("start_question", start_question)
    builder.add_node("planner", planner)
    builder.add_node("tools", ToolNode(AGENT_TOOLS, handle_tool_errors=True, wrap_tool_call=record_tool_call))
    builder.add_node("expand_neighbors", expand_neighbors)
    builder.add_node("synthesize_answer", synthesize_answer)
    builder.add_node("finish", finish)
    builder.add_edge(START, "start_question")
    builder.add_edge("start_question", "planner")
    builder.add_conditional_edges("planner", route_planner, ["tools", "expand_neighbors", "finish"])
    builder.add_edge("tools", "planner")
    builder.add_conditional_edges("expand_neighbors", route_expanded, ["synthesize_answer", END])
    builder.add_edge("synthesize_answer", "finish")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer, name="lit3r-agent")


def run_config(thread_id: str | None = None, max_turns: int = 24) -> dict:
    """The invoke config: tools of one turn run one at a time (a reproducible trace), enough steps for
    ``max_turns`` planner turns and the answer path, and the chat thread when there is one."""
    config: dict = {"max_concurrency": 1, "recursion_limit": 2 * (max_turns + 4) + 2}
    if thread_id is not None:
        config["configurable"] = {"thread_id": thread_id}
    return config
