"""Retrieval metrics and QASPER evidence matching, on hand-computed examples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lit3r.evals.metrics import QuestionResult, hit_at, reciprocal_rank, summarise
from lit3r.evals.qasper import QasperQuestion, evidence_chunks, load_questions
from lit3r.models import Chunk

from conftest import shared


def test_hit_and_reciprocal_rank() -> None:
    ranking = ["a", "b", "c", "d"]
    assert hit_at(ranking, {"c"}, 2) == 0.0 and hit_at(ranking, {"c"}, 3) == 1.0
    assert reciprocal_rank(ranking, {"c", "d"}) == pytest.approx(1 / 3)
    assert reciprocal_rank(ranking, {"d"}, depth=3) == 0.0
    assert reciprocal_rank(ranking, set()) == 0.0


def test_summarise_averages_over_questions() -> None:
    results = [
        QuestionResult("q1", ["p1", "p2"], ["c1", "c2", "c3"], "p1", {"c2"}, 10.0),  # paper @1, evidence @2
        QuestionResult("q2", ["p3", "p2"], ["c9"], "p2", {"c7"}, 30.0),  # paper @2, evidence missed
    ]
    report = summarise(results, ks=(1, 5))
    assert report["questions"] == 2
    assert report["paper_recall@1"] == 0.5 and report["paper_recall@5"] == 1.0
    assert report["evidence_recall@1"] == 0.0 and report["evidence_recall@5"] == 0.5
    assert report["mrr"] == pytest.approx((1 / 2 + 0) / 2)
    assert report["paper_mrr"] == pytest.approx((1 + 1 / 2) / 2)
    assert report["latency_ms_median"] == 20.0
    assert "stage_latency_ms_median" not in report  # no configuration here reports stages


def test_summarise_gives_the_median_of_each_stage() -> None:
    results = [
        QuestionResult("q1", [], [], "p1", set(), 10.0, {"sweep": 2.0, "rerank": 8.0}),
        QuestionResult("q2", [], [], "p1", set(), 20.0, {"sweep": 4.0, "rerank": 6.0, "prf": 3.0}),
        QuestionResult("q3", [], [], "p1", set(), 30.0, {"sweep": 9.0, "rerank": 1.0}),
    ]
    stages = summarise(results, ks=(1,))["stage_latency_ms_median"]
    assert stages == {"sweep": 4.0, "rerank": 6.0, "prf": 0.0}  # a stage a question skipped counts as 0 ms


def test_evidence_must_lie_wholly_inside_a_chunk() -> None:
    question = QasperQuestion(
        "q",
        "p",
        "?",
        [
            {"evidence": ["Alpha beta   gamma.", "FLOAT SELECTED: Table 1: x"], "unanswerable": False},
            {"evidence": ["Delta epsilon."], "unanswerable": False},
        ],
    )
    assert question.evidence_paragraphs == ["Alpha beta   gamma.", "Delta epsilon."]
    chunks = [
        Chunk(id="c1", paper_id="p", type="text", text="Intro.\n\nAlpha beta\ngamma.\n\nMore."),
        Chunk(id="c2", paper_id="p", type="text", text="Delta"),  # only part of a paragraph: no hit
        Chunk(id="c3", paper_id="p", type="table", text="Table 1: x"),  # floats do not count as text evidence
    ]
    assert evidence_chunks(question, chunks) == {"c1"}
    assert not question.unanswerable


def test_load_questions_from_both_layouts(tmp_path: Path) -> None:
    record = {
        "title": "T",
        "abstract": "A",
        "full_text": [{"section_name": "S", "paragraphs": ["P"]}],
        "figures_and_tables": [],
        "qas": [
            {
                "question": "Why?",
                "question_id": "q1",
                "answers": [{"answer": {"unanswerable": True, "evidence": []}}],
            }
        ],
    }
    path = tmp_path / "q.json"
    path.write_text(json.dumps({"p1": record}))
    [question] = load_questions(path)
    assert (question.id, question.paper_id, question.text, question.unanswerable) == ("q1", "p1", "Why?", True)


@pytest.mark.shared_data
def test_shared_qasper_has_848_questions_with_text_evidence() -> None:
    questions = load_questions(shared("qasper", "qasper-test-v0.3.corpus-and-dev-questions.json.gz"))
    assert len(questions) == 940
    assert sum(1 for q in questions if q.evidence_paragraphs) == 848
    hf = load_questions(shared("qasper", "qasper-train-sample-10-papers.hf-layout.json"))
    assert len(hf) == 51 and any(q.evidence_paragraphs for q in hf)
