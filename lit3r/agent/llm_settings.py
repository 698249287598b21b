"""LLM settings: which chat endpoint to call, how long to wait, how often to retry, what it may spend.

Any OpenAI-compatible endpoint works through ``provider='openai'`` and ``base_url`` (OpenAI itself, vLLM,
Ollama, llama.cpp server); Azure OpenAI through ``provider='azure'``. ``provider='none'`` (the default)
means no model is called and the system answers offline.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

StructuredMethod = Literal["json_schema", "function_calling", "json_mode"]


class LLMSettings(BaseModel):
    """How lit3r talks to a chat model. Explicit values win; ``api_key`` falls back to ``OPENAI_API_KEY``."""

    provider: Literal["openai", "azure", "none"] = Field(
        default="none",
        description="'openai': any OpenAI-compatible chat-completions endpoint (ChatOpenAI); 'azure': Azure "
        "OpenAI (AzureChatOpenAI); 'none': no LLM, the offline default answers.",
    )
    base_url: str | None = Field(
        default=None,
        description="'openai': the endpoint's base URL, e.g. 'http://127.0.0.1:8000/v1' for vLLM (None: "
        "api.openai.com). 'azure': the resource endpoint, e.g. 'https://<resource>.openai.azure.com/'.",
    )
    api_key: SecretStr | None = Field(
        default=None,
        description="API key. When unset, read from OPENAI_API_KEY. A custom base_url without a key sends a "
        "placeholder, since local servers usually ignore it.",
    )
    model: str = Field(default="gpt-4o-mini", description="Model name sent with each request.")
    azure_deployment: str | None = Field(default=None, description="Azure only: the deployment name.")
    api_version: str | None = Field(default="2024-10-21", description="Azure only: the REST API version.")
    temperature: float = Field(default=0.0, ge=0, le=2, description="Sampling temperature; 0 for repeatable runs.")
    timeout_s: float = Field(default=60.0, gt=0, description="Seconds one HTTP call may take before it is abandoned.")
    max_attempts: int = Field(
        default=3,
        ge=1,
        description="Attempts per call, the first included, on transient errors only (429, 5xx, timeouts, "
        "connection errors). langchain's and openai's own retries are always off.",
    )
    retry_initial_s: float = Field(default=1.0, ge=0, description="First back-off wait; doubles per attempt.")
    retry_max_s: float = Field(default=30.0, ge=0, description="Longest back-off wait between two attempts.")
    retry_after_cap_s: float = Field(
        default=30.0,
        ge=0,
        description="A server's Retry-After is honoured when it is at most this many seconds; longer ones fall "
        "back to the normal back-off.",
    )
    max_tokens: int | None = Field(default=2048, gt=0, description="Most completion tokens one call may produce.")
    token_budget: int | None = Field(
        default=500_000, gt=0, description="Prompt plus completion tokens one question may use (None: no limit)."
    )
    cost_budget: float | None = Field(
        default=None, ge=0, description="Most money one question may cost (None: no limit)."
    )
    cost_per_1k_prompt: float = Field(
        default=0.0, ge=0, description="Price of 1,000 prompt tokens, for cost accounting."
    )
    cost_per_1k_completion: float = Field(
        default=0.0, ge=0, description="Price of 1,000 completion tokens, for cost accounting."
    )
    structured_output: Literal["auto", "json_schema", "function_calling", "json_mode"] = Field(
        default="auto",
        description="How a pydantic schema is requested: 'json_schema' (response_format with the schema), "
        "'function_calling' (one forced tool call), 'json_mode' (JSON object, schema in the prompt); 'auto' "
        "picks json_schema for OpenAI-protocol models and function_calling for other chat models.",
    )

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _key_from_environment(self) -> LLMSettings:
        """Fill ``api_key`` from ``OPENAI_API_KEY`` when it was not given."""
        if self.api_key is None and os.environ.get("OPENAI_API_KEY"):
            self.api_key = SecretStr(os.environ["OPENAI_API_KEY"])
        return self

    @property
    def enabled(self) -> bool:
        """Whether an LLM endpoint is configured at all."""
        return self.provider != "none"

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """What a call with these token counts costs."""
        return (prompt_tokens * self.cost_per_1k_prompt + completion_tokens * self.cost_per_1k_completion) / 1000
