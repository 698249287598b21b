"""Graph nodes: open a question, plan, and the answer path (expand, synthesize, finish).

* :func:`start_question` clears the previous question's fields (a chat thread) and carries its pool, decayed
  (:func:`~lit3r.agent.state.carry_pool`), then posts the question.
* :func:`planner` decides the next tool calls or the answer path (:mod:`lit3r.agent.planner`); one ``node``
  trace event per turn.
* :func:`expand_neighbors` computes the final papers when they are missing or stale (the pool or the named
  papers changed since); a retrieval-only run ends here.
* :func:`synthesize_answer` writes the cited, claim-verified answer.
* :func:`finish` gives the answer's citations the thread's stable numbers (:func:`stable_numbers`) and posts
  the closing message.

The expand and synthesize nodes call the same pure tools as the planner's tool calls of the same names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from lit3r.agent.adapters import answer_status, expansion_update
from lit3r.agent.context import Context
from lit3r.agent.planner import fixed_step, hard_limit, llm_step, question_message
from lit3r.agent.state import AgentState, carry_pool, question_reset, stable_numbers
from lit3r.answers import validate_answer
from lit3r.models import Answer
from lit3r.tools import expand_neighbors as expand
from lit3r.tools import synthesize_answer as synthesize


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


def planner(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Decide the next step: the answer path (an answer exists, or a limit is hit), or plan (fixed or LLM)."""
    context = runtime.context
    with context.recorder.step("node", "planner") as data:
        if state.get("answer"):  # the LLM planner called synthesize_answer itself
            update: dict[str, Any] = {"phase": "answer", "stop_reason": "planner_answered", "last_calls": []}
        elif (forced := hard_limit(state, context)) is not None:
            update = forced
        elif context.planner == "fixed" or state.get("planner_fallback"):
            update = fixed_step(state, context)
        else:
            update = llm_step(state, context)
        message = next(iter(update.get("messages", [])), None)
        tool_calls = [{"name": c["name"], "args": c["args"]} for c in getattr(message, "tool_calls", [])]
        data.update(planner=context.planner, tool_calls=tool_calls, phase=update["phase"])
        data.update(stop_reason=update.get("stop_reason"), stop_detail=update.get("stop_detail"))
        data["decision"] = ", ".join(c["name"] for c in tool_calls) or "answer"
    return {**update, "turns": state.get("turns", 0) + 1}


def expand_neighbors(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The final papers, computed unless they are up to date; a retrieval-only run is done after this."""
    context = runtime.context
    done = {"phase": "done"} if context.stop_after == "retrieval" else {}
    pool = state.get("pool") or {}
    changes, expanded_at = state.get("changes", 0), state.get("expanded_at")
    with context.recorder.step("node", "expand_neighbors") as data:
        if not pool:
            data["skipped"] = "the pool is empty: no final papers"
            return {**done, "final_papers": [], "expanded_at": changes}
        if expanded_at is not None and expanded_at >= changes:
            data["skipped"] = "the final papers are up to date"
            return done
        named, allowed = state.get("named_papers") or [], state.get("allowed_papers")
        found = expand.expand_neighbors(context.tools, pool, named, allowed)
        data.update(final=len(found.final), seeds=found.seeds)
    return {**done, **expansion_update(found, changes)}


def synthesize_answer(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The answer from the final papers' pooled chunks (abstaining below the gate or without evidence)."""
    context = runtime.context
    with context.recorder.step("node", "synthesize_answer") as data:
        answer = synthesize.synthesize_answer(
            context.tools,
            state["question"],
            state.get("pool") or {},
            state.get("final_papers"),
            state.get("best_reranker_score"),
            state.get("options"),
            state.get("round", 0),
        )
        data.update(
            sufficient=answer.sufficient, citations=len(answer.citations), status=answer_status(context.tools, answer)
        )
    return {"answer": answer.model_dump(mode="json")}


def _kinds(problems: Sequence[str]) -> Counter[str]:
    """How many problems of each kind (the text before ``": "``; the rest names numbers, which renumbering changes)."""
    return Counter(p.split(": ", 1)[0] for p in problems)


def thread_numbers(state: AgentState, context: Context, trace: dict[str, Any]) -> dict[str, Any]:
    """The answer renumbered with the thread's stable citation numbers, and the extended numbers.

    The renumbered answer is checked with :func:`validate_answer`; should renumbering add a problem, the
    answer keeps its own numbers and the thread's numbers are left as they were. What happened goes into
    ``trace`` (the node's event data) under ``citation_numbers``.
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


def finish(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The closing message: the answer with the thread's stable citation numbers and the run's fallbacks."""
    context = runtime.context
    with context.recorder.step("node", "finish") as data:
        update = closing_update(state, context, data)
        update["messages"] = [AIMessage(content=update["answer"]["text"])]
    return {**update, "phase": "done"}


def closing_update(state: AgentState, context: Context, trace: dict[str, Any]) -> dict[str, Any]:
    """The final answer's update: the thread's stable citation numbers and the run's fallbacks (noted in
    ``trace``, the closing step's event data)."""
    update = thread_numbers(state, context, trace) if state["answer"].get("citations") else {}
    answer = dict(update.get("answer", state["answer"]))
    fallbacks = context.recorder.fallbacks()
    answer["fallbacks"] = trace["fallbacks"] = [f.describe() for f in fallbacks]
    answer["fallback_steps"] = [f.model_dump(mode="json") for f in fallbacks]
    return {**update, "answer": answer}
