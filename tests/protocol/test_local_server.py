"""The local server's life cycle and the 'local' provider's wiring, against a fake llama.cpp server script.

``tests/fakes/llama_server.py`` takes ``llama_cpp.server``'s options and answers ``/v1/models`` and chat
completions (or exits at once, or never listens); no llama-cpp-python is needed.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from lit3r.llm import local_server
from lit3r.llm.client import make_chat_model
from lit3r.llm.errors import LLMConfigError
from lit3r.llm.local_server import LocalServer, LocalServerError, local_llm, server_arguments
from lit3r.llm.wrapper import LLM
from lit3r.settings import Settings, index_key, load_settings
from lit3r.settings.llm import LLMSettings, LocalSettings

from fakes.corpus import eight_papers
from fakes.index import built_index

FAKE_SERVER = (sys.executable, str(Path(__file__).parents[1] / "fakes" / "llama_server.py"))


class Finding(BaseModel):
    """A structured reply."""

    claim: str = Field(description="What the paper claims.")


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-model.gguf"
    path.write_bytes(b"GGUF\x03\x00\x00\x00")
    return path


@pytest.fixture
def popen_spy(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen]:
    """Every server process started (a command with ``--model``), to check it is gone afterwards."""
    started: list[subprocess.Popen] = []
    real = subprocess.Popen

    def spy(command, *args, **kwargs):
        process = real(command, *args, **kwargs)
        if "--model" in command:
            started.append(process)
        return process

    monkeypatch.setattr(local_server.subprocess, "Popen", spy)
    return started


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(variable, "127.0.0.1,localhost")


def test_the_server_answers_inside_the_block_and_is_stopped_after(gguf, tmp_path, popen_spy) -> None:
    log = tmp_path / "logs" / "llama-server.log"
    with LocalServer(gguf, log, LocalSettings(n_ctx=4096, n_threads=2), program=FAKE_SERVER) as server:
        assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
        assert server.models()["data"][0]["id"] == "tiny-model"
        url = server.base_url
    (process,) = popen_spy
    assert process.poll() is not None and server.process is None
    with pytest.raises(urllib.error.URLError):
        urllib.request.build_opener(urllib.request.ProxyHandler({})).open(f"{url}/models", timeout=2)
    text = log.read_text()
    assert f"--model {gguf}" in text and "--n_ctx 4096 --n_threads 2 --n_threads_batch 2" in text
    assert "fake llama server: mode serve" in text


def test_a_server_that_exits_while_starting_is_reported_with_its_log(gguf, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "exit")
    log = tmp_path / "llama-server.log"
    with pytest.raises(LocalServerError, match=r"exited with code 3 while starting(.|\n)*failed to load model"):
        LocalServer(gguf, log, program=FAKE_SERVER).start()


def test_a_server_that_never_answers_times_out_and_is_stopped(gguf, tmp_path, monkeypatch, popen_spy) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "silent")
    started = time.monotonic()
    with pytest.raises(LocalServerError, match=r"did not answer within 1 s(.|\n)*mode silent"):
        LocalServer(gguf, tmp_path / "log", LocalSettings(startup_timeout_s=1), program=FAKE_SERVER).start()
    assert time.monotonic() - started < 15
    assert popen_spy[0].poll() is not None


def test_ctrl_c_inside_the_block_stops_the_server(gguf, tmp_path, popen_spy) -> None:
    with pytest.raises(KeyboardInterrupt), LocalServer(gguf, tmp_path / "log", program=FAKE_SERVER):
        raise KeyboardInterrupt
    assert popen_spy[0].poll() is not None


def test_a_server_ignoring_terminate_is_killed(gguf, tmp_path, monkeypatch, popen_spy) -> None:
    monkeypatch.setattr(local_server, "STOP_WAIT_S", 0.5)
    stubborn = (
        sys.executable,
        "-c",
        "import signal, sys, runpy; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f"sys.argv = [{FAKE_SERVER[1]!r}, *sys.argv[1:]]; runpy.run_path(sys.argv[0], run_name='__main__')",
    )
    with LocalServer(gguf, tmp_path / "log", program=stubborn):
        pass
    assert popen_spy[0].returncode == -9


def test_without_llama_cpp_the_error_says_what_to_install(gguf, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(local_server.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(LocalServerError, match=r"pip install 'lit3r\[local\]'"):
        LocalServer(gguf, tmp_path / "log").start()


def test_server_arguments_use_the_free_cores_and_add_a_chat_format_only_when_set(gguf, monkeypatch) -> None:
    monkeypatch.setattr(local_server.os, "sched_getaffinity", lambda _pid: set(range(6)))
    monkeypatch.setattr(local_server.os, "cpu_count", lambda: 6)
    monkeypatch.setattr(local_server, "busy_cores", lambda: 0.3)  # an idle machine: every core reads
    arguments = server_arguments(gguf, 8080, "m", LocalSettings())
    assert arguments[arguments.index("--n_threads") + 1] == "6" and "--chat_format" not in arguments
    assert arguments[arguments.index("--n_threads_batch") + 1] == "6"
    monkeypatch.setattr(local_server, "busy_cores", lambda: 1.8)  # two cores busy with other work: left out
    assert server_arguments(gguf, 8080, "m", LocalSettings())[arguments.index("--n_threads") + 1] == "4"
    monkeypatch.setattr(local_server, "busy_cores", lambda: 7.0)  # every core busy: one thread still reads
    one = server_arguments(gguf, 8080, "m", LocalSettings())
    assert one[one.index("--n_threads") + 1] == "1"
    monkeypatch.setattr(local_server.os, "cpu_count", lambda: 16)  # lit3r may run on 6 of 16 cores
    monkeypatch.setattr(local_server, "busy_cores", lambda: 8.0)  # other work on 8 of them: 8 free, 6 usable
    assert local_server.default_threads() == 6
    monkeypatch.setattr(local_server, "busy_cores", lambda: 12.0)  # 4 free on the machine
    assert local_server.default_threads() == 4
    set_by_hand = server_arguments(gguf, 8080, "m", LocalSettings(n_threads=3))
    assert set_by_hand[set_by_hand.index("--n_threads") + 1] == "3"
    assert arguments[arguments.index("--n_ctx") + 1] == "8192"
    chatml = server_arguments(gguf, 8080, "m", LocalSettings(chat_format="chatml-function-calling"))
    assert chatml[-2:] == ["--chat_format", "chatml-function-calling"]
    assert "--cache" not in chatml
    cached = server_arguments(gguf, 8080, "m", LocalSettings(cache=True))
    assert cached[-2:] == ["--cache", "true"]  # llama.cpp's prompt cache (RAM): shared prefixes evaluated once


def test_busy_cores_reads_the_share_of_cpu_time_not_idle(monkeypatch) -> None:
    lines = iter(["cpu  100 0 100 800 0 0 0 0 0 0\n", "cpu  250 0 150 900 0 0 0 0 0 0\n"])  # 200 busy, 100 idle
    monkeypatch.setattr(local_server, "open", lambda *_a, **_k: io.StringIO(next(lines)), raising=False)
    monkeypatch.setattr(local_server.time, "sleep", lambda _s: None)
    monkeypatch.setattr(local_server.os, "cpu_count", lambda: 3)
    assert local_server.busy_cores() == pytest.approx(2.0)  # two thirds of 3 cores
    monkeypatch.setattr(local_server, "open", lambda *_a, **_k: io.StringIO("garbage"), raising=False)
    assert local_server.busy_cores() is None


# ---------------------------------------------------------------- the 'local' provider


def test_provider_local_needs_the_server_running() -> None:
    with pytest.raises(LLMConfigError, match="local_llm"):
        make_chat_model(LLMSettings(provider="local"))


def test_local_llm_serves_structured_output_through_a_forced_tool_call(gguf, tmp_path, monkeypatch) -> None:
    requests = tmp_path / "requests.jsonl"
    monkeypatch.setenv("FAKE_LLAMA_REQUESTS", str(requests))
    monkeypatch.setenv("FAKE_LLAMA_ARGS", json.dumps({"claim": "BM25 wins"}))
    settings = Settings(home=tmp_path / "home", llm={"provider": "local", "local": {"model_path": str(gguf)}})
    with local_llm(settings, program=FAKE_SERVER) as served:
        assert served.llm.provider == "local" and served.llm.base_url.startswith("http://127.0.0.1:")
        assert served.llm.model == "tiny-model" and served.home == settings.home
        llm = LLM.from_settings(served.llm)
        assert llm.structured_method == "function_calling"
        assert llm.structured("What does it claim?", Finding, name="finding") == Finding(claim="BM25 wins")
        llm.invoke("Say hello.", name="hello")
        with local_llm(served, program=("false",)) as again:  # already served: no second server
            assert again is served
    structured, text = map(json.loads, requests.read_text().splitlines())
    assert structured["model"] == "tiny-model" and structured["tool_choice"]["function"]["name"] == "Finding"
    assert text["max_tokens"] == settings.llm.max_tokens  # llama.cpp ignores max_completion_tokens
    assert (settings.home / "logs" / "llama-server.log").is_file()


def test_other_providers_pass_through_untouched(tmp_path) -> None:
    settings = Settings(home=tmp_path, llm={"provider": "openai", "base_url": "http://127.0.0.1:9/v1"})
    with local_llm(settings, program=("false",)) as same:
        assert same is settings


def test_the_local_preset_and_the_environment_select_the_provider(monkeypatch) -> None:
    preset = load_settings("local")
    assert preset.llm.provider == "local" and preset.llm.max_attempts == 1 and preset.llm.timeout_s >= 300
    # Sized to a 1.5B model on a CPU: the compact reader is the one model call besides the claim judge.
    assert (preset.llm.reader, preset.llm.planning) == ("compact", "offline")
    assert not preset.llm.local.cache and preset.llm.local.model == "qwen2.5-coder-1.5b"  # its states grow unbounded
    assert preset.grounding.judge == "exact"  # guards, then quoted words checked verbatim: no judge call
    assert load_settings("local-small").llm.local.model == "qwen2.5-coder-0.5b"
    # The grammar bounds a reply (3 quotes of 300 characters, a 400-character answer, the JSON around them);
    # max_tokens must let the longest reply it allows finish (at 3 characters a token), or it ends as broken JSON.
    from lit3r.reading.compact_reader import ANSWER_CHARS, MAX_SUPPORT, QUOTE_CHARS

    longest = MAX_SUPPORT * (QUOTE_CHARS + 30) + ANSWER_CHARS + 60
    for name in ("local", "local-small"):
        compact = load_settings(name)
        assert compact.llm.max_tokens * 3 >= longest, name
        assert compact.retriever.reader_chunks == 8 and compact.llm.compact.passages == 10
    # The former loop for the same model: the two-stage reader, LLM planning, fewer rounds and papers.
    full = load_settings("local-full")
    assert (full.llm.reader, full.llm.planning, full.llm.provider) == ("lit3r", "llm", "local")
    retriever = full.retriever
    assert (retriever.max_rounds, retriever.subqueries_first, retriever.reader_papers) == (2, 2, 3)
    assert (retriever.verify_papers, retriever.verify_chunk_chars) == (5, 800)
    for name in ("local", "local-small", "local-full"):
        assert index_key(load_settings(name)) == index_key(load_settings())  # same index as the offline default
    monkeypatch.setenv("LIT3R_LLM__PROVIDER", "local")
    monkeypatch.setenv("LIT3R_LLM__LOCAL__N_CTX", "4096")
    settings = load_settings()
    assert settings.llm.provider == "local" and settings.llm.local.n_ctx == 4096


# ---------------------------------------------------------------- ask and chat on the command line


@pytest.fixture
def cli_home(tmp_path, gguf, hashing_encoder, monkeypatch, popen_spy) -> Path:
    """A small index, the local preset's server replaced by the fake, and every model reply unusable as JSON."""
    home = tmp_path / "home"
    built_index(home, eight_papers(tmp_path / "papers.jsonl"))
    monkeypatch.setattr(local_server, "LLAMA_SERVER", FAKE_SERVER)
    monkeypatch.setenv("LIT3R_LLM__LOCAL__RUNTIME", "llama_cpp")  # the fake speaks for llama.cpp's server
    monkeypatch.setenv("LIT3R_LLM__LOCAL__MODEL_PATH", str(gguf))
    monkeypatch.setenv("FAKE_LLAMA_ARGS", "{}")
    return home


def llm_models(trace_path: str) -> set[str]:
    events = json.loads(Path(trace_path).read_text(encoding="utf-8"))["events"]
    return {e["data"]["model"] for e in events if e["type"] == "llm"}


def test_cli_ask_with_the_local_preset_starts_the_server_and_falls_back_on_bad_json(cli_home, popen_spy) -> None:
    from typer.testing import CliRunner

    from lit3r.cli import app
    from lit3r.index.corpus_index import CorpusIndex

    question = "Which paper studies okapi saturation?"  # one unit of the synthetic corpus covers it
    result = CliRunner().invoke(app, ["--home", str(cli_home), "--preset", "local", "ask", question, "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["citations"] and llm_models(answer["trace_path"]) == {"tiny-model"}
    chunks = CorpusIndex.open(Settings(home=cli_home)).chunk_by_id
    assert all(c["quote"] in chunks[c["chunk_id"]].text for c in answer["citations"])
    assert len(popen_spy) == 1 and popen_spy[0].poll() is not None


def test_cli_chat_with_the_local_preset_keeps_one_server_for_the_session(cli_home, popen_spy) -> None:
    from typer.testing import CliRunner

    from lit3r.cli import app

    messages = "Which paper studies okapi saturation and inverted indexes?\nWhat about its lexical analysis?\n"
    result = CliRunner().invoke(app, ["--home", str(cli_home), "--preset", "local", "chat"], input=messages)
    assert result.exit_code == 0, result.output
    assert result.stdout.count("rounds: ") == 2
    assert len(popen_spy) == 1 and popen_spy[0].poll() is not None
