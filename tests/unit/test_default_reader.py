"""The reader a CLI command uses when no preset is given: the local model where it is installed, for the commands
that answer a user; the offline defaults for evaluations, the claim check and corpus commands, and whenever a
preset or a chat model is named."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import lit3r.llm.local_server as local_server
from lit3r.cli import app
from lit3r.cli.app import READING_COMMANDS, default_preset, state
from lit3r.settings import Settings

runner = CliRunner()


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local runtime and its model count as installed; no preset comes from the environment."""
    monkeypatch.setattr(local_server, "local_unavailable", lambda _local: None)
    monkeypatch.delenv("LIT3R_PRESET", raising=False)


def test_reading_commands_choose_the_local_reader_only_where_it_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_server, "local_unavailable", lambda _local: None)
    assert {command: default_preset(command, Settings()) for command in ("ask", "chat", "serve", "mcp", "demo")} == {
        command: "auto" for command in READING_COMMANDS
    }
    for command in ("eval", "check", "ingest", "search", "stats", None):
        assert default_preset(command, Settings()) is None, command
    configured = Settings(llm={"provider": "openai", "base_url": "http://127.0.0.1:9/v1"})
    assert default_preset("ask", configured) is None  # a chat model the user named is kept
    monkeypatch.setattr(local_server, "local_unavailable", lambda _local: "runtime 'gpt4all' is not installed")
    assert default_preset("ask", Settings()) is None


def test_the_cli_loads_the_auto_preset_for_ask_and_keeps_eval_and_named_presets(installed, tmp_path) -> None:
    home = str(tmp_path / "home")
    result = runner.invoke(app, ["--home", home, "ask", "What is BM25?"])  # no corpus: fails before any model
    assert result.exit_code == 1 and "no lit3r home" in result.output
    assert state.settings.presets == ["auto"] and state.settings.llm.provider == "auto"
    assert state.settings.llm.reader == "compact"
    runner.invoke(app, ["--home", home, "eval", "qasper", str(tmp_path / "missing.json")])
    assert state.settings.presets == [] and state.settings.llm.provider == "none"
    runner.invoke(app, ["--home", home, "--preset", "default", "ask", "What is BM25?"])
    assert state.settings.presets == [] and state.settings.llm.provider == "none"
    runner.invoke(app, ["--home", home, "ask", "What is BM25?"], env={"LIT3R_PRESET": "qasper"})
    assert state.settings.presets == ["qasper"] and state.settings.llm.provider == "none"
