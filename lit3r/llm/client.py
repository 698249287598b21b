"""Chat models from settings: ``ChatOpenAI`` / ``AzureChatOpenAI`` with the client's own retries off.

Retries happen in :class:`lit3r.llm.wrapper.LLM`, on transient errors only.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_openai import AzureChatOpenAI, ChatOpenAI

from lit3r.llm.errors import LLMConfigError
from lit3r.llm.settings import LLMSettings

PLACEHOLDER_KEY = "not-needed"
"""Sent as the API key to a custom ``base_url`` when none is configured (local servers ignore it)."""


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
