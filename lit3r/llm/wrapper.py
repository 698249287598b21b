"""The one door to chat models: bounded retries, structured output with one repair, call records, budget.

:class:`LLM` wraps any chat model (from :func:`lit3r.llm.client.make_chat_model`, or a fake in tests).
:meth:`LLM.invoke` returns the reply; :meth:`LLM.structured` returns a validated pydantic object or raises
:class:`~lit3r.llm.errors.LLMOutputError` after one repair attempt. Failed calls raise
:class:`~lit3r.llm.errors.LLMCallError` whose ``retryable`` flag says whether trying later could help. Every
model call becomes one ``llm`` event (name, timing, prompt, raw output, tokens, cost, attempts, error) in the run's
:class:`~lit3r.llm.trace.TraceRecorder`, and its tokens and cost are charged to an optional
:class:`~lit3r.llm.budget.Budget`. The
planner, the reader, the LLM reranker and the LLM judge all call models through it.
"""

from __future__ import annotations

import copy
import json
import logging
import random
import sys
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    convert_to_messages,
    convert_to_openai_messages,
)
from langchain_core.runnables import Runnable
from pydantic import BaseModel
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from lit3r.llm.budget import Budget
from lit3r.llm.client import make_chat_model
from lit3r.llm.errors import (
    LLMCallError,
    LLMOutputError,
    call_errors,
    describe_error,
    is_transient,
    response_problem,
    retry_after_s,
)
from lit3r.llm.structured import (
    MAX_SHOWN_OUTPUT,
    REPAIR_PROMPT,
    explain,
    parse_reply,
    response_format,
    shown_output,
    tool_name,
    with_schema_hint,
)
from lit3r.llm.trace import TraceRecorder
from lit3r.settings.llm import LLMSettings, StructuredMethod

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
Messages = str | Sequence[BaseMessage | dict[str, Any] | tuple[str, str]]


ENDPOINT_DOWN_STATUS = frozenset({401, 403, 404})
"""Statuses after which no other call of the question can succeed (a wrong key, a wrong URL)."""


class Breaker:
    """Opens for the rest of a question once the endpoint has failed for good, so later calls fail at once.

    A call that still fails after its attempts on a transient error (timeouts, refused connections, 429, 5xx),
    that gets a reply which is not the API (:class:`~lit3r.llm.errors.LLMResponseError`, a body that is not
    JSON), or a 401/403/404,
    trips it; every later call of the run is then refused without contacting the endpoint, and each caller's
    fallback answers. So a dead endpoint costs one call's retries per question, not one per stage.
    """

    def __init__(self) -> None:
        self.reason: str | None = None
        self._lock = threading.Lock()

    def trip(self, reason: str) -> None:
        """Open with ``reason`` (the first failure's description is kept)."""
        with self._lock:
            self.reason = self.reason or reason

    @staticmethod
    def trips_on(exc: BaseException) -> bool:
        """Whether this failure means the endpoint will not serve the question's other calls."""
        if response_problem(exc) is not None or isinstance(exc, json.JSONDecodeError):  # the endpoint is not the API
            return True
        return is_transient(exc) or getattr(exc, "status_code", None) in ENDPOINT_DOWN_STATUS


def retry_wait(settings: LLMSettings) -> Callable[[RetryCallState], float]:
    """Exponential back-off with jitter, replaced by the server's Retry-After when that is small."""

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hint = retry_after_s(exc) if exc is not None else None
        if hint is not None and 0 < hint <= settings.retry_after_cap_s:
            return hint
        exponential = settings.retry_initial_s * 2 ** (state.attempt_number - 1)
        return min(settings.retry_max_s, exponential + random.uniform(0, settings.retry_initial_s))

    return wait


def _log_retry(name: str) -> Callable[[RetryCallState], None]:
    """A tenacity ``before_sleep`` hook that logs which call failed, how, and how long it waits."""

    def log(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        delay = state.next_action.sleep if state.next_action else 0.0
        logger.warning(
            "LLM call %r attempt %d failed (%s); retrying in %.2f s",
            name,
            state.attempt_number,
            describe_error(exc) if exc else "?",
            delay,
        )

    return log


def as_messages(messages: Messages) -> list[BaseMessage]:
    """Messages from a list of messages, dicts or (role, text) pairs; a bare string is one human message."""
    if isinstance(messages, str):
        return [HumanMessage(messages)]
    return convert_to_messages(messages)


class LLM:
    """A chat model with bounded retries, structured output, call records and budget accounting.

    Args:
        model: any langchain chat model (from :func:`make_chat_model`, or a fake in tests).
        settings: attempts, back-off, prices and the structured-output method; defaults when omitted.
        recorder: the run's trace, which gets one ``llm`` event per model call.
        budget: charged with each successful call's tokens and cost.
        breaker: shared by the wrappers of one run: once the endpoint has failed for good, calls fail at once.
        sleep: how to wait between attempts (tests pass a no-op).
    """

    def __init__(
        self,
        model: BaseChatModel,
        settings: LLMSettings | None = None,
        *,
        recorder: TraceRecorder | None = None,
        budget: Budget | None = None,
        breaker: Breaker | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model: Runnable = model
        self.base_model = model
        """The chat model itself (``model`` may be it with call options or tools bound)."""
        self.settings = settings or LLMSettings()
        self.budget = budget
        self.breaker = breaker
        self.recorder = recorder
        self._sleep = sleep

    def bind(self, **options: Any) -> LLM:
        """The same wrapper (settings, recorder, budget) over the model with call ``options`` bound, e.g.
        ``logprobs=True, top_logprobs=5`` for a judge that reads token probabilities."""
        other = copy.copy(self)
        other.model = self.model.bind(**options)
        return other

    def bind_tools(self, tools: Sequence[Any], **options: Any) -> LLM:
        """The same wrapper over the chat model with ``tools`` bound (the LLM planner)."""
        other = copy.copy(self)
        other.model = self.base_model.bind_tools(tools, **options)
        return other

    @property
    def accepts_logprobs(self) -> bool:
        """Whether the chat model takes OpenAI's ``logprobs`` / ``top_logprobs`` call options."""
        return "logprobs" in getattr(type(self.base_model), "model_fields", {})

    @classmethod
    def from_settings(
        cls, settings: LLMSettings, *, recorder: TraceRecorder | None = None, budget: Budget | None = None
    ) -> LLM:
        """An ``LLM`` over :func:`make_chat_model` (raises :class:`LLMConfigError` for provider 'none')."""
        return cls(make_chat_model(settings), settings, recorder=recorder, budget=budget)

    @property
    def model_name(self) -> str:
        """The model's name as configured on the chat model, else its class name."""
        for attribute in ("deployment_name", "model_name", "model"):
            value = getattr(self.base_model, attribute, None)
            if isinstance(value, str) and value:
                return value
        return type(self.base_model).__name__

    @property
    def structured_method(self) -> StructuredMethod:
        """The structured-output method in force ('auto' resolved by the model's protocol)."""
        if self.settings.structured_output != "auto":
            return self.settings.structured_output
        if self.settings.provider == "local":  # llama.cpp grammar-constrains a forced tool call, not json_schema
            return "function_calling"
        from langchain_openai.chat_models.base import BaseChatOpenAI  # a model exists: the import is paid already

        return "json_schema" if isinstance(self.base_model, BaseChatOpenAI) else "function_calling"

    def invoke(self, messages: Messages, *, name: str) -> AIMessage:
        """The model's reply to ``messages``; ``name`` labels the call in records and logs.

        Raises:
            LLMCallError: the endpoint failed (after retries when the failure was transient).
        """
        message, _ = self._call(self.model, as_messages(messages), name=name)
        return message

    def structured(self, messages: Messages, schema: type[T], *, name: str) -> T:
        """The reply to ``messages`` as a validated ``schema`` object, with one repair attempt.

        Raises:
            LLMCallError: the endpoint failed.
            LLMOutputError: the reply and the repaired reply both failed validation.
        """
        method = self.structured_method
        bound = self._bind_schema(schema, method)
        prompt = as_messages(messages)
        if method == "json_mode":
            prompt = with_schema_hint(prompt, schema)
        first, parsed = self._call(bound, prompt, name=name, schema=schema)
        if isinstance(parsed, BaseModel):
            return parsed
        repair = HumanMessage(
            REPAIR_PROMPT.format(schema=schema.__name__, output=shown_output(first)[:MAX_SHOWN_OUTPUT], error=parsed)
        )
        second, reparsed = self._call(bound, [*prompt, repair], name=f"{name}.repair", schema=schema)
        if isinstance(reparsed, BaseModel):
            return reparsed
        raise LLMOutputError(
            f"{name}: the reply is not a valid {schema.__name__} after one repair: {reparsed}",
            name=name,
            schema=schema.__name__,
            outputs=[shown_output(first), shown_output(second)],
            errors=[str(parsed), str(reparsed)],
        )

    def _bind_schema(self, schema: type[BaseModel], method: StructuredMethod) -> Runnable:
        """The model set up to answer in ``schema`` by ``method``."""
        if method == "function_calling":
            return self.base_model.bind_tools([schema], tool_choice=tool_name(schema))
        if method == "json_schema":
            return self.model.bind(response_format=response_format(schema))
        return self.model.bind(response_format={"type": "json_object"})

    def _call(
        self, runnable: Runnable, messages: list[BaseMessage], *, name: str, schema: type[T] | None = None
    ) -> tuple[AIMessage, T | str | None]:
        """One recorded, retried model call: the reply and, given a schema, the parsed object or the error text."""
        event = self._new_event(name, messages, schema)
        started = time.perf_counter()
        attempts = 0

        def attempt() -> AIMessage:
            nonlocal attempts
            attempts += 1
            return runnable.invoke(messages)

        finished = False
        try:
            if self.breaker is not None and self.breaker.reason:
                raise LLMCallError(
                    f"{name}: not sent: the endpoint failed earlier in this question ({self.breaker.reason})",
                    name=name,
                    retryable=True,
                    attempts=0,
                )
            message = self._retrying(name)(attempt)
            parsed = self._parse(message, schema, event) if schema is not None else None
            self._account(message, event)
            finished = True
            return message, parsed
        except call_errors() as exc:
            code = getattr(exc, "status_code", None)
            if self.breaker is not None and Breaker.trips_on(exc):
                self.breaker.trip(describe_error(exc))
            raise LLMCallError(
                f"{name}: {describe_error(exc)} (after {attempts} attempt{'s' * (attempts != 1)})",
                name=name,
                retryable=is_transient(exc),
                attempts=attempts,
                status_code=code,
            ) from exc
        finally:
            event["attempts"] = attempts
            event["duration_ms"] = round((time.perf_counter() - started) * 1000, 1)
            if not finished:
                self._fail(event, sys.exception())
            if self.recorder is not None:
                self.recorder.record(event)

    def _retrying(self, name: str) -> Retrying:
        """Tenacity policy: transient errors only, ``max_attempts`` in all, logged before each wait."""
        return Retrying(
            stop=stop_after_attempt(self.settings.max_attempts),
            wait=retry_wait(self.settings),
            retry=retry_if_exception(is_transient),
            before_sleep=_log_retry(name),
            sleep=self._sleep,
            reraise=True,
        )

    def _new_event(self, name: str, messages: list[BaseMessage], schema: type[BaseModel] | None) -> dict[str, Any]:
        """The start of a call record."""
        return {
            "kind": "llm_call",
            "name": name,
            "model": self.model_name,
            "schema": schema.__name__ if schema else None,
            "started_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "prompt": convert_to_openai_messages(messages),
            "output": None,
            "tool_calls": [],
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cost": 0.0,
            "attempts": 0,
            "duration_ms": 0.0,
            "error": None,
            "retryable": None,
            "parse_error": None,
        }

    @staticmethod
    def _parse(message: AIMessage, schema: type[T], event: dict[str, Any]) -> T | str:
        """The validated object, or the error text (also noted in ``event``)."""
        try:
            return parse_reply(message, schema)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError too
            event["parse_error"] = explain(exc)
            return event["parse_error"]

    def _account(self, message: AIMessage, event: dict[str, Any]) -> None:
        """Put the reply, its tokens and its cost into ``event`` and charge the budget."""
        usage = message.usage_metadata or {}
        prompt_tokens, completion_tokens = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
        cost = self.settings.cost(prompt_tokens, completion_tokens)
        event["output"] = message.text
        if logprobs := message.response_metadata.get("logprobs"):  # what a judge or reranker scored from
            event["logprobs"] = logprobs
        event["tool_calls"] = [{"name": c["name"], "args": c["args"], "id": c.get("id")} for c in message.tool_calls]
        event.update(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, cost=cost)
        if self.budget is not None:
            self.budget.charge(prompt_tokens + completion_tokens, cost)

    @staticmethod
    def _fail(event: dict[str, Any], exc: BaseException | None) -> None:
        """Note the failure that is propagating out of a call."""
        if isinstance(exc, LLMCallError):
            event.update(error=str(exc), retryable=exc.retryable)
        elif exc is not None:
            event["error"] = f"{type(exc).__name__}: {exc}"
