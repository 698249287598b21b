"""`lit3r eval qasper --retrieval`: the report contract, on a small QASPER file written by the test."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from lit3r.cli import app
from lit3r.evals.retrieval import CONFIGURATIONS, stage_timings

from conftest import qasper_paper

TOPICS = {
    "p1": ("Sparse Retrieval", "BM25 term weighting with saturation k1 and length normalisation b."),
    "p2": ("Dense Retrieval", "A small transformer encoder maps passages to vectors for cosine search."),
    "p3": ("Citation Graphs", "Bibliographic coupling counts shared references between two papers."),
    "p4": ("Answer Verification", "An entailment model checks whether a cited passage supports the claim."),
}


def _question(qid: str, text: str, evidence: list[str]) -> dict:
    return {
        "question": text,
        "question_id": qid,
        "answers": [{"answer": {"unanswerable": not evidence, "evidence": evidence, "extractive_spans": []}}],
    }


def _data(tmp_path: Path) -> Path:
    papers = {}
    for pid, (title, key) in TOPICS.items():
        filler = [f"{title} filler paragraph number {i} about unrelated matters." for i in range(3)]
        paper = qasper_paper(title, [("Method", [key, *filler])])
        paper["qas"] = [_question(f"{pid}-q", f"How does {key.split()[0]} {key.split()[1]} work?", [key])]
        papers[pid] = paper
    papers["p1"]["qas"].append(_question("p1-none", "Is there anything?", []))  # no evidence: not evaluated
    path = tmp_path / "qasper.json"
    path.write_text(json.dumps(papers))
    return path


def test_report_contract_and_easy_questions(tmp_path: Path, hashing_encoder) -> None:
    report_path = tmp_path / "report.json"
    result = CliRunner().invoke(
        app,
        [
            "--home",
            str(tmp_path / "home"),
            "eval",
            "qasper",
            str(_data(tmp_path)),
            "--retrieval",
            "--json",
            str(report_path),
            "--reranker",
            "lexical",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(report_path.read_text())
    assert report["questions"] == 4
    assert set(report["configurations"]) == set(CONFIGURATIONS)
    keys = {f"{kind}_recall@{k}" for kind in ("paper", "evidence") for k in (1, 5, 10, 20, 50)}
    keys |= {"mrr", "questions", "latency_ms_median"}
    for name, settings in report["configurations"].items():
        assert set(settings) == {"open_domain", "in_paper"}, name
        for metrics in settings.values():
            assert keys <= set(metrics), name
            assert metrics["questions"] == 4
            assert metrics["paper_recall@50"] == 1.0, name  # four papers: every paper is in the top 50
            assert metrics["evidence_recall@50"] == 1.0, name  # and every paper has few chunks
        assert settings["in_paper"]["paper_recall@1"] == 1.0, name
    assert report["configurations"]["bm25"]["open_domain"]["paper_recall@1"] == 1.0
    stages = report["configurations"]["lit3r"]["open_domain"]["stage_latency_ms_median"]
    assert {"decompose", "sweep", "prf", "candidates", "rerank", "verify", "ranking_a", "relate", "fuse"} <= set(stages)
    assert "prf" not in report["configurations"]["lit3r_no_prf"]["in_paper"]["stage_latency_ms_median"]
    assert "stage_latency_ms_median" not in report["configurations"]["hybrid"]["open_domain"]


def test_stage_timings_sum_subqueries_and_rounds() -> None:
    events = [
        {"type": "decompose", "name": "keywords", "round": 1, "duration_ms": 1.0, "data": {}},
        {"type": "retrieve", "name": "r", "round": 1, "duration_ms": 9.0, "data": {"timings_ms": {"sweep": 2.0}}},
        {"type": "retrieve", "name": "r", "round": 1, "duration_ms": 9.0, "data": {"timings_ms": {"sweep": 3.5}}},
        {"type": "note", "name": "hyde", "round": 1, "duration_ms": 0.0, "data": {}},
        {"type": "rank", "name": "ranking_a", "round": None, "duration_ms": 0.5, "data": {}},
    ]
    assert stage_timings(events) == {"decompose": 1.0, "sweep": 5.5, "ranking_a": 0.5}


def test_unknown_configuration_is_refused(tmp_path: Path, hashing_encoder) -> None:
    result = CliRunner().invoke(
        app, ["--home", str(tmp_path / "h"), "eval", "qasper", str(_data(tmp_path)), "--retrieval", "--configs", "bm99"]
    )
    assert result.exit_code == 1 and "unknown configuration(s) bm99" in result.output
