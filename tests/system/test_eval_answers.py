"""`lit3r eval qasper --answers`: the agent answers QASPER questions, predictions are written and scored.

End-to-end runs use the small QASPER file of ``fakes.qasper.topics_file`` (four papers, one question each, plus one
unanswerable question) with extractive spans, so the official scorer can read every annotation; the hashing
encoder and the lexical reranker keep each run under a second.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lit3r.app import session as session_module
from lit3r.app.session import Session
from lit3r.cli import app
from lit3r.evals.answers import answer_text, evidence_paragraphs, stage_timings
from lit3r.evals.qasper_score import abstention_scores, load_gold, read_predictions, score_predictions
from lit3r.models import Answer, Block, Citation, Locator, Paper, ParsedPaper
from lit3r.retrieval.gate import GateThreshold

from fakes.qasper import topics_file

ENV = {"LIT3R_RERANKER": "lexical"}
PREDICTION_KEYS = {"question_id", "predicted_answer", "predicted_evidence"}
REPORT_KEYS = {
    "answer_f1",
    "answer_f1_by_type",
    "evidence_f1",
    "questions",
    "predictions_path",
    "setting",
    "planner",
    "latency_ms_median_by_stage",
    "failed_questions",
}
STAGES = {"total", "search", "verify", "expand", "synthesize"}


def _qasper(tmp_path: Path) -> Path:
    return topics_file(tmp_path, spans=True)


def _run(tmp_path: Path, data: Path, *args: str) -> tuple[Any, dict]:
    """Run `lit3r eval qasper DATA --answers ARGS --json REPORT`; return the result and the report."""
    report_path = tmp_path / "report.json"
    command = ["--home", str(tmp_path / "home"), "eval", "qasper", str(data), "--answers", *args]
    result = CliRunner().invoke(app, [*command, "--json", str(report_path)], env=ENV)
    assert result.exit_code == 0, result.output
    return result, json.loads(report_path.read_text())


def _rows(path: str | Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def test_report_predictions_and_scorer_cross_check(tmp_path: Path, hashing_encoder) -> None:
    data = _qasper(tmp_path)
    result, report = _run(tmp_path, data)
    assert REPORT_KEYS <= set(report)
    assert (report["setting"], report["planner"], report["questions"], report["failed_questions"]) == (
        "open_domain",
        "fixed",
        5,
        0,
    )
    assert STAGES <= set(report["latency_ms_median_by_stage"])
    assert all(v >= 0 for v in report["latency_ms_median_by_stage"].values())
    path = Path(report["predictions_path"])
    assert path.name == "predictions-open_domain.jsonl" and path.parent.parent.name == "evals"

    rows = _rows(path)
    assert len(rows) == 5 and all(set(row) == PREDICTION_KEYS for row in rows)
    gold = load_gold(data)
    for row in rows:
        paper_id = row["question_id"].split("-")[0]
        paragraphs = {p for section in gold[paper_id]["full_text"] for p in section["paragraphs"]}
        assert set(row["predicted_evidence"]) <= paragraphs, row
    by_id = {row["question_id"]: row for row in rows}
    assert "BM25 term weighting" in by_id["p1-q"]["predicted_answer"]
    assert "[" not in by_id["p1-q"]["predicted_answer"]
    assert gold["p1"]["qas"][0]["answers"][0]["answer"]["evidence"][0] in by_id["p1-q"]["predicted_evidence"]

    scores = score_predictions(gold, read_predictions(path))
    for key in ("answer_f1", "answer_f1_by_type", "evidence_f1", "questions", "missing_predictions"):
        assert scores[key] == report[key], key
    assert report["answer_f1"] > 0.5
    assert 0 <= report["evidence_f1_chunks"] <= 1.0 and report["evidence_f1_quoted"] == report["evidence_f1"]
    assert report["unanswerable"] == abstention_scores(gold, read_predictions(path))
    assert report["unanswerable"]["some_annotator"]["questions"] == 1  # p1-none
    assert [row["answer_f1"] for row in report["published"]] == [33.63, 43.3]
    assert "published LED-base, given the whole paper: answer F1 33.6, evidence F1 29.9 (Dasigi" in " ".join(
        result.output.split()
    )
    assert "abstention on questions some annotator calls unanswerable (1): precision" in " ".join(result.output.split())


def test_insufficient_answers_predict_unanswerable(tmp_path: Path, hashing_encoder, monkeypatch) -> None:
    monkeypatch.setattr(session_module, "load_gate", lambda _settings: GateThreshold.fixed(1e9))  # nothing passes
    target = tmp_path / "out" / "pred.jsonl"
    _, report = _run(tmp_path, _qasper(tmp_path), "--predictions", str(target), "--limit", "2")
    assert report["predictions_path"] == str(target) and report["questions"] == 2
    rows = _rows(target)
    assert [row["question_id"] for row in rows] == ["p1-q", "p1-none"]
    assert all(row["predicted_answer"] == "Unanswerable" and row["predicted_evidence"] == [] for row in rows)
    assert report["abstained"] == 2
    assert report["answer_f1_by_type"]["none"] == 1.0  # the unanswerable question is answered right
    assert report["missing_predictions"] == 0  # --limit scores only the questions it ran


def test_in_paper_restricts_candidates_to_the_question_paper(tmp_path: Path, hashing_encoder, monkeypatch) -> None:
    calls: list[tuple[str, list[str] | None, list[str]]] = []
    real_ask = Session.ask

    def spy(self: Session, question: str, **kwargs: Any) -> Answer:
        answer = real_ask(self, question, **kwargs)
        calls.append((question, kwargs.get("allowed_papers"), answer.candidate_papers))
        return answer

    monkeypatch.setattr(Session, "ask", spy)
    _, report = _run(tmp_path, _qasper(tmp_path), "--in-paper")
    assert report["setting"] == "in_paper"
    assert Path(report["predictions_path"]).name == "predictions-in_paper.jsonl"
    gold = load_gold(_qasper(tmp_path))
    paper_of = {qa["question"]: pid for pid, record in gold.items() for qa in record["qas"]}
    assert len(calls) == 5
    for question, allowed, candidates in calls:
        assert allowed == [paper_of[question]]
        assert set(candidates) <= {paper_of[question]}


def test_a_failing_question_is_counted_and_scored_missing(
    tmp_path: Path, hashing_encoder, monkeypatch, caplog: pytest.LogCaptureFixture
) -> None:
    data = _qasper(tmp_path)
    failing = load_gold(data)["p2"]["qas"][0]["question"]
    real_ask = Session.ask

    def flaky(self: Session, question: str, **kwargs: Any) -> Answer:
        if question == failing:
            raise RuntimeError("boom")
        return real_ask(self, question, **kwargs)

    monkeypatch.setattr(Session, "ask", flaky)
    _, report = _run(tmp_path, data, "--retrieval", "--configs", "bm25")
    assert set(report) == {"retrieval", "answers"}
    assert report["retrieval"]["configurations"].keys() == {"bm25"}
    answers = report["answers"]
    assert answers["failed_questions"] == 1 and answers["questions"] == 5
    assert answers["failures"] == [{"question_id": "p2-q", "error": "RuntimeError: boom"}]
    assert answers["missing_predictions"] == 1
    assert "p2-q" not in {row["question_id"] for row in _rows(answers["predictions_path"])}
    assert any("p2-q" in r.getMessage() and "boom" in r.getMessage() for r in caplog.records)  # logged with its id


def test_a_mode_is_required(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["--home", str(tmp_path / "h"), "eval", "qasper", str(_qasper(tmp_path))])
    assert result.exit_code == 1 and "--retrieval, --answers or both" in result.output


def _paper() -> ParsedPaper:
    blocks = [
        Block(type="text", text="First paragraph. It has two sentences.", section="Intro"),
        Block(type="text", text="Second paragraph about results.", section="Intro"),
        Block(type="table", text="Table 1: Results on the test set.", object_id="Table 1"),
    ]
    return ParsedPaper(paper=Paper(id="p", title="T", abstract="A."), blocks=blocks).with_spans()


def _citation(number: int, first: int, last: int, quote: str, parsed: ParsedPaper) -> Citation:
    start, end = parsed.blocks[first].char_start, parsed.blocks[last].char_end
    locator = Locator(paragraph=first, paragraph_end=last, char_start=start, char_end=end)
    return Citation(number=number, chunk_id=f"p::c{number}", paper_id="p", locator=locator, quote=quote)


def test_evidence_paragraphs_floats_order_and_quotes() -> None:
    parsed = _paper()
    citations = [
        _citation(1, 2, 2, "Table 1: Results", parsed),
        _citation(2, 0, 1, "Second paragraph", parsed),
    ]
    answer = Answer(question="q", text="Results [2]. More [1] and [2].", citations=citations, sufficient=True)
    lookup = {"p": parsed}.get
    assert answer_text(answer) == "Results. More and."
    assert evidence_paragraphs(answer, lookup, quoted_only=False) == [  # every paragraph of the cited chunks
        "First paragraph. It has two sentences.",
        "Second paragraph about results.",
        "FLOAT SELECTED: Table 1: Results on the test set.",
    ]
    assert evidence_paragraphs(answer, lookup) == [  # the default: the paragraphs the quotes stand in
        "Second paragraph about results.",
        "FLOAT SELECTED: Table 1: Results on the test set.",
    ]
    abstained = answer.model_copy(update={"sufficient": False})
    assert answer_text(abstained) == "Unanswerable" and evidence_paragraphs(abstained, lookup) == []


def test_a_yes_no_answer_is_predicted_as_its_choice() -> None:
    """QASPER's boolean answers are "Yes"/"No": the quoted words after the choice are evidence, not the answer."""
    parsed = _paper()
    citation = _citation(1, 1, 1, "Second paragraph", parsed)
    polar = Answer(
        question="Is it?", text="No — Second paragraph [1]", citations=[citation], option="No", sufficient=True
    )
    assert answer_text(polar) == "No"
    assert evidence_paragraphs(polar, {"p": parsed}.get) == ["Second paragraph about results."]
    assert answer_text(polar.model_copy(update={"sufficient": False})) == "Unanswerable"


def test_stage_timings_merge_parallel_calls() -> None:
    def event(name: str, second: float, ms: float, kind: str = "tool") -> dict:
        return {"type": kind, "name": name, "started_at": f"2026-01-01T00:00:{second:09.6f}+00:00", "duration_ms": ms}

    events = [
        event("planner", 0.0, 1.0, "node"),
        event("search_chunks", 0.001, 10.0),
        event("search_chunks", 0.002, 10.0),  # parallel with the first: 11 ms together
        event("verify_sufficiency", 0.020, 2.0),
        event("synthesize_answer", 0.030, 5.0),
    ]
    timings = stage_timings(events)
    assert timings == pytest.approx({"total": 35.0, "search": 11.0, "verify": 2.0, "expand": 0.0, "synthesize": 5.0})
