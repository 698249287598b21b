"""LitTraceQA submission rows from answers: the format the scorer reads, option text mapped back to its letter."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from lit3r.evals.littraceqa import SubmissionFormatError, read_submission, score_submission, validate_submission_row
from lit3r.evals.submission import option_letter, question_options, to_littraceqa_row, write_submission
from lit3r.models import Answer, Chunk, Citation, Locator

from conftest import shared

OPTIONS = {"A": "11.12", "B": "1.60", "C": "14.70", "D": "15.66"}
TABLE = Chunk(
    id="acl_5::c0007",
    paper_id="acl_5",
    type="table",
    text="Table 4: F1 on NaturalQ\nICAE | 1.0\n500x | 15.7",
    locator=Locator(page=6, paragraph=12, paragraph_end=12, object_id="Table 4"),
)
TEXT = Chunk(
    id="acl_9::c0002",
    paper_id="acl_9",
    type="text",
    text="All experiments run on a single NVIDIA RTX 4090 GPU.",
    locator=Locator(page=9, section="5.6 Setup", paragraph=3, paragraph_end=3),
)
INDEX = SimpleNamespace(chunk_by_id={c.id: c for c in (TABLE, TEXT)})


def _cite(number: int, chunk: Chunk, quote: str) -> Citation:
    return Citation(number=number, chunk_id=chunk.id, paper_id=chunk.paper_id, locator=chunk.locator, quote=quote)


def _answer(**update) -> Answer:
    base = Answer(
        question="How much does 500x outperform ICAE?",
        text="14.70 — 500x | 15.7 [1] on a single GPU [2].",
        citations=[_cite(1, TABLE, "500x | 15.7"), _cite(2, TEXT, "a single NVIDIA RTX 4090 GPU")],
        sufficient=True,
        option="14.70",
        candidate_papers=["acl_5", "acl_9", "acl_1"],
    )
    return base.model_copy(update=update)


def test_row_fields_validate_and_map_the_option_back_to_its_letter() -> None:
    row = to_littraceqa_row("q_001", _answer(), INDEX, options=OPTIONS)
    assert validate_submission_row(row, "row") == "q_001"
    assert row["gold_papers"] == ["acl_5", "acl_9"]
    assert row["candidate_papers"] == ["acl_5", "acl_9", "acl_1"]
    assert row["answer"]["multiple_choice"] == {"gold": "C"}
    assert row["answer"]["freeform"]["text"] == "14.70 — 500x | 15.7 on a single GPU."
    table, text = row["evidence"]
    assert table == {
        "paper_id": "acl_5",
        "source_type": "table",
        "evidence_text_or_value": "500x | 15.7",
        "locator": {"page": 6, "paragraph_id": 12, "table_id": "Table 4"},
    }
    assert text["source_type"] == "text_span"
    assert text["locator"] == {"page": 9, "section": "5.6 Setup", "paragraph_id": 3}


def test_row_scores_against_a_gold_row_in_the_validation_format() -> None:
    gold = {
        "query_id": "q_001",
        "answer_types": ["multiple_choice"],
        "gold_papers": [{"paper_id": "acl_5"}],
        "evidence": [{"paper_id": "acl_5", "source_type": "table", "locator": {"page": 6, "table_id": "Table4"}}],
        "answer": {"multiple_choice": {"options": OPTIONS, "gold": "C"}},
    }
    citation = _cite(1, TABLE, "500x | 15.7")
    answer = _answer(text="14.70 — 500x | 15.7 [1]", citations=[citation])
    row = to_littraceqa_row("q_001", answer, INDEX, options=question_options(gold))
    report = score_submission([gold], [row])
    assert report["multiple_choice_accuracy"] == 1.0
    assert report["paper_f1_macro"] == 1.0 and report["evidence_f1_macro"] == 1.0
    assert report["candidate_recall"]["all"][1] == 1.0


def test_option_letter_from_lists_folded_text_and_letters() -> None:
    assert option_letter("beta", ["alpha", "beta", "gamma"]) == "B"
    assert option_letter("  14.70 ", OPTIONS) == "C"
    assert option_letter("Gamma Ray", {"A": "x", "B": "gamma  ray"}) == "B"
    assert option_letter("d", OPTIONS) == "D"  # already a letter
    assert option_letter("99", OPTIONS) == "" and option_letter(None, OPTIONS) == "" and option_letter("x", None) == ""


def test_abstention_names_nothing() -> None:
    row = to_littraceqa_row("q_002", _answer(sufficient=False, option=None), INDEX, options=OPTIONS)
    validate_submission_row(row, "row")
    assert row["gold_papers"] == [] and row["evidence"] == []
    assert row["answer"] == {"freeform": {"text": ""}, "multiple_choice": {"gold": ""}}
    assert row["candidate_papers"] == ["acl_5", "acl_9", "acl_1"]


def test_table_answer_and_no_options() -> None:
    rows = [{"Method": "500x", "F1": "15.7"}]
    row = to_littraceqa_row("q_003", _answer(option=None, table=rows), INDEX)
    validate_submission_row(row, "row")
    assert "multiple_choice" not in row["answer"]
    assert row["answer"]["table"] == {"rows": rows}


def test_write_submission_round_trip_and_repeated_id(tmp_path: Path) -> None:
    rows = [to_littraceqa_row(q, _answer(), INDEX, options=OPTIONS) for q in ("q_001", "q_002")]
    path = write_submission(tmp_path / "sub" / "submission.jsonl", rows)
    assert read_submission(path) == rows
    with pytest.raises(SubmissionFormatError, match="appears twice"):
        write_submission(tmp_path / "again.jsonl", [rows[0], rows[0]])
    with pytest.raises(SubmissionFormatError, match="query_id"):
        write_submission(tmp_path / "bad.jsonl", [{"gold_papers": []}])


@pytest.mark.shared_data
def test_every_validation_option_maps_back_to_its_gold_letter() -> None:
    path = shared("littraceqa", "validation.jsonl")
    gold = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    choice_rows = [g for g in gold if "multiple_choice" in g["answer_types"]]
    assert choice_rows
    submission = []
    for row in choice_rows:
        options = question_options(row)
        picked = options[row["answer"]["multiple_choice"]["gold"]]
        answer = _answer(option=picked, citations=[], text=picked)
        submission.append(to_littraceqa_row(row["query_id"], answer, INDEX, options=options))
    report = score_submission(choice_rows, submission)
    assert report["multiple_choice_accuracy"] == 1.0
