"""``lit3r trace replay`` and ``lit3r trace diff`` on a built home: JSON documents, readable reports, exit codes,
and clear errors for missing or broken traces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lit3r.cli import app

from fakes.corpus import QUESTION
from fakes.demo import DEMO_QUESTION

runner = CliRunner()


def _invoke(home: Path, *args: str, env: dict | None = None):
    return runner.invoke(app, ["--home", str(home), *args], env=env)


def _ask(home: Path, reranker: str) -> str:
    result = _invoke(home, "ask", QUESTION, "--json", env={"LIT3R_RERANKER": reranker})
    assert result.exit_code == 0, result.output
    return Path(json.loads(result.stdout)["trace_path"]).stem


def test_trace_diff_and_replay_from_the_command_line(disk_index, hashing_encoder) -> None:
    home = disk_index.settings.home
    lexical, bi_encoder = _ask(home, "lexical"), _ask(home, "bi-encoder")

    result = _invoke(home, "trace", "diff", lexical, bi_encoder, "--json")
    assert result.exit_code == 0, result.output
    diff = json.loads(result.stdout)
    assert (diff["a"]["trace_id"], diff["b"]["trace_id"]) == (lexical, bi_encoder)
    assert diff["first_difference"].startswith("ranking reranker scores")
    moved = [r for r in diff["rankings"] if r["moves"]]
    assert moved and all({"id", "rank_a", "rank_b", "change"} == set(m) for r in moved for m in r["moves"])
    text = _invoke(home, "trace", "diff", lexical, bi_encoder).stdout
    assert "first difference: ranking reranker scores" in text and "→" in text and "reranker bi-encoder" in text

    result = _invoke(home, "trace", "replay", lexical, "--json", env={"LIT3R_RERANKER": "lexical"})
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["reproduced"] and report["trace_id"] == lexical and report["replay_trace_id"] != lexical
    result = _invoke(home, "trace", "replay", lexical, "--current-settings", env={"LIT3R_RERANKER": "bi-encoder"})
    assert result.exit_code == 2 and "DIFFERS" in result.stdout and "rankings: differ" in result.stdout
    # without the flag the replay runs with the settings the trace recorded: today's reranker does not matter
    result = _invoke(home, "trace", "replay", bi_encoder, env={"LIT3R_RERANKER": "lexical"})
    assert result.exit_code == 0 and "reproduced" in result.stdout, result.output
    assert "reranker='bi-encoder' (today 'lexical')" in " ".join(result.stdout.split())


def test_a_trace_records_its_preset_and_settings_and_diff_lists_what_changed(disk_index, hashing_encoder) -> None:
    home = disk_index.settings.home
    plain = _ask(home, "lexical")
    secret = {"LIT3R_RERANKER": "lexical", "LIT3R_LLM__API_KEY": "sk-not-for-traces"}
    result = _invoke(home, "--preset", "seed", "ask", QUESTION, "--json", env=secret)
    assert result.exit_code == 0, result.output
    seed = Path(json.loads(result.stdout)["trace_path"]).stem
    raw = (home / "traces" / f"{seed}.json").read_text()
    doc = json.loads(raw)
    assert "sk-not-for-traces" not in raw
    assert doc["presets"] == ["seed"] and doc["settings"]["retriever"]["fusion"] == "blend"
    assert "api_key" not in doc["settings"]["llm"] and "server" not in doc["settings"]

    diff = json.loads(_invoke(home, "trace", "diff", plain, seed, "--json").stdout)
    assert (diff["a"]["presets"], diff["b"]["presets"]) == ([], ["seed"])
    changed = {c["key"]: (c["a"], c["b"]) for c in diff["settings"]}
    assert changed["retriever.fusion"] == ("learned", "blend") and changed["retriever.prf_when"] == ("agree", "always")
    assert "reranker" not in changed
    text = " ".join(_invoke(home, "trace", "diff", plain, seed).stdout.split())
    assert "presets: A defaults, B seed" in text and 'retriever.fusion: A "learned" B "blend"' in text
    # a replay of the seed run needs no --preset
    result = _invoke(home, "trace", "replay", seed, env={"LIT3R_RERANKER": "lexical"})
    assert result.exit_code == 0 and "reproduced" in result.stdout, result.output


def test_trace_commands_name_a_missing_or_broken_trace(disk_index, hashing_encoder, tmp_path: Path) -> None:
    home = disk_index.settings.home
    result = _invoke(home, "trace", "replay", "no-such-trace")
    assert result.exit_code == 1 and "no trace 'no-such-trace'" in result.output
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    result = _invoke(home, "trace", "diff", str(broken), str(broken))
    assert result.exit_code == 1 and "broken.json: not a lit3r trace" in result.output
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"events": [], "question": ""}))
    result = _invoke(home, "trace", "replay", str(empty))
    assert result.exit_code == 1 and "cannot replay" in result.output and "the question is empty" in result.output


@pytest.mark.slow
def test_the_demo_questions_trace_replays_to_its_exact_answer(demo_home: Path) -> None:
    """The README's demo question on the demo corpus with the real default encoder: ask, then replay."""
    result = _invoke(demo_home, "ask", DEMO_QUESTION, "--json")
    assert result.exit_code == 0, result.output
    asked = json.loads(result.stdout)
    result = _invoke(demo_home, "trace", "replay", Path(asked["trace_path"]).stem, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["reproduced"] and report["first_difference"] is None
    replayed = json.loads((demo_home / "traces" / f"{report['replay_trace_id']}.json").read_text())
    assert replayed["answer"]["text"] == asked["answer"] and asked["citations"]
    assert [c["quote"] for c in replayed["answer"]["citations"]] == [c["quote"] for c in asked["citations"]]
