"""The agent graph, wiring only.

    START -> start_question -> planner --(tool calls)--> tools -> planner
                                       \\--(no tool calls)--> END

The planner (fixed Lit3R sequence or LLM) decides; the ToolNode runs the six tools, turns a tool's
exception into an error ToolMessage for the planner, and records every call in the trace.
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from lit3r.agent.context import Context
from lit3r.agent.nodes import planner, start_question
from lit3r.agent.state import AgentState, InputState
from lit3r.agent.tools import AGENT_TOOLS, record_tool_call


def build_graph(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """The compiled agent graph; pass a checkpointer to keep a thread's state between questions (chat)."""
    builder = StateGraph(AgentState, context_schema=Context, input_schema=InputState)
    builder.add_node("start_question", start_question)
    builder.add_node("planner", planner)
    builder.add_node("tools", ToolNode(AGENT_TOOLS, handle_tool_errors=True, wrap_tool_call=record_tool_call))
    builder.add_edge(START, "start_question")
    builder.add_edge("start_question", "planner")
    builder.add_conditional_edges("planner", tools_condition, ["tools", END])
    builder.add_edge("tools", "planner")
    return builder.compile(checkpointer=checkpointer, name="lit3r-agent")


def run_config(thread_id: str | None = None, max_turns: int = 24) -> dict:
    """The invoke config: tools of one turn run one at a time (a reproducible trace), enough steps for
    ``max_turns`` planner turns, and the chat thread when there is one."""
    config: dict = {"max_concurrency": 1, "recursion_limit": 2 * (max_turns + 4) + 2}
    if thread_id is not None:
        config["configurable"] = {"thread_id": thread_id}
    return config
