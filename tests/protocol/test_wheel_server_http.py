"""The wheel runtime over HTTP: which server ``llm.local.runtime`` starts, and lit3r's own client talking to
``lit3r.llm.wheel_server`` (a scripted generator in-process; the real module in a subprocess over a stand-in
``gpt4all`` package, tests/fakes/gpt4all_stub)."""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from lit3r.llm import local_server
from lit3r.llm.gguf_template import ChatTemplate, model_info
from lit3r.llm.local_server import (
    LLAMA_SERVER,
    WHEEL_SERVER,
    LocalServer,
    LocalServerError,
    chosen_runtime,
    local_llm,
    server_program,
)
from lit3r.llm.trace import TraceRecorder
from lit3r.llm.wheel_server import ChatService, handler
from lit3r.llm.wrapper import LLM
from lit3r.reading.compact_reader import CompactReply
from lit3r.settings import Settings
from lit3r.settings.llm import LLMSettings, LocalSettings

from fakes.wheel_model import CHATML_TOOLS, ScriptedGenerator, write_gguf

STUB = Path(__file__).parents[1] / "fakes" / "gpt4all_stub"
GOOD = {"support": [{"passage": 1, "quote": "BM25 wins."}], "kind": "span", "answer": "BM25"}
QUESTION = [("system", "Answer from passages."), ("human", "[1] BM25 wins.\n\nQuestion: what wins?")]


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(variable, "127.0.0.1,localhost")


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return write_gguf(tmp_path / "qwen-test.gguf", CHATML_TOOLS)


@contextmanager
def serve(model: Path, replies: list[str]) -> Iterator[tuple[str, ScriptedGenerator]]:
    generator = ScriptedGenerator(replies)
    service = ChatService(ChatTemplate(model_info(model)), generator, model.stem, lambda _line: None)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(service))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", generator
    finally:
        server.shutdown()
        server.server_close()


# ---------------------------------------------------------------- which runtime


def test_auto_takes_llama_cpp_when_installed_else_gpt4all(monkeypatch) -> None:
    have: set[str] = set()
    monkeypatch.setattr(local_server, "installed", lambda module: module in have)
    assert chosen_runtime("auto") == "llama_cpp" and server_program("auto") == LLAMA_SERVER  # neither: llama's error
    have.add("gpt4all")
    assert chosen_runtime("auto") == "gpt4all" and server_program("auto") == WHEEL_SERVER
    have.add("llama_cpp")
    assert chosen_runtime("auto") == "llama_cpp" and chosen_runtime("gpt4all") == "gpt4all"
    assert LocalServer(Path("m.gguf"), Path("log"), LocalSettings(runtime="gpt4all")).program == WHEEL_SERVER
    assert WHEEL_SERVER[-2:] == ("-m", "lit3r.llm.wheel_server")


def test_a_missing_runtime_names_both_extras(model, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(local_server, "installed", lambda module: False)
    with pytest.raises(LocalServerError, match=r"runtime 'gpt4all' needs gpt4all: pip install 'lit3r\[local-wheel\]'"):
        LocalServer(model, tmp_path / "log", LocalSettings(runtime="gpt4all")).start()
    with pytest.raises(LocalServerError, match=r"no compiler"):
        LocalServer(model, tmp_path / "log", LocalSettings(runtime="llama_cpp")).start()


# ---------------------------------------------------------------- lit3r's client against the wheel server


def test_structured_output_is_repaired_when_the_model_writes_no_json(model) -> None:
    continuation = json.dumps(GOOD).removeprefix('{"support": [{"passage":') + "}</tool_call>"
    with serve(model, [" The answer is BM25.", continuation]) as (base_url, generator):
        recorder = TraceRecorder()
        settings = LLMSettings(provider="local", base_url=base_url, model=model.stem, max_tokens=256)
        llm = LLM.from_settings(settings, recorder=recorder)
        reply = llm.structured(QUESTION, CompactReply, name="read.compact")
    assert reply == CompactReply.model_validate(GOOD)
    first, repair = recorder.calls()
    assert first["output"].endswith("The answer is BM25.") and first["parse_error"]  # text, not a call: repaired
    assert repair["name"] == "read.compact.repair" and repair["tool_calls"][0]["args"] == GOOD
    assert repair["parse_error"] is None and repair["prompt_tokens"] > first["prompt_tokens"] > 0
    assert "could not be used" in generator.prompts[1]  # the client's repair prompt reached the model


def test_the_http_surface_answers_models_and_refuses_bad_requests(model) -> None:
    with serve(model, []) as (base_url, _):
        with urllib.request.urlopen(f"{base_url}/models", timeout=5) as response:
            assert json.loads(response.read())["data"][0]["id"] == "qwen-test"
        for path, body, status in (("/nowhere", b"{}", 404), ("/chat/completions", b"[1]", 400)):
            with pytest.raises(urllib.error.HTTPError) as error:
                urllib.request.urlopen(urllib.request.Request(f"{base_url}{path}", data=body), timeout=5)
            assert error.value.code == status and "error" in json.loads(error.value.read())
        streamed = json.dumps({"messages": [{"role": "user", "content": "hi"}], "stream": True}).encode()
        with pytest.raises(urllib.error.HTTPError, match="400"):
            urllib.request.urlopen(urllib.request.Request(f"{base_url}/chat/completions", data=streamed), timeout=5)


def test_local_llm_with_runtime_gpt4all_starts_the_wheel_server(model, tmp_path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(STUB))  # `installed("gpt4all")` finds the stand-in
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(STUB), os.environ.get("PYTHONPATH", "")]))
    evaluated = tmp_path / "evaluated.jsonl"
    monkeypatch.setenv("FAKE_GPT4ALL_LOG", str(evaluated))
    local = {"model_path": str(model), "runtime": "gpt4all", "n_threads": 1, "startup_timeout_s": 60}
    settings = Settings(home=tmp_path / "home", llm={"provider": "local", "max_tokens": 256, "local": local})
    with local_llm(settings) as served:
        recorder = TraceRecorder()
        llm = LLM.from_settings(served.llm, recorder=recorder)
        first = llm.structured(QUESTION, CompactReply, name="read.compact")
        second = llm.structured([QUESTION[0], ("human", "[1] BM25 wins.\n\nQuestion: which wins?")], CompactReply,
                                name="read.compact")  # fmt: skip
        hello = llm.invoke("Say hello.", name="hello")
    assert first == second == CompactReply.model_validate(GOOD) and hello.text == "You said: Say hello."
    assert (
        recorder.calls()[0]["model"] == "qwen-test" and recorder.calls()[0]["tool_calls"][0]["name"] == "CompactReply"
    )
    runs = [json.loads(line) for line in evaluated.read_text().splitlines()]
    first_call = sum(r["evaluated"] for r in runs[:2])  # the system message, then the rest
    assert runs[2]["n_past"] == runs[0]["evaluated"] > 0  # the second call starts after the shared system message
    assert sum(r["evaluated"] for r in runs[2:4]) < first_call
    log = (settings.home / "logs" / "llama-server.log").read_text()
    assert "-m lit3r.llm.wheel_server --model" in log and "lit3r.wheel_server: qwen-test.gguf loaded" in log


# ---------------------------------------------------------------- provider 'auto'


def stub_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(STUB))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(STUB), os.environ.get("PYTHONPATH", "")]))


def test_auto_answers_offline_when_no_runtime_is_installed(model, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(local_server, "installed", lambda module: False)
    settings = Settings(home=tmp_path, llm={"provider": "auto", "local": {"model_path": str(model)}})
    with local_llm(settings, program=("false",)) as served:
        assert served.llm.provider == "none" and not served.llm.enabled and served.llm.base_url is None
    assert not (tmp_path / "logs").exists()  # no server was started


def test_auto_serves_the_model_when_runtime_and_model_are_there(model, tmp_path, monkeypatch) -> None:
    stub_on_path(monkeypatch)
    monkeypatch.setattr(local_server, "installed", lambda module: module == "gpt4all")  # llama_cpp not here
    settings = Settings(home=tmp_path, llm={"provider": "auto", "local": {"model_path": str(model), "n_threads": 1}})
    with local_llm(settings) as served:
        assert served.llm.provider == "local" and served.llm.enabled and served.llm.model == "qwen-test"
        assert LLM.from_settings(served.llm).invoke("Hi.", name="hi").text == "You said: Hi."
    assert "lit3r.llm.wheel_server" in (tmp_path / "logs" / "llama-server.log").read_text()


def test_auto_answers_offline_when_the_server_does_not_start(tmp_path, monkeypatch, caplog) -> None:
    stub_on_path(monkeypatch)
    broken = tmp_path / "no-template.gguf"
    broken.write_bytes(b"GGUF\x03\x00\x00\x00" + bytes(16))  # a GGUF header without metadata: the server exits
    local = {"model_path": str(broken), "runtime": "gpt4all", "startup_timeout_s": 60}
    settings = Settings(home=tmp_path, llm={"provider": "auto", "local": local})
    with local_llm(settings) as served:
        assert served.llm.provider == "none"
    assert "did not start" in caplog.text and "no chat template" in caplog.text
    with (
        pytest.raises(LocalServerError, match="exited"),
        local_llm(settings.model_copy(update={"llm": settings.llm.model_copy(update={"provider": "local"})})),
    ):
        pass  # provider 'local' reports the failure instead


def test_the_auto_preset_is_the_local_loop_with_provider_auto() -> None:
    from lit3r.settings import load_settings

    auto, local = load_settings("auto"), load_settings("local")
    assert auto.llm.provider == "auto" and local.llm.provider == "local"
    assert auto.llm.model_copy(update={"provider": "local"}) == local.llm and auto.retriever == local.retriever
