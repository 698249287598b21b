"""The errors of the LLM layer, and how a failed call is classified (transient or not) and described."""

from __future__ import annotations

import json
from functools import cache

from langchain_core.exceptions import ModelError

# openai's package takes seconds to import on a small machine and an offline run never needs it: its error
# classes are looked up the first time a model call fails (a model was built then, so the import is paid).


@cache
def transient_errors() -> tuple[type[BaseException], ...]:
    """The openai client's errors worth another attempt."""
    import openai

    return (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError, openai.APIConnectionError)


@cache
def call_errors() -> tuple[type[BaseException], ...]:
    """What a model call raises when the endpoint, not our code, is at fault."""
    import openai

    return (openai.OpenAIError, ModelError, json.JSONDecodeError, LLMResponseError)


def __getattr__(name: str):
    if name == "TRANSIENT_ERRORS":
        return transient_errors()
    if name == "CALL_ERRORS":
        return call_errors()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class LLMError(Exception):
    """Base class of the errors of the LLM layer."""


class LLMResponseError(LLMError):
    """The endpoint answered, but not with the chat-completions API: an HTML page (a gateway, a login page, a
    base URL pointing at a web UI), an error object with status 200, or a completion without choices."""


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


def response_problem(exc: BaseException) -> LLMResponseError | None:
    """The reply check's error behind ``exc`` (the client reports an exception raised while it read the reply as
    a connection error, with the real cause chained)."""
    while exc is not None:
        if isinstance(exc, LLMResponseError):
            return exc
        exc = exc.__cause__
    return None


def is_transient(exc: BaseException) -> bool:
    """True for errors worth another attempt: 408/409/429, 5xx, timeouts and connection failures (not a reply
    that is not the API: asking again gets the same page)."""
    if response_problem(exc) is not None:
        return False
    if isinstance(exc, transient_errors()):
        return True
    import openai

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
    if (problem := response_problem(exc)) is not None:
        return str(problem)
    if isinstance(exc, json.JSONDecodeError):
        return f"the endpoint's response body is not valid JSON ({exc}); check llm.base_url points at the API"
    import openai

    if isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        return f"HTTP {exc.status_code}: {body.get('message') or exc.message}"
    if isinstance(exc, openai.APITimeoutError):
        return "the request timed out (llm.timeout_s)"
    if isinstance(exc, openai.APIConnectionError):
        return f"cannot connect to the endpoint: {exc}"
    return f"{type(exc).__name__}: {exc}"
