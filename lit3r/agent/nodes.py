"""Graph nodes: the start of a question and the planner, which decides the next tool calls.

The planner is one node with two strategies behind it (``Context.planner``):

* ``fixed`` emits the Lit3R sequence as tool calls, with no model: round r issues one
  ``search_chunks`` per subquery of the decomposer, then ``verify_sufficiency``; when the verdict
  is sufficient, decomposition gives nothing new or the round cap is reached, it moves to the
  answer step.
* ``llm`` shows the conversation to a chat model with the six tools bound and issues the calls it
  chooses, within the round cap (further ``search_chunks`` calls are dropped).

Both end in the same *answer step*: ``expand_neighbors`` (unless the final papers are up to date),
then ``synthesize_answer``, then a final message with the answer text. The graph forces that step
when the model stops calling tools without an answer, when the budget (time, tokens, cost) or the
turn limit runs out, or when the model call fails. Every planner turn is one ``node`` trace event.

In a chat thread a new question starts with the earlier questions' pool, decayed (:func:`carry_pool`), and
the closing step gives the answer's citations the thread's stable numbers (:func:`stable_numbers`).
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage, ToolCall
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from lit3r.agent.context import Context
from lit3r.agent.state import AgentState, carry_pool, question_reset, stable_numbers
from lit3r.llm.errors import LLMError
from lit3r.models import Answer
from lit3r.prompts.common import EVIDENCE_IS_DATA, fill
from lit3r.tools.reader import insufficient_answer, validate_answer

PLANNER_SYSTEM = """You answer questions about a collection of scientific papers by calling tools. You never \
answer from memory: the answer is written by synthesize_answer from the retrieved passages.
Work in rounds. In each round call search_chunks once per aspect of the question (up to {subqueries} calls), \
then verify_sufficiency. If the evidence is insufficient and rounds remain, search for what is missing. You have \
{max_rounds} rounds; {rounds_used} used so far. When the evidence suffices or no rounds remain, call \
expand_neighbors once, then synthesize_answer. read_paper and rerank are optional.
Tool results quote papers. {evidence_rule}"""
"""The LLM planner's system message; placeholders: subqueries, max_rounds, rounds_used, evidence_rule."""

CHANGES_POOL = frozenset({"search_chunks", "rerank", "verify_sufficiency"})
"""Tools after which ``expand_neighbors`` must run again before answering."""


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def new_subqueries(proposed: Sequence[str], previous: Sequence[str], limit: int) -> list[str]:
    """Proposed subqueries not asked before (case and spacing ignored), cleaned, at most ``limit``."""
    seen = {_normal(q) for q in previous}
    out: list[str] = []
    for query in (" ".join(q.split()) for q in proposed):
        if query and _normal(query) not in seen:
            seen.add(_normal(query))
            out.append(query)
    return out[:limit]


def question_message(state: AgentState) -> HumanMessage:
    """The question as the planner sees it, with its options when it has some."""
    options = state.get("options") or []
    listed = "".join(f"\n- {option}" for option in options)
    return HumanMessage(state["question"] + (f"\nOptions:{listed}" if listed else ""))


def start_question(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Open a question: clear the previous question's fields and carry its pool, decayed (chat threads), then
    post the question. Carried chunks must still be in the index and in the allowed papers."""
    context = runtime.context
    context.recorder.round = None
    allowed = state.get("allowed_papers")
    chunks = context.index.chunk_by_id

    def keep(chunk_id: str) -> bool:
        return chunk_id in chunks and (allowed is None or chunks[chunk_id].paper_id in allowed)

    pool = carry_pool(state.get("pool") or {}, keep, context.settings.retriever.pin_bonus)
    data = {"question": state["question"], "options": state.get("options"), "allowed": allowed}
    context.recorder.add("node", "start_question", {**data, "carried_chunks": len(pool)})
    return {**question_reset(), "pool": Overwrite(pool), "messages": [question_message(state)]}


def _calls(*calls: tuple[str, dict[str, Any]]) -> AIMessage:
    """An AI message with these tool calls (fresh ids)."""
    tool_calls = [ToolCall(name=name, args=args, id=f"call_{uuid.uuid4().hex[:16]}") for name, args in calls]
    return AIMessage(content="", tool_calls=tool_calls)


def _this_question(state: AgentState) -> list[AnyMessage]:
    """The messages since the current question was asked (a chat thread holds earlier questions too)."""
    messages = state.get("messages", [])
    start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    return messages[start + 1 :]


def _turn_index(state: AgentState, names: frozenset[str] | set[str]) -> int:
    """Position, within this question, of the last AI message calling one of ``names`` (-1 when none did)."""
    calls = [(i, m.tool_calls) for i, m in enumerate(_this_question(state)) if isinstance(m, AIMessage)]
    return max((i for i, called in calls if any(c["name"] in names for c in called)), default=-1)


def _last_calls(state: AgentState) -> list[str]:
    """Tool names of this question's last AI message."""
    last = next((m for m in reversed(_this_question(state)) if isinstance(m, AIMessage)), None)
    return [c["name"] for c in last.tool_calls] if last is not None else []


def _kinds(problems: Sequence[str]) -> Counter[str]:
    """How many problems of each kind (the text before ``": "``; the rest names numbers, which renumbering changes)."""
    return Counter(p.split(": ", 1)[0] for p in problems)


def thread_numbers(state: AgentState, context: Context, trace: dict[str, Any]) -> dict[str, Any]:
    """The answer renumbered with the thread's stable citation numbers, and the extended numbers.

    The renumbered answer is checked with :func:`validate_answer`; should renumbering add a problem, the
    answer keeps its own numbers and the thread's numbers are left as they were. What happened goes into
    ``trace`` (the planner turn's event data) under ``citation_numbers``.
    """
    answer = Answer.model_validate(state["answer"])
    before = state.get("citation_numbers") or {}
    renumbered, numbers = stable_numbers(answer, before)
    lookup, options = context.index.chunk_by_id.get, state.get("options")
    problems = validate_answer(renumbered, lookup, options)
    added = _kinds(problems) - _kinds(validate_answer(answer, lookup, options))
    numbers_used = {c.chunk_id: c.number for c in renumbered.citations}
    trace["citation_numbers"] = {"numbers": numbers_used, "problems": problems, "kept_own_numbers": bool(added)}
    if added:
        return {}
    return {"answer": renumbered.model_dump(mode="json"), "citation_numbers": numbers}


def _finish(state: AgentState, context: Context, trace: dict[str, Any]) -> dict[str, Any]:
    """The closing message: the answer text with stable citation numbers (no tool calls, so the graph ends)."""
    update = thread_numbers(state, context, trace) if state["answer"].get("citations") else {}
    update["messages"] = [AIMessage(content=update.get("answer", state["answer"])["text"])]
    if not state.get("stop_reason"):
        update["stop_reason"] = "planner: answered"
    return update


def answer_step(state: AgentState, stop: str | None = None) -> dict[str, Any]:
    """Expand (when the final papers are missing or stale), then synthesize; abstain if synthesis failed."""
    update: dict[str, Any] = {"stop_reason": stop} if stop and not state.get("stop_reason") else {}
    last = _last_calls(state)
    stale = _turn_index(state, {"expand_neighbors"}) < _turn_index(state, CHANGES_POOL)
    if state.get("pool") and stale and not {"expand_neighbors", "synthesize_answer"} & set(last):
        return {**update, "messages": [_calls(("expand_neighbors", {}))]}
    if "synthesize_answer" not in last:
        return {**update, "messages": [_calls(("synthesize_answer", {}))]}
    papers = [p for p, _s in state.get("final_papers") or []]
    answer = insufficient_answer(state["question"], candidate_papers=papers, rounds=state.get("round", 0))
    return {**update, "answer": answer.model_dump(mode="json"), "messages": [AIMessage(content=answer.text)]}


def _search_round(state: AgentState, context: Context, message: AIMessage) -> dict[str, Any]:
    """Start the next retrieval round with ``message``'s search calls."""
    round_ = state.get("round", 0) + 1
    context.budget.complete_round()
    context.recorder.round = round_
    return {"round": round_, "messages": [message]}


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
        return answer_step(state, "no_new_subqueries")
    return _search_round(state, context, _calls(*(("search_chunks", {"query": q}) for q in new)))


def fixed_step(state: AgentState, context: Context) -> dict[str, Any]:
    """The Lit3R sequence: searches, verification, then the next round or the answer step."""
    last = _last_calls(state)
    round_ = state.get("round", 0)
    if round_ == 0:
        return start_round(state, context, "")
    if "search_chunks" in last:
        return {"messages": [_calls(("verify_sufficiency", {}))]}
    verdicts = [v for v in state.get("verdicts") or [] if v.get("round") == round_]
    verdict = verdicts[-1] if verdicts else {"sufficient": False, "missing": "the verification failed"}
    if verdict["sufficient"]:
        return answer_step(state, "sufficient")
    if round_ >= context.max_rounds:
        return answer_step(state, "max_rounds")
    return start_round(state, context, verdict.get("missing", ""))


def llm_step(state: AgentState, context: Context) -> dict[str, Any]:
    """Let the chat model choose the next tool calls; enforce the round cap; force the answer when it stops."""
    round_ = state.get("round", 0)
    system = fill(
        PLANNER_SYSTEM,
        subqueries=context.settings.retriever.subqueries_later,
        max_rounds=context.max_rounds,
        rounds_used=round_,
        evidence_rule=EVIDENCE_IS_DATA,
    )
    try:
        reply = context.planner_model.invoke([SystemMessage(system), *state["messages"]], name="planner")
    except LLMError as exc:
        return answer_step(state, f"planner: the model call failed ({exc})")
    if not reply.tool_calls:
        return answer_step(state, "planner: the model stopped calling tools without an answer")
    searches = [c for c in reply.tool_calls if c["name"] == "search_chunks"]
    if searches and round_ >= context.max_rounds:
        kept = [c for c in reply.tool_calls if c["name"] != "search_chunks"]
        context.recorder.add("note", "round_cap", {"dropped": [c["args"] for c in searches]})
        if not kept:
            return answer_step(state, "max_rounds")
        return {"messages": [AIMessage(content=reply.content, tool_calls=kept, id=reply.id)]}
    return _search_round(state, context, reply) if searches else {"messages": [reply]}


def _hard_limit(state: AgentState, context: Context) -> str | None:
    """Why the answer must be forced now: the budget's time, tokens or cost, or the turn limit (not rounds)."""
    spent = context.budget.exhausted
    if spent and not spent.startswith("rounds"):
        return f"budget: {spent}"
    if state.get("turns", 0) >= context.max_turns:
        return f"planner: {context.max_turns} turns"
    return None


def planner(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Decide the next step: finish, continue the answer step, force it, or plan (fixed or LLM)."""
    context = runtime.context
    with context.recorder.step("node", "planner") as data:
        if state.get("answer"):
            update = _finish(state, context, data)
        elif state.get("stop_reason"):
            update = answer_step(state)
        elif limit := _hard_limit(state, context):
            update = answer_step(state, limit)
        elif context.planner == "fixed":
            update = fixed_step(state, context)
        else:
            update = llm_step(state, context)
        message = update["messages"][-1]
        calls = [{"name": c["name"], "args": c["args"]} for c in message.tool_calls]
        data.update(planner=context.planner, tool_calls=calls, stop_reason=update.get("stop_reason"))
        data["decision"] = ", ".join(c["name"] for c in calls) or "finish"
    return {**update, "turns": state.get("turns", 0) + 1}
