"""Gate calibration on QASPER labels: both modes, the stored threshold, and `lit3r eval gate`."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from lit3r.cli import app
from lit3r.evals.calibrate import GateSample, calibrate
from lit3r.retrieval.gate import GateThreshold, load_gate, save_gate
from lit3r.settings import Settings

from fakes.qasper import topics_file


def test_both_modes_report_abstention_metrics() -> None:
    # answerable questions score 0.8, 0.9, 0.7; unanswerable ones 0.1 and 0.75
    samples = [
        GateSample(f"q{i}", s, a) for i, (s, a) in enumerate([(0.8, 1), (0.9, 1), (0.7, 1), (0.1, 0), (0.75, 0)])
    ]
    modes = calibrate(samples, percentile=20)
    f1 = modes["f1"]
    # the best answerable-F1 threshold keeps 0.7, 0.75, 0.8, 0.9: it abstains on 0.1 alone (1 TP, 0 FP, 1 FN)
    assert 0.1 < f1["threshold"] <= 0.7
    assert (f1["tp"], f1["fp"], f1["fn"]) == (1, 0, 1)
    assert f1["precision"] == 1.0 and f1["recall"] == 0.5 and abs(f1["f1"] - 2 / 3) < 1e-9
    assert modes["percentile"]["calibration"]["percentile"] == 20
    assert modes["percentile"]["abstained"] == 1  # the 20th percentile (linear) lies between 0.1 and 0.7


def test_threshold_is_stored_per_index_settings_and_reranker(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, reranker="lexical")
    assert load_gate(settings) is None
    save_gate(settings, GateThreshold.fixed(0.42), "lexical")
    assert load_gate(settings) == GateThreshold.fixed(0.42)
    assert load_gate(settings.model_copy(update={"reranker": "bi-encoder"})) is None  # another score scale
    assert load_gate(Settings(home=tmp_path, reranker="lexical", chunker={"kind": "qasper"})) is None


def test_eval_gate_command(tmp_path: Path, hashing_encoder) -> None:
    home = tmp_path / "home"
    report_path = tmp_path / "gate.json"
    result = CliRunner().invoke(
        app,
        ["--home", str(home), "eval", "gate", str(topics_file(tmp_path)), "--save", "f1", "--json", str(report_path)],
        env={"LIT3R_RERANKER": "lexical"},
    )
    assert result.exit_code == 0, result.output
    report = json.loads(report_path.read_text())
    assert report["questions"] == 5 and report["unanswerable"] == 1
    assert set(report["modes"]) == {"f1", "percentile"}
    for mode in report["modes"].values():
        assert {"threshold", "precision", "recall", "f1"} <= set(mode)
    stored = load_gate(Settings(home=home, reranker="lexical"))
    assert stored is not None and stored.value == report["modes"]["f1"]["threshold"]
    [eval_home] = list((home / "evals").iterdir())  # the evaluation corpus gets the same threshold
    assert load_gate(Settings(home=eval_home, reranker="lexical")) == stored
    assert len(report["saved"]) == 2
