"""`lit3r eval pubmedqa`: the agent answers PQA-L questions over their own abstracts, with options, end to end.

The folder is a small PQA-L fixture (``pqal_folder`` of the verdict training tests: each abstract has a
BACKGROUND, a METHODS and a RESULTS context); the hashing encoder and the lexical reranker keep the run short.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner
from unit.test_verdict_training import pqal_folder

from lit3r.cli import app
from lit3r.evals.pubmedqa import PubMedQAFormatError, load_items, quote_report

ENV = {"LIT3R_RERANKER": "lexical"}


def _run(tmp_path: Path, *args: str) -> tuple[str, dict]:
    data, report = pqal_folder(tmp_path), tmp_path / "report.json"
    command = ["--home", str(tmp_path / "home"), "eval", "pubmedqa", str(data), "--setting", "own", *args]
    result = CliRunner().invoke(app, [*command, "--json", str(report)], env=ENV)
    assert result.exit_code == 0, result.output
    return result.output, json.loads(report.read_text())


def test_the_training_questions_are_asked_with_their_quotes_located(tmp_path: Path, hashing_encoder) -> None:
    output, document = _run(tmp_path, "--split", "train")
    own = document["own"]
    assert document["question_split"] == "train" and own["questions"] == 18  # 6 of each label are training ones
    rows = document["own_rows"]
    assert {r["id"] for r in rows} == {f"{label}{n}" for label in ("yes", "no", "maybe") for n in range(2, 8)}
    answered = [r for r in rows if r["predicted"] is not None]
    assert answered and sum(own["quoted_sections"].values()) == len(answered)
    assert set(own["quoted_sections"]) <= {"BACKGROUND", "METHODS", "RESULTS"}
    # each abstract's result states the verdict and matches the question: the verdict quotes it
    assert own["quoted_from_results"] == own["quoted_sections"].get("RESULTS") == len(answered)
    assert "quotes from a results section" in output and "in-sample" in output
    assert "BioBERT (reasoning-required): accuracy 68.1" in output


def test_the_test_questions_are_the_default(tmp_path: Path, hashing_encoder) -> None:
    _, document = _run(tmp_path, "--every", "2")
    assert document["question_split"] == "test" and document["own"]["questions"] == 3  # 6 test ids, every 2nd


def test_a_wrong_split_is_refused_by_name(tmp_path: Path) -> None:
    data = pqal_folder(tmp_path).parent
    result = CliRunner().invoke(app, ["--home", str(tmp_path / "h"), "eval", "pubmedqa", str(data), "--split", "dev"])
    assert result.exit_code != 0 and "--split takes test or train, not 'dev'" in result.output
    jsonl = tmp_path / "pubmed_test.jsonl"
    jsonl.write_text("", encoding="utf-8")
    with pytest.raises(PubMedQAFormatError, match="no training split"):
        load_items(jsonl, "train")


def test_quotes_are_counted_by_section_and_results_headings_are_read_by_name() -> None:
    rows = [
        {"predicted": "yes", "quoted_section": "RESULTS"},
        {"predicted": "no", "quoted_section": "PRINCIPAL FINDINGS"},
        {"predicted": "no", "quoted_section": "BACKGROUND"},
        {"predicted": "yes", "quoted_section": None},
        {"predicted": None, "quoted_section": None},  # an abstention quotes nothing and is not counted
    ]
    report = quote_report(rows)
    assert report["quoted_sections"] == {"RESULTS": 1, "PRINCIPAL FINDINGS": 1, "BACKGROUND": 1, "(none)": 1}
    assert report["quoted_from_results"] == 2
