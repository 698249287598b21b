"""What a user meets first: home folder checks, quiet logs, literal help text, safe printing, a fast start."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lit3r.cli import app
from lit3r.cli.agent import print_answer
from lit3r.cli.app import printable
from lit3r.models import Answer, Citation, Locator

from fakes.qasper import qasper_paper, write_qasper

runner = CliRunner()
HASHING_CLI = Path(__file__).parents[1] / "fakes" / "hashing_cli.py"


def _corpus(tmp_path: Path) -> Path:
    return write_qasper(
        tmp_path / "q.json",
        {"p1": qasper_paper("Sparse Retrieval", [("Method", ["We tune BM25 with k1 and b."])])},
    )


READ_ONLY = [
    ["stats"],
    ["stats", "--json"],
    ["search", "bm25"],
    ["trace", "list"],
    ["trace", "show", "20260101T000000-abcdef12"],
    ["ask", "What is BM25?"],
    ["index"],
]


@pytest.mark.parametrize("command", READ_ONLY, ids=" ".join)
def test_commands_that_read_do_not_create_a_mistyped_home(tmp_path: Path, command: list[str]) -> None:
    home = tmp_path / "mistyped"
    result = runner.invoke(app, ["--home", str(home), *command])
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"error: no lit3r home at {home}: the folder does not exist (check --home or LIT3R_HOME; "
        "`lit3r ingest` creates it)"
    )
    assert not home.exists()


@pytest.mark.parametrize("command", [["stats"], ["ingest", "x.md"], ["index"], ["trace", "list"]], ids=" ".join)
def test_a_home_that_is_a_file_is_one_clear_line(tmp_path: Path, command: list[str]) -> None:
    home = tmp_path / "home.txt"
    home.write_text("a file")
    result = runner.invoke(app, ["--home", str(home), *command])
    assert (result.exit_code, result.output.strip()) == (1, f"error: --home {home} is a file, not a folder")


def test_an_existing_home_without_a_corpus_is_not_given_one(tmp_path: Path) -> None:
    home = tmp_path / "empty-home"
    home.mkdir()
    result = runner.invoke(app, ["--home", str(home), "stats"])
    assert result.exit_code == 1
    assert result.output.strip() == f"error: no corpus in {home} (no corpus.sqlite): run `lit3r ingest PATH` first"
    assert list(home.iterdir()) == []


def test_help_keeps_literal_brackets() -> None:
    result = runner.invoke(app, ["ask", "--help"])
    assert result.exit_code == 0
    assert "inline citations [n]" in " ".join(result.output.split())


def test_trace_show_and_list_escape_control_characters(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "traces").mkdir(parents=True)
    question = "Which \x1b[31mred\x1b[0m model\x07 wins?\u202e"
    trace = {"id": "t1", "question": question, "events": [], "started_at": "2026-01-01T00:00:00"}
    (home / "traces" / "t1.json").write_text(json.dumps(trace), encoding="utf-8")
    for command in (["trace", "list"], ["trace", "show", "t1"]):
        result = runner.invoke(app, ["--home", str(home), *command])
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and "\x07" not in result.output and "\u202e" not in result.output
        assert "Which \\x1b[31mred\\x1b[0m model\\x07 wins?\\u202e" in result.output


def test_answers_and_quotes_are_printed_without_control_characters(capsys) -> None:
    locator = Locator(section="Intro\x1b]0;title\x07")
    answer = Answer(
        question="q",
        text="BM25 wins\x1b[2J [1].",
        citations=[
            Citation(number=1, chunk_id="p1::c0001", paper_id="p1\x1b[5m", locator=locator, quote="wins\r\x1b[2K")
        ],
        sufficient=True,
    )
    print_answer(answer)
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\r" not in printed
    assert "BM25 wins\\x1b[2J [1]." in printed and "p1\\x1b[5m" in printed


def test_printable_keeps_text_and_escapes_controls() -> None:
    assert printable("Résumé — 数据\tok\n") == "Résumé — 数据\tok\n"
    assert printable("a\x00b\x1bc\x9bd\u200fe") == "a\\x00b\\x1bc\\x9bd\\u200fe"


def test_ingest_prints_a_file_name_that_looks_like_markup_literally(tmp_path: Path) -> None:
    odd = tmp_path / "[bold]odd[red].md"
    odd.write_text("")
    good = tmp_path / "good.md"
    good.write_text("# Good\n\nBody.\n")
    result = runner.invoke(app, ["--home", str(tmp_path / "home"), "ingest", str(odd), str(good)])
    assert result.exit_code == 0, result.output
    assert f"skipped {odd}: the file is empty" in result.output


def _child(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(HASHING_CLI), *args], capture_output=True, text=True, timeout=300, check=False, env=env
    )


def test_index_prints_no_debug_lines_without_verbose(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    for home in ("quiet", "verbose"):
        assert _child("--home", str(tmp_path / home), "ingest", str(corpus)).returncode == 0
    quiet = _child("--home", str(tmp_path / "quiet"), "index")
    assert quiet.returncode == 0, quiet.stderr
    assert "DEBUG" not in quiet.stderr and "Building index" not in quiet.stderr  # bm25s logs at DEBUG
    assert quiet.stdout.startswith("indexed 1 papers")
    verbose = _child("--home", str(tmp_path / "verbose"), "-v", "index")
    assert "Building index from tokens" in " ".join(verbose.stderr.split())


def test_trace_show_of_a_file_that_is_not_a_trace(tmp_path: Path) -> None:
    for name, content in (("list.json", "[1, 2]"), ("shape.json", '{"events": [{"type": "x"}]}'), ("bad.json", "{")):
        path = tmp_path / name
        path.write_text(content)
        result = runner.invoke(app, ["trace", "show", str(path)])
        assert result.exit_code == 1 and result.output.startswith(f"error: {path}: not a lit3r trace ("), name


def test_the_command_line_imports_no_model_library() -> None:
    """`lit3r --help`, `trace list` and `stats` must start in well under a second: no torch at import time."""
    heavy = ("torch", "transformers", "sentence_transformers", "langgraph", "langchain_core", "faiss", "bm25s")
    code = f"import sys, lit3r.cli; print([m for m in {heavy!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
