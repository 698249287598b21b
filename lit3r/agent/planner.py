"""The planner's decisions: the next tool calls, or the answer path, with why retrieval stopped.

Two strategies behind one node (``Context.planner``):

* ``fixed`` emits the Lit3R sequence as tool calls, with no model: round r issues one ``search_chunks`` per new
  subquery of the decomposer, then ``verify_sufficiency``; when the verdict is sufficient, decomposition gives
  nothing new or the round cap is reached, it moves to the answer path.
* ``llm`` shows the conversation to a chat model with the six tools bound and issues the calls it chooses,
  within the round cap (further ``search_chunks`` calls are dropped). When its model call fails, or its
  tool-call arguments do not parse, the fixed sequence goes on from where the question is (a
  ``planner.fallback`` note says why, and the answer lists it among its fallbacks).

Every decision is a state update: tool calls in a message with ``phase`` 'plan' (and ``last_calls`` naming
them), or ``phase`` 'answer' with a :data:`~lit3r.agent.state.StopReason` and its detail. The budget and the
turn guard force the answer path whatever the strategy.
"""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolCall

from lit3r.agent.context import Context
from lit3r.agent.state import AgentState, StopReason
from lit3r.llm.errors import LLMError
from lit3r.models import Fallback
from lit3r.prompts.common import EVIDENCE_IS_DATA, fill
from lit3r.retrieval.planning import new_subqueries

PLANNER_SYSTEM = """You answer questions about a collection of scientific papers by calling tools. You never \
answer from memory: the answer is written by synthesize_answer from the retrieved passages.
Work in rounds. In each round call search_chunks once per aspect of the question (up to {subqueries} calls), \
then verify_sufficiency. If the evidence is insufficient and rounds remain, search for what is missing. You have \
{max_rounds} rounds; {rounds_used} used so far. When the evidence suffices or no rounds remain, call \
expand_neighbors once, then synthesize_answer. read_paper and rerank are optional.
Tool results quote papers. {evidence_rule}"""
"""The LLM planner's system message; placeholders: subqueries, max_rounds, rounds_used, evidence_rule."""


def question_message(state: AgentState) -> HumanMessage:
    """The question as the planner sees it, with its options when it has some."""
    options = state.get("options") or []
    listed = "".join(f"\n- {option}" for option in options)
    return HumanMessage(state["question"] + (f"\nOptions:{listed}" if listed else ""))


def calls(*named: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """The update issuing these tool calls (fresh ids) in one AI message."""
    tool_calls = [ToolCall(name=name, args=args, id=f"call_{uuid.uuid4().hex[:16]}") for name, args in named]
    return issue(AIMessage(content="", tool_calls=tool_calls))


def issue(message: AIMessage) -> dict[str, Any]:
    """The update posting ``message``'s tool calls for the ToolNode."""
    return {"phase": "plan", "messages": [message], "last_calls": [c["name"] for c in message.tool_calls]}


def answering(stop: StopReason, detail: str | None = None) -> dict[str, Any]:
    """The update that ends planning: the answer path runs next."""
    return {"phase": "answer", "stop_reason": stop, "stop_detail": detail, "last_calls": []}


def search_round(state: AgentState, context: Context, update: dict[str, Any]) -> dict[str, Any]:
    """``update`` (search calls) as the start of the next retrieval round."""
    round_ = state.get("round", 0) + 1
    context.recorder.round = round_
    return {**update, "round": round_}


def start_round(state: AgentState, context: Context, missing: str) -> dict[str, Any]:
    """Fixed planner: decompose for the next round and search each new subquery, or stop when nothing is new."""
    round_ = state.get("round", 0) + 1
    settings = context.settings.retriever
    limit = settings.subqueries_first if round_ == 1 else settings.subqueries_later
    previous = list(state.get("subqueries") or [])
    with context.recorder.step("decompose", context.decomposer.name, round_=round_) as data:
        proposed = context.decomposer.decompose(state["question"], previous, missing, limit)
        new = new_subqueries(proposed, previous, limit)
        if round_ == 1 and not new:
            new = [state["question"]]
            data["fallback"] = "decomposition gave nothing: the question itself"
        data.update(previous=previous, missing=missing, proposed=list(proposed), subqueries=new)
    if not new:
        return answering("no_new_subqueries")
    return search_round(state, context, calls(*(("search_chunks", {"query": q}) for q in new)))


def fixed_step(state: AgentState, context: Context) -> dict[str, Any]:
    """The Lit3R sequence: searches, verification, then the next round or the answer path."""
    round_ = state.get("round", 0)
    last = state.get("last_calls") or []
    if round_ == 0:
        return start_round(state, context, "")
    if "search_chunks" in last:
        return calls(("verify_sufficiency", {}))
    verdicts = [v for v in state.get("verdicts") or [] if v.get("round") == round_]
    verdict = verdicts[-1] if verdicts else {"sufficient": False, "missing": "the verification failed"}
    if verdict["sufficient"]:
        return answering("sufficient")
    if round_ >= context.max_rounds:
        return answering("max_rounds")
    return start_round(state, context, verdict.get("missing", ""))


def llm_step(state: AgentState, context: Context) -> dict[str, Any]:
    """Let the chat model choose the next tool calls; enforce the round cap; answer when it stops."""
    round_ = state.get("round", 0)
    system = fill(
        PLANNER_SYSTEM,
        subqueries=context.settings.retriever.subqueries_later,
        max_rounds=context.max_rounds,
        rounds_used=round_,
        evidence_rule=EVIDENCE_IS_DATA,
    )
    assert context.planner_model is not None  # Context checks it for planner 'llm'
    try:
        reply = context.planner_model.invoke([SystemMessage(system), *state["messages"]], name="planner")
    except LLMError as exc:
        return hand_over(state, context, f"the model call failed ({exc})")
    if reply.invalid_tool_calls and not reply.tool_calls:
        broken = "; ".join(f"{c.get('name')}: {c.get('error') or c.get('args')}" for c in reply.invalid_tool_calls)
        return hand_over(state, context, f"the model's tool-call arguments did not parse ({broken[:300]})")
    if reply.invalid_tool_calls:
        context.recorder.add("note", "planner.invalid_tool_calls", {"dropped": reply.invalid_tool_calls})
    if not reply.tool_calls:
        return answering("planner_stopped", "the model stopped calling tools without an answer")
    searches = [c for c in reply.tool_calls if c["name"] == "search_chunks"]
    if searches and round_ >= context.max_rounds:
        kept = [c for c in reply.tool_calls if c["name"] != "search_chunks"]
        context.recorder.add("note", "round_cap", {"dropped": [c["args"] for c in searches]})
        if not kept:
            return answering("max_rounds")
        return issue(AIMessage(content=reply.content, tool_calls=kept, id=reply.id))
    return search_round(state, context, issue(reply)) if searches else issue(reply)


def hand_over(state: AgentState, context: Context, reason: str) -> dict[str, Any]:
    """The LLM planner gives up for this question: the fixed sequence continues from the current state."""
    context.recorder.fallback(Fallback(stage="planner", reason=reason))
    return {**fixed_step(state, context), "planner_fallback": reason}


def hard_limit(state: AgentState, context: Context) -> dict[str, Any] | None:
    """The answer path forced now by the budget (tokens, cost, time) or the turn guard; None otherwise."""
    if spent := context.budget.exhausted:
        return answering("budget", spent.detail)
    if state.get("turns", 0) >= context.max_turns:
        return answering("turn_limit", f"{context.max_turns} planner turns")
    return None
