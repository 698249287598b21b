"""``lit3r mcp config``: each host's document with absolute paths, the offline environment, no secrets."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from lit3r.cli import app

runner = CliRunner()
ENV = {"LIT3R_RERANKER": "lexical", "LIT3R_LLM__API_KEY": "sk-secret", "OPENAI_API_KEY": "sk-other"}


def config(tmp_path: Path, *args: str) -> dict:
    result = runner.invoke(
        app, ["--home", str(tmp_path / "home"), "--preset", "qasper", "mcp", "config", *args], env=ENV
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_stdio_configurations_name_absolute_paths_and_an_offline_environment(tmp_path: Path) -> None:
    every = config(tmp_path)
    assert set(every) == {"claude-desktop", "claude-code", "vscode", "cursor"}
    for client, document in every.items():
        key = "servers" if client == "vscode" else "mcpServers"
        entry = document["config"][key]["lit3r"]
        assert Path(entry["command"]).is_absolute() and os.access(entry["command"], os.X_OK)
        assert entry["args"] == ["--home", str((tmp_path / "home").absolute()), "--preset", "qasper", "mcp"]
        assert entry["env"] == {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "LIT3R_RERANKER": "lexical"}
        assert "sk-" not in json.dumps(document) and document["file"]
    assert every["vscode"]["config"]["servers"]["lit3r"]["type"] == "stdio"
    assert config(tmp_path, "--client", "cursor") == every["cursor"]["config"]


def test_http_configurations_name_the_url_and_claude_desktop_is_stdio_only(tmp_path: Path) -> None:
    entry = config(tmp_path, "--client", "vscode", "--transport", "http", "--port", "9001")["servers"]["lit3r"]
    assert entry == {"type": "http", "url": "http://127.0.0.1:9001/mcp"}
    assert "claude-desktop" not in config(tmp_path, "--transport", "http")
    result = runner.invoke(app, ["mcp", "config", "--client", "claude-desktop", "--transport", "http"])
    assert result.exit_code == 1 and "stdio only" in result.output
    result = runner.invoke(app, ["mcp", "config", "--client", "emacs"])
    assert result.exit_code == 1 and "unknown client 'emacs'" in result.output
