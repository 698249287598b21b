"""Replaying a trace: the recorded question run again with every model output taken from the trace.

No model is called and nothing leaves the machine: :class:`ReplayModel` is a chat model that answers each
call with a recorded one (``llm`` events: prompt, raw output, tool calls, tokens). It takes the first unused
recorded call whose prompt equals the one it is sent (so calls made in parallel, recorded in the order they
finished, still pair up), else the next unused call in order, noting the mismatch and where the prompts part;
a call beyond the recording fails like an endpoint error, so the run degrades as it would have. A recorded
failure is replayed as a failure.

:func:`replay_trace` runs the question through a :class:`~lit3r.app.session.Session` with that model (or with
no model when the recording made no model call), writes the replay's own trace and compares it with the
original (:func:`~lit3r.app.trace_diff.diff_traces`): the report says whether the answer, the citations and
the rankings came out the same and where the two runs first differ. The run uses the answer-shaping settings
the trace recorded (its ``settings``: retriever, reranker, grounding, model settings; not the endpoint or its
key) over today's, so a replay needs none of the flags the run had; ``recorded_settings=False`` (``lit3r trace
replay --current-settings``) runs with today's instead, to show what a change of settings did. The index is
today's: a replay after a rebuild shows what the rebuild did.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.exceptions import ModelError
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolCall, convert_to_openai_messages
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, Field, PrivateAttr

from lit3r.app.session import Session
from lit3r.app.trace_diff import TraceDiff, diff_traces, settings_changes
from lit3r.app.traces import load_trace
from lit3r.settings import ANSWER_SHAPING, Settings, deep_merge

ENDPOINT = {"provider", "base_url", "api_key", "azure_deployment", "api_version", "local"}
"""Model settings a replay keeps from today's: where a model is reached (a replay reaches none)."""


class ReplayError(ModelError):
    """A model call the recording cannot answer (beyond its calls), or a call that failed when recorded."""


class CallMismatch(BaseModel):
    """A model call whose prompt differs from every unused recorded call."""

    position: int = Field(description="1-based number of the model call in the replay.")
    recorded: str = Field(description="Name of the recorded call that answered it (e.g. 'verify').")
    difference: str = Field(description="Where the prompts first differ.")


def _plain(value: Any) -> Any:
    """A value as JSON would bring it back (tuples as lists, numbers as JSON numbers)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def prompt_difference(sent: Sequence[Mapping[str, Any]], recorded: Sequence[Mapping[str, Any]]) -> str | None:
    """Where two prompts (OpenAI-format messages) first differ, in words; None when they are equal."""
    if sent == recorded:
        return None
    for i, (x, y) in enumerate(zip(sent, recorded, strict=False)):
        if x == y:
            continue
        if x.get("role") != y.get("role"):
            return f"message {i + 1}: role {x.get('role')!r}, recorded {y.get('role')!r}"
        a, b = json.dumps(x.get("content"), ensure_ascii=False), json.dumps(y.get("content"), ensure_ascii=False)
        at = next((k for k, (p, q) in enumerate(zip(a, b, strict=False)) if p != q), min(len(a), len(b)))
        if a == b:
            return f"message {i + 1} ({x.get('role')}): other fields differ"
        return f"message {i + 1} ({x.get('role')}) at character {at}: {a[at : at + 40]!r}, recorded {b[at : at + 40]!r}"
    return f"{len(sent)} messages, recorded {len(recorded)}"


class ReplayModel(BaseChatModel):
    """A chat model that answers from recorded calls (the ``data`` of a trace's ``llm`` events)."""

    recorded: list[dict[str, Any]] = Field(description="The recorded calls, in trace order.")
    model_name: str = Field(default="replay", description="Name reported in call records (the recorded model's).")
    mismatches: list[CallMismatch] = Field(default_factory=list, description="Calls whose prompt was not recorded.")
    calls: int = Field(default=0, description="Model calls answered so far.")
    _used: set[int] = PrivateAttr(default_factory=set)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "lit3r-replay"

    @property
    def unused(self) -> int:
        """Recorded calls no replayed call has taken."""
        return len(self.recorded) - len(self._used)

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any):
        """Bind tools like a provider would (the replay answers with the recorded tool calls)."""
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _take(self, prompt: list[dict[str, Any]]) -> dict[str, Any]:
        """The recorded call that answers ``prompt`` (see the module docstring); notes a mismatch."""
        with self._lock:
            self.calls += 1
            free = [i for i in range(len(self.recorded)) if i not in self._used]
            if not free:
                raise ReplayError(f"model call {self.calls} is beyond the recording ({len(self.recorded)} calls)")
            same = [i for i in free if _plain(self.recorded[i].get("prompt")) == prompt]
            chosen = same[0] if same else free[0]
            self._used.add(chosen)
            call = self.recorded[chosen]
            if not same:
                where = prompt_difference(prompt, _plain(call.get("prompt") or []))
                self.mismatches.append(
                    CallMismatch(position=self.calls, recorded=str(call.get("name")), difference=str(where))
                )
            return call

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        call = self._take(_plain(convert_to_openai_messages(messages)))
        if call.get("error") and call.get("output") is None:
            raise ReplayError(f"recorded failure of {call.get('name')}: {call['error']}")
        tool_calls = [
            ToolCall(name=c["name"], args=c.get("args") or {}, id=c.get("id") or f"replay_{self.calls}_{i}")
            for i, c in enumerate(call.get("tool_calls") or [])
        ]
        prompt_tokens, completion_tokens = int(call.get("prompt_tokens") or 0), int(call.get("completion_tokens") or 0)
        metadata = {"logprobs": call["logprobs"]} if call.get("logprobs") else {}
        reply = AIMessage(
            content=call.get("output") or "",
            tool_calls=tool_calls,
            response_metadata=metadata,
            usage_metadata={
                "input_tokens": prompt_tokens,
                "output_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        )
        return ChatResult(generations=[ChatGeneration(message=reply)])


class ReplayReport(BaseModel):
    """What a replay found."""

    trace_id: str | None = Field(description="The replayed trace.")
    replay_trace_id: str | None = Field(description="The replay's own trace (compare with `lit3r trace diff`).")
    question: str
    reproduced: bool = Field(description="Answer, citations and rankings the same, every model call as recorded.")
    same_answer: bool
    same_citations: bool
    same_rankings: bool = Field(description="Every subquery ranking, the pool and the final papers the same.")
    first_difference: str | None = Field(description="Where the runs first part (a model call or a trace part).")
    model_calls_recorded: int
    model_calls_replayed: int
    mismatches: list[CallMismatch]
    notes: list[str] = Field(default_factory=list, description="What the replay could not reproduce, and why.")
    diff: TraceDiff


def _start(doc: Mapping[str, Any]) -> dict[str, Any]:
    found = [e for e in doc.get("events") or [] if e.get("type") == "node" and e.get("name") == "start_question"]
    return (found[0].get("data") or {}) if found else {}


def _recorded_calls(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The recorded model calls, in trace order: each ``llm`` event's data with its name."""
    return [{**(e.get("data") or {}), "name": e.get("name")} for e in doc.get("events") or [] if e.get("type") == "llm"]


def with_recorded_settings(settings: Settings, doc: Mapping[str, Any]) -> tuple[Settings, list[str]]:
    """``settings`` with the answer-shaping settings the trace recorded put over them, and notes saying which
    of today's values that changed (or that the trace records none)."""
    recorded = doc.get("settings")
    if not isinstance(recorded, Mapping):
        return settings, ["the trace records no settings (written before they were recorded): today's were used"]
    shape = {k: v for k, v in recorded.items() if k in ANSWER_SHAPING}
    if isinstance(shape.get("llm"), Mapping):
        shape["llm"] = {k: v for k, v in shape["llm"].items() if k not in ENDPOINT}
    try:
        replayed = Settings(**deep_merge(settings.model_dump(mode="python"), shape))
    except ValueError as exc:
        raise ValueError(f"the trace's recorded settings are not valid today: {exc}") from exc
    replayed._presets = [str(p) for p in doc.get("presets") or []]
    changed = settings_changes(settings.answer_shape(), replayed.answer_shape())
    notes = []
    if changed:
        shown = ", ".join(f"{c.key}={c.b!r} (today {c.a!r})" for c in changed[:8])
        more = f" and {len(changed) - 8} more" if len(changed) > 8 else ""
        notes.append(f"ran with the trace's recorded settings: {shown}{more}")
    return replayed, notes


def replay_trace(
    settings: Settings, trace: Mapping[str, Any] | str, *, recorded_settings: bool = True, **session: Any
) -> ReplayReport:
    """Run the traced question again with the recorded model outputs and compare the two runs.

    Args:
        settings: Today's settings (home, index); ``llm`` is not called.
        trace: A trace document or the path of one.
        recorded_settings: Run with the answer-shaping settings the trace recorded (False: today's).
        **session: Passed to :class:`Session` (e.g. an opened ``index``).
    """
    original = load_trace(trace)
    notes: list[str] = []
    if recorded_settings:
        settings, notes = with_recorded_settings(settings, original)
    if original.get("kind") == "check":  # a claim check: run the check again (lit3r.app.check)
        from lit3r.app.check import replay_check

        return replay_check(settings, original, **session)
    start, calls = _start(original), _recorded_calls(original)
    question = str(start.get("question") or original.get("question") or "")
    if original.get("thread_id"):
        notes.append(
            f"a turn of thread {original['thread_id']}: replayed as a standalone question, without the pool and "
            "citation numbers the thread carried into it"
        )
    model = None
    if calls:
        names = [c.get("model") for c in calls if c.get("model")]
        model = ReplayModel(recorded=calls, model_name=str(names[0]) if names else "replay")
    else:
        settings = settings.model_copy(update={"llm": settings.llm.model_copy(update={"provider": "none"})})
    planner = original.get("planner") or "fixed"
    with Session(settings, chat_model=model, planner=planner, **session) as opened:
        answer = opened.ask(question, options=start.get("options"), allowed_papers=start.get("allowed"))
    replayed = load_trace(answer.trace_path)
    diff = diff_traces(original, replayed)
    mismatches = list(model.mismatches) if model else []
    unused = model.unused if model else 0
    first = None
    if mismatches:
        first = f"model call {mismatches[0].position} ({mismatches[0].recorded}): {mismatches[0].difference}"
    same_rankings = all(r.same for r in diff.rankings) and diff.pool.same and diff.final_papers.same
    if unused:
        notes.append(f"{unused} recorded model calls were not made in the replay")
    if not diff.fallbacks.same:
        notes.append(
            f"fell back at {', '.join(diff.fallbacks.a) or 'no step'} in the recording and at "
            f"{', '.join(diff.fallbacks.b) or 'no step'} in the replay"
        )
    return ReplayReport(
        trace_id=original.get("trace_id"),
        replay_trace_id=replayed.get("trace_id"),
        question=question,
        reproduced=diff.identical and not mismatches and not unused,
        same_answer=diff.answer.same and diff.sufficient.same,
        same_citations=diff.citations.same,
        same_rankings=same_rankings and diff.subqueries.same,
        first_difference=first or diff.first_difference or ("model calls" if unused else None),
        model_calls_recorded=len(calls),
        model_calls_replayed=model.calls if model else 0,
        mismatches=mismatches,
        notes=notes,
        diff=diff,
    )
