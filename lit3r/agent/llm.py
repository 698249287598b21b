"""The one door to chat models: a factory, bounded retries, structured output with one repair, call records.

* :func:`make_chat_model` builds ``ChatOpenAI`` / ``AzureChatOpenAI`` from :class:`LLMSettings` with the
  client's own retries switched off: retries happen here, on transient errors only.
* :class:`LLM` wraps any chat model. :meth:`LLM.invoke` returns the reply; :meth:`LLM.structured` returns a
  validated pydantic object or raises :class:`LLMOutputError` after one repair attempt. Failed calls raise
  :class:`LLMCallError` whose ``retryable`` flag says whether trying later could help.
* Every model call becomes one event dict (name, timing, prompt, raw output, tokens, cost, attempts, error)
  handed to a pluggable recorder, and its tokens and cost are charged to an optional :class:`Budget`.
"""

from __future__ import annotations

import json
import logging
import random
import re
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar, runtime_checkable

import openai
from langchain_core.exceptions import ModelError
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    convert_to_messages,
    convert_to_openai_messages,
)
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_openai import AzureChatOpenAI, ChatOpenAI
from langchain_openai.chat_models.base import BaseChatOpenAI
from pydantic import BaseModel, ValidationError
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from lit3r.agent.budget import Budget
from lit3r.agent.llm_settings import LLMSettings, StructuredMethod

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
Messages = str | Sequence[BaseMessage | dict[str, Any] | tuple[str, str]]

PLACEHOLDER_KEY = "not-needed"
"""Sent as the API key to a custom ``base_url`` when none is configured (local servers ignore it)."""

REPAIR_PROMPT = """Your previous reply could not be used: it is not a valid {schema} object.

<invalid_output>
{output}
</invalid_output>

<validation_error>
{error}
</validation_error>

Answer the request above again. Reply with only a corrected {schema} object."""
"""Shown once after an unusable structured reply; placeholders: schema, output, error."""

JSON_MODE_PROMPT = "Reply with one JSON object, and nothing else, that validates against this JSON schema:\n{schema}"
"""Added to the system message in ``json_mode``, where the endpoint is not told the schema."""

MAX_SHOWN_OUTPUT = 4000
TRANSIENT_ERRORS = (
    openai.RateLimitError,
    openai.InternalServerError,
    openai.APITimeoutError,
    openai.APIConnectionError,
)
CALL_ERRORS = (openai.OpenAIError, ModelError, json.JSONDecodeError)
"""What a model call raises when the endpoint, not our code, is at fault."""


class LLMError(Exception):
    """Base class of the errors this module raises."""


class LLMConfigError(LLMError, ValueError):
    """The settings cannot build a chat model (no provider, no key, no Azure deployment)."""


class LLMCallError(LLMError):
    """A model call failed. ``retryable`` is True when the cause was transient and attempts ran out."""

    def __init__(
        self, message: str, *, name: str, retryable: bool, attempts: int, status_code: int | None = None
    ) -> None:
        super().__init__(message)
        self.name = name
        self.retryable = retryable
        self.attempts = attempts
        self.status_code = status_code


class LLMOutputError(LLMError):
    """The model's structured reply stayed invalid after the repair attempt."""

    def __init__(self, message: str, *, name: str, schema: str, outputs: list[str], errors: list[str]) -> None:
        super().__init__(message)
        self.name = name
        self.schema = schema
        self.outputs = outputs
        self.errors = errors


class _Unusable(ValueError):
    """A reply that holds no candidate for the schema (empty, refused, broken tool-call arguments)."""


@runtime_checkable
class Recorder(Protocol):
    """Receives one event dict per model call."""

    def record(self, event: dict[str, Any]) -> None: ...


RecorderLike = Recorder | Callable[[dict[str, Any]], None]


class ListRecorder:
    """Keeps every event in :attr:`events` (tests, and a simple in-memory trace)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def record(self, event: dict[str, Any]) -> None:
        """Append ``event``."""
        self.events.append(event)


# ---------------------------------------------------------------- model factory


def make_chat_model(settings: LLMSettings) -> BaseChatModel:
    """A langchain-openai chat model for ``settings``, with its own retries off (``max_retries=0``)."""
    if not settings.enabled:
        raise LLMConfigError("no LLM is configured (provider='none'); set llm.provider to 'openai', 'azure' or 'local'")
    if settings.provider == "local" and not settings.base_url:
        raise LLMConfigError(
            "provider 'local' needs its llama.cpp server running: open the run inside "
            "lit3r.agent.local_server.local_llm(settings), which starts it and sets llm.base_url"
        )
    common: dict[str, Any] = {
        "model": settings.model,
        "temperature": settings.temperature,
        "timeout": settings.timeout_s,
        "max_retries": 0,
        "max_tokens": settings.max_tokens,
    }
    if settings.provider == "azure":
        return _azure_model(settings, common)
    if settings.provider == "local" and settings.max_tokens:  # llama.cpp ignores max_completion_tokens
        common["extra_body"] = {"max_tokens": settings.max_tokens}
    return ChatOpenAI(base_url=settings.base_url, api_key=_openai_key(settings), **common)


def _openai_key(settings: LLMSettings) -> str:
    """The key to send: the configured one, a placeholder for a custom endpoint, else a config error."""
    if settings.api_key is not None:
        return settings.api_key.get_secret_value()
    if settings.base_url:
        return PLACEHOLDER_KEY
    raise LLMConfigError("no API key for api.openai.com: set OPENAI_API_KEY or llm.api_key, or set llm.base_url")


def _azure_model(settings: LLMSettings, common: dict[str, Any]) -> AzureChatOpenAI:
    """``AzureChatOpenAI`` on ``base_url`` (the resource endpoint) and ``azure_deployment``."""
    if not settings.base_url or not settings.azure_deployment:
        raise LLMConfigError("provider 'azure' needs llm.base_url (the resource endpoint) and llm.azure_deployment")
    if settings.api_key is not None:  # else AzureChatOpenAI reads AZURE_OPENAI_API_KEY / an AD token itself
        common["api_key"] = settings.api_key
    try:
        return AzureChatOpenAI(
            azure_endpoint=settings.base_url,
            azure_deployment=settings.azure_deployment,
            api_version=settings.api_version,
            **common,
        )
    except ValueError as exc:  # pydantic's ValidationError, e.g. no key and no AZURE_OPENAI_API_KEY
        raise LLMConfigError(f"cannot build AzureChatOpenAI: {exc}") from exc


# ---------------------------------------------------------------- error classification and retry


def is_transient(exc: BaseException) -> bool:
    """True for errors worth another attempt: 408/409/429, 5xx, timeouts and connection failures."""
    if isinstance(exc, TRANSIENT_ERRORS):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    if isinstance(exc, ModelError):  # other langchain providers classify their own errors
        return exc.is_retryable
    return False


def retry_after_s(exc: BaseException) -> float | None:
    """The delay a 429/503 asks for in ``retry-after-ms`` or ``retry-after`` (seconds), if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for header, divisor in (("retry-after-ms", 1000), ("retry-after", 1)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            return float(value) / divisor
        except ValueError:
            continue  # an HTTP date: use the normal back-off
    return None


def describe_error(exc: BaseException) -> str:
    """A one-line account of a failed call that says what to check."""
    if isinstance(exc, json.JSONDecodeError):
        return f"the endpoint's response body is not valid JSON ({exc}); check llm.base_url points at the API"
    if isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        return f"HTTP {exc.status_code}: {body.get('message') or exc.message}"
    if isinstance(exc, openai.APITimeoutError):
        return "the request timed out (llm.timeout_s)"
    if isinstance(exc, openai.APIConnectionError):
        return f"cannot connect to the endpoint: {exc}"
    return f"{type(exc).__name__}: {exc}"


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


# ---------------------------------------------------------------- structured output


def tool_name(schema: type[BaseModel]) -> str:
    """The function name a schema gets as a tool or a response format."""
    return convert_to_openai_tool(schema)["function"]["name"]


def response_format(schema: type[BaseModel]) -> dict[str, Any]:
    """The OpenAI ``response_format`` asking for ``schema`` as JSON (non-strict: we validate ourselves)."""
    function = convert_to_openai_tool(schema)["function"]
    spec = {"name": function["name"], "schema": function["parameters"]}
    if function.get("description"):
        spec["description"] = function["description"]
    return {"type": "json_schema", "json_schema": spec}


def json_text(text: str) -> str:
    """The JSON part of a reply: without Markdown fences or prose around the outermost object."""
    text = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, flags=re.DOTALL)
    if fenced:
        text = fenced.group(1)
    if not text:
        raise _Unusable("the reply is empty")
    start, end = text.find("{"), text.rfind("}")
    if not text.startswith(("{", "[")) and 0 <= start < end:
        text = text[start : end + 1]
    return text


def parse_reply(message: AIMessage, schema: type[T]) -> T:
    """Validate a reply against ``schema``: the matching tool call's arguments, else the text as JSON.

    Raises:
        ValidationError: the candidate does not validate (or is not JSON).
        ValueError: there is no candidate at all (empty reply, refusal, unparsable tool-call arguments).
    """
    if refusal := message.additional_kwargs.get("refusal"):
        raise _Unusable(f"the model refused: {refusal}")
    if message.tool_calls:
        wanted = tool_name(schema)
        call = next((c for c in message.tool_calls if c["name"] == wanted), message.tool_calls[0])
        return schema.model_validate(call["args"])
    if message.invalid_tool_calls:
        bad = message.invalid_tool_calls[0]
        raise _Unusable(f"tool call arguments are not valid JSON: {bad.get('args')!r} ({bad.get('error')})")
    return schema.model_validate_json(json_text(message.text))


def shown_output(message: AIMessage) -> str:
    """What the model produced, as text: its content, else its tool-call arguments."""
    if message.text.strip():
        return message.text
    if message.tool_calls:
        return json.dumps(message.tool_calls[0]["args"], ensure_ascii=False)
    if message.invalid_tool_calls:
        return str(message.invalid_tool_calls[0].get("args") or "")
    return ""


def explain(exc: ValueError) -> str:
    """A compact error list for the repair prompt (one line per failing field)."""
    if isinstance(exc, ValidationError):
        return "\n".join(f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors())
    return str(exc)


def with_schema_hint(messages: list[BaseMessage], schema: type[BaseModel]) -> list[BaseMessage]:
    """``messages`` with the JSON schema spelled out in the system message (for ``json_mode``)."""
    hint = JSON_MODE_PROMPT.format(schema=json.dumps(convert_to_openai_tool(schema)["function"]["parameters"]))
    if messages and isinstance(messages[0], SystemMessage) and isinstance(messages[0].content, str):
        return [SystemMessage(f"{messages[0].content}\n\n{hint}"), *messages[1:]]
    return [SystemMessage(hint), *messages]


# ---------------------------------------------------------------- the wrapper


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
        recorder: gets one event dict per model call (a callable or an object with ``record``).
        budget: charged with each successful call's tokens and cost.
        sleep: how to wait between attempts (tests pass a no-op).
    """

    def __init__(
        self,
        model: BaseChatModel,
        settings: LLMSettings | None = None,
        *,
        recorder: RecorderLike | None = None,
        budget: Budget | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model = model
        self.settings = settings or LLMSettings()
        self.budget = budget
        self._record = recorder.record if isinstance(recorder, Recorder) else recorder
        self._sleep = sleep

    @classmethod
    def from_settings(
        cls, settings: LLMSettings, *, recorder: RecorderLike | None = None, budget: Budget | None = None
    ) -> LLM:
        """An ``LLM`` over :func:`make_chat_model` (raises :class:`LLMConfigError` for provider 'none')."""
        return cls(make_chat_model(settings), settings, recorder=recorder, budget=budget)

    @property
    def model_name(self) -> str:
        """The model's name as configured on the chat model, else its class name."""
        for attribute in ("deployment_name", "model_name", "model"):
            value = getattr(self.model, attribute, None)
            if isinstance(value, str) and value:
                return value
        return type(self.model).__name__

    @property
    def structured_method(self) -> StructuredMethod:
        """The structured-output method in force ('auto' resolved by the model's protocol)."""
        if self.settings.structured_output != "auto":
            return self.settings.structured_output
        if self.settings.provider == "local":  # llama.cpp grammar-constrains a forced tool call, not json_schema
            return "function_calling"
        return "json_schema" if isinstance(self.model, BaseChatOpenAI) else "function_calling"

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
            return self.model.bind_tools([schema], tool_choice=tool_name(schema))
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
            message = self._retrying(name)(attempt)
            parsed = self._parse(message, schema, event) if schema is not None else None
            self._account(message, event)
            finished = True
            return message, parsed
        except CALL_ERRORS as exc:
            code = getattr(exc, "status_code", None)
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
            if self._record is not None:
                self._record(event)

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
