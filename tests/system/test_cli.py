"""The command line: JSON contracts of search and stats, exit codes, the demo end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lit3r.cli import app

from fakes.qasper import qasper_paper, write_qasper

runner = CliRunner()

HIT_KEYS = {"chunk_id", "paper_id", "score", "type", "locator", "text"}
LOCATOR_KEYS = {"page", "section", "paragraph", "paragraph_end", "object_id", "char_start", "char_end"}


def _run(home: Path, *args: str) -> str:
    result = runner.invoke(app, ["--home", str(home), *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def _corpus(tmp_path: Path) -> Path:
    return write_qasper(
        tmp_path / "q.json",
        {
            "p1": qasper_paper("Sparse Retrieval", [("Method", ["We tune BM25 with k1 and b."])]),
            "p2": qasper_paper("Dense Retrieval", [("Method", ["A small encoder embeds passages."])]),
        },
    )


def test_ingest_index_search_stats_json(tmp_path: Path, hashing_encoder) -> None:
    home = tmp_path / "home"
    first = json.loads(_run(home, "ingest", str(_corpus(tmp_path)), "--json"))
    assert first["papers_added"] == 2 and first["papers_in_corpus"] == 2
    second = json.loads(_run(home, "ingest", str(_corpus(tmp_path)), "--json"))
    assert second["added"] == [] and len(second["unchanged"]) == 1
    _run(home, "index")
    hits = json.loads(_run(home, "search", "BM25 k1", "--mode", "bm25", "--json", "-k", "3"))
    assert hits and set(hits[0]) == HIT_KEYS and set(hits[0]["locator"]) == LOCATOR_KEYS
    assert hits[0]["paper_id"] == "p1" and hits[0]["locator"]["section"] == "Method"
    stats = json.loads(_run(home, "stats", "--json"))
    assert stats["papers"] == 2
    assert stats["chunks"] == sum(stats["chunk_types"].values()) > 0
    assert stats["chunk_types"]["title_abstract"] == 2
    assert {"references_parsed", "references_resolved"} <= set(stats)
    assert stats["index"]["up_to_date"] is True
    text = _run(home, "search", "BM25 k1", "--mode", "hybrid")
    assert "p1" in text and "§ Method" in text


def test_errors_are_one_clear_line(tmp_path: Path, hashing_encoder) -> None:
    home = tmp_path / "home"
    home.mkdir()
    result = runner.invoke(app, ["--home", str(home), "search", "anything"])
    assert result.exit_code == 1 and "run `lit3r index` first" in result.output
    result = runner.invoke(app, ["--home", str(home), "index"])
    assert result.exit_code == 1 and "lit3r ingest" in result.output
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = runner.invoke(app, ["--home", str(home), "ingest", str(bad)])
    assert result.exit_code == 2 and "bad.json" in result.output and "malformed JSON" in result.output
    result = runner.invoke(app, ["--home", str(home), "--preset", "nope", "stats"])
    assert result.exit_code == 1 and "unknown preset" in result.output


def _chunks(home: Path) -> dict[str, dict]:
    index_folder = next(home.glob("indexes/*/gen-*"))
    lines = (index_folder / "chunks.jsonl").read_text().splitlines()
    return {c["id"]: {**c, "locator": {**_NO_LOCATOR, **c.get("locator", {})}} for c in map(json.loads, lines)}


_NO_LOCATOR = dict.fromkeys(LOCATOR_KEYS)


@pytest.mark.slow
def test_demo_end_to_end_with_the_real_default_embedder(tmp_path: Path) -> None:
    """The README's main command: ingest + index the demo corpus with all-MiniLM-L6-v2, search."""
    home = tmp_path / "demo"
    output = _run(home, "demo")
    assert "7 file(s) ingested" in output
    stats = json.loads(_run(home, "stats", "--json"))
    assert stats["papers"] == 7
    assert {"title_abstract", "text", "table", "figure", "equation"} <= set(stats["chunk_types"])
    assert stats["references_resolved"] >= 14
    hits = json.loads(_run(home, "search", "Which fusion method reached the highest recall at 10?", "--json"))
    assert (hits[0]["paper_id"], hits[0]["type"]) == ("demo-rank-fusion", "table")
    assert hits[0]["locator"]["object_id"] == "Table 1"
    assert "[1]" in output and "trace:" in output  # the demo also answers its question with citations

    answer = json.loads(_run(home, "ask", "How many questions does the LocatorQA benchmark contain?", "--json"))
    assert {"answer", "citations", "candidate_papers", "rounds", "trace_path"} <= set(answer)
    assert answer["citations"] and answer["rounds"] >= 1
    chunks = _chunks(home)
    for citation in answer["citations"]:
        assert {"chunk_id", "paper_id", "locator", "quote"} <= set(citation)
        chunk = chunks[citation["chunk_id"]]
        assert " ".join(citation["quote"].split()) in " ".join(chunk["text"].split())
        assert chunk["locator"] == citation["locator"]
    timeline = _run(home, "trace", "show", Path(answer["trace_path"]).stem)
    for step in ("search_chunks", "verify_sufficiency", "expand_neighbors", "synthesize_answer"):
        assert step in timeline


def test_ask_restricted_to_an_unknown_paper_fails_with_its_id(disk_index, hashing_encoder) -> None:
    home = str(disk_index.settings.home)
    result = CliRunner().invoke(app, ["--home", home, "ask", "What saturates?", "--paper", "no-such-paper"])
    assert result.exit_code == 1 and "unknown paper id(s): no-such-paper" in result.output
    answered = CliRunner().invoke(app, ["--home", home, "ask", "Which paper studies okapi saturation?", "--json"])
    assert answered.exit_code == 0 and json.loads(answered.stdout)["fallbacks"] == []


def test_ask_steps_prints_each_step_to_stderr_as_it_completes(disk_index, hashing_encoder) -> None:
    home = str(disk_index.settings.home)
    result = CliRunner().invoke(app, ["--home", home, "ask", "Which paper studies okapi saturation?", "--steps"])
    assert result.exit_code == 0, result.output
    steps = [line for line in result.stderr.splitlines() if line.strip()]
    assert any("tool search_chunks" in line for line in steps) and any("synthesize_answer" in line for line in steps)
    assert all(line.split()[1] == "s" for line in steps)  # "<seconds> s  <type> <name>"
    assert "search_chunks" not in result.stdout  # the answer alone on stdout
