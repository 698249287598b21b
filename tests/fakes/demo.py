"""The bundled demo corpus built into a home with the real default encoder (what `make demo` builds)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from lit3r.cli import app
from lit3r.cli.corpus import demo_papers_dir

DEMO_QUESTION = "How much did evidence verification reduce unsupported claims?"


def build_demo_home(home: Path) -> Path:
    """Ingest the demo papers into ``home`` and index them (all-MiniLM-L6-v2, offline); returns ``home``."""
    runner = CliRunner()
    for args in (["ingest", str(demo_papers_dir())], ["index"]):
        result = runner.invoke(app, ["--home", str(home), *args])
        assert result.exit_code == 0, result.output
    return home
