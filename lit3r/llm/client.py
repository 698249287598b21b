"""Chat models from settings: ``ChatOpenAI`` / ``AzureChatOpenAI`` with the client's own retries off.

Retries happen in :class:`lit3r.llm.wrapper.LLM`, on transient errors only. Every reply passes
:func:`check_reply` (an httpx response hook): a 200 that is not the chat-completions API (an HTML page, a body
that is not JSON, an error object, a completion without choices) fails as
:class:`~lit3r.llm.errors.LLMResponseError` naming what came back, before the client's parsers trip over it with
an ``AttributeError`` or ``IndexError``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx
from langchain_core.language_models import BaseChatModel

from lit3r.llm.errors import LLMConfigError, LLMResponseError
from lit3r.settings.llm import LLMSettings

if TYPE_CHECKING:  # langchain_openai (and openai's types) take seconds to import: only when a model is built
    from langchain_openai import AzureChatOpenAI

PREVIEW_CHARS = 120

PLACEHOLDER_KEY = "not-needed"
"""Sent as the API key to a custom ``base_url`` when none is configured (local servers ignore it)."""


def not_the_api(content_type: str, body: bytes) -> str | None:
    """What is wrong with a 200 reply to a chat-completions request, or None when it is one with a message."""
    preview = " ".join(body[:PREVIEW_CHARS].decode("utf-8", "replace").split())
    if "json" not in content_type.lower():
        return (
            f"the endpoint answered with {content_type or 'no content type'} ({preview!r}), not the chat-completions "
            "API; check that llm.base_url points at an OpenAI-compatible API (usually ending in /v1), not a web page"
        )
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        return f"the endpoint's response body is not valid JSON ({preview!r}); check llm.base_url points at the API"
    if not isinstance(data, dict):
        return f"the endpoint answered with JSON that is not a chat completion ({preview!r})"
    if data.get("error"):
        return f"the endpoint answered with an error object: {' '.join(str(data['error']).split())[:300]}"
    choices = data.get("choices")
    if not choices:
        return f"the endpoint's reply has no choices (keys: {', '.join(sorted(data)) or 'none'})"
    if not isinstance(choices[0], dict) or not isinstance(choices[0].get("message"), dict):
        return "the endpoint's first choice has no message"
    return None


def check_reply(response: httpx.Response) -> None:
    """An httpx response hook: a 200 to a chat-completions request must be a completion with a message."""
    if response.status_code != 200 or not response.request.url.path.endswith("/chat/completions"):
        return
    content_type = response.headers.get("content-type", "")
    if "text/event-stream" in content_type:  # a streamed completion: read by the client as it arrives
        return
    response.read()
    problem = not_the_api(content_type, response.content)
    if problem is not None:
        raise LLMResponseError(problem)


def checked_http_client() -> httpx.Client:
    """The HTTP client every chat model uses: replies that are not the API fail as :class:`LLMResponseError`."""
    return httpx.Client(event_hooks={"response": [check_reply]})


def make_chat_model(settings: LLMSettings) -> BaseChatModel:
    """A langchain-openai chat model for ``settings``, with its own retries off (``max_retries=0``)."""
    if not settings.enabled:
        raise LLMConfigError("no LLM is configured (provider='none'); set llm.provider to 'openai', 'azure' or 'local'")
    if settings.provider == "local" and not settings.base_url:
        raise LLMConfigError(
            "provider 'local' needs its llama.cpp server running: open the run inside "
            "lit3r.llm.local_server.local_llm(settings), which starts it and sets llm.base_url"
        )
    common: dict[str, Any] = {
        "model": settings.model,
        "temperature": settings.temperature,
        "timeout": settings.timeout_s,
        "max_retries": 0,
        "max_tokens": settings.max_tokens,
        "http_client": checked_http_client(),
    }
    if settings.provider == "azure":
        return _azure_model(settings, common)
    if settings.provider == "local" and settings.max_tokens:  # llama.cpp ignores max_completion_tokens
        common["extra_body"] = {"max_tokens": settings.max_tokens}
    from langchain_openai import ChatOpenAI

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
    from langchain_openai import AzureChatOpenAI

    try:
        return AzureChatOpenAI(
            azure_endpoint=settings.base_url,
            azure_deployment=settings.azure_deployment,
            api_version=settings.api_version,
            **common,
        )
    except ValueError as exc:  # pydantic's ValidationError, e.g. no key and no AZURE_OPENAI_API_KEY
        raise LLMConfigError(f"cannot build AzureChatOpenAI: {exc}") from exc
