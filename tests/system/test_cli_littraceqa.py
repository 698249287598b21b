"""`lit3r eval littraceqa`: the gold file scored against itself, and a malformed submission named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lit3r.cli import app

from conftest import shared

TABLE3 = (
    "paper_precision_macro",
    "paper_recall_macro",
    "paper_f1_macro",
    "evidence_precision_macro",
    "evidence_recall_macro",
    "evidence_f1_macro",
    "multiple_choice_accuracy",
    "table_row_f1_macro",
    "table_cell_accuracy_macro",
    "table_cell_accuracy_micro",
)


@pytest.mark.shared_data
def test_gold_scored_against_itself_is_perfect(tmp_path: Path) -> None:
    gold = shared("littraceqa", "validation.jsonl")
    report_path = tmp_path / "report.json"
    result = CliRunner().invoke(
        app, ["eval", "littraceqa", "--gold", str(gold), "--pred", str(gold), "--json", str(report_path)]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(report_path.read_text())
    assert all(report[name] == 1.0 for name in TABLE3)
    assert report["questions"] == 55


def test_malformed_submission_is_named(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text("")
    pred = tmp_path / "pred.jsonl"
    pred.write_text("{broken\n")
    result = CliRunner().invoke(app, ["eval", "littraceqa", "--gold", str(gold), "--pred", str(pred)])
    assert result.exit_code == 1 and "pred.jsonl:1" in result.output
