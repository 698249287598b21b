"""LitTraceQA scoring: papers, coarse evidence keys, multiple choice, tables, candidate recall, file handling."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from lit3r.evals.littraceqa import (
    SubmissionFormatError,
    TableScore,
    evidence_key,
    evidence_keys,
    read_gold,
    read_submission,
    score_submission,
    score_table,
    set_prf,
)

from conftest import shared

TABLE_EVIDENCE = {
    "paper_id": "A",
    "source_type": "table",
    "evidence_text_or_value": "15.66",
    "locator": {"page": 6, "table_id": "Table 4", "row": "Absolute", "column": "NaturalQ"},
}
TEXT_EVIDENCE = {
    "paper_id": "B",
    "source_type": "text_span",
    "locator": {"page": 3, "section": 5.6, "paragraph_id": 2, "sentence_start": "We", "sentence_end": "GPU"},
}
SCHEMA = [
    {"name": "Method", "type": "string", "is_row_key": True},
    {"name": "FID", "type": "number", "is_row_key": False},
    {"name": "Base Model", "type": "string", "is_row_key": False},
]
GOLD_TABLE = {
    "schema": SCHEMA,
    "rows": [
        {"Method": "TCM", "FID": 2.05, "Base Model": "SANA-1.0"},
        {"Method": "sCT", "FID": 2.06, "Base Model": "Infinity-2B"},
        {"Method": "IMM", "FID": 1.98, "Base Model": "DiT-XL"},
    ],
}


def gold_rows() -> list[dict]:
    return [
        {
            "query_id": "q1",
            "task_family": "multi_paper",
            "answer_types": ["freeform", "multiple_choice"],
            "gold_papers": [{"paper_id": "A", "title": "Paper A"}, {"paper_id": "B", "title": "Paper B"}],
            "evidence": [TABLE_EVIDENCE, TEXT_EVIDENCE],
            "answer": {
                "freeform": {"text": "14.70"},
                "multiple_choice": {"options": {"A": "1.60", "B": "11.12", "C": "14.70"}, "gold": "C"},
            },
        },
        {
            "query_id": "q2",
            "task_family": "hidden_source_single_paper",
            "answer_types": ["table"],
            "gold_papers": [{"paper_id": "C"}],
            "evidence": [{"paper_id": "C", "source_type": "figure", "locator": {"page": 2, "figure_id": "Figure 1"}}],
            "answer": {"table": GOLD_TABLE},
        },
    ]


def submission(query_id: str, **fields: object) -> dict:
    return {"query_id": query_id, "gold_papers": [], "evidence": [], "answer": {}, **fields}


# Papers.


def test_one_of_two_gold_papers_gives_precision_one_recall_half() -> None:
    report = score_submission(gold_rows()[:1], [submission("q1", gold_papers=[{"paper_id": "A"}])])
    assert report["paper_precision_macro"] == 1.0
    assert report["paper_recall_macro"] == 0.5
    assert report["paper_f1_macro"] == pytest.approx(2 / 3)


def test_paper_scores_are_macro_averaged_over_questions() -> None:
    predictions = [submission("q1", gold_papers=["A", "B", "X", "Y"]), submission("q2", gold_papers=["C"])]
    report = score_submission(gold_rows(), predictions)
    # q1: P=2/4, R=1, F1=2/3; q2: 1, 1, 1
    assert report["paper_precision_macro"] == pytest.approx(0.75)
    assert report["paper_recall_macro"] == 1.0
    assert report["paper_f1_macro"] == pytest.approx((2 / 3 + 1) / 2)


def test_set_prf_edge_cases() -> None:
    assert set_prf(set(), set()) == (1.0, 1.0, 1.0)
    assert set_prf({"a"}, set()) == (0.0, 0.0, 0.0)
    assert set_prf(set(), {"a"}) == (0.0, 1.0, 0.0)


# Evidence.


def test_evidence_key_is_coarse_and_normalised() -> None:
    assert evidence_key(TABLE_EVIDENCE) == ("A", "table", "6", "table 4")
    finer_fields_differ = {**TABLE_EVIDENCE, "locator": {"page": "6", "table_id": "table4", "row": "x", "column": "y"}}
    assert evidence_key(finer_fields_differ) == evidence_key(TABLE_EVIDENCE)
    bare_number = {**TABLE_EVIDENCE, "locator": {"page": " 6 ", "table_id": "4"}}
    assert evidence_key(bare_number) == evidence_key(TABLE_EVIDENCE)
    assert evidence_key(TEXT_EVIDENCE) == ("B", "text_span", "3", "")


def test_evidence_key_object_ids_of_each_source_type() -> None:
    def key(source_type: str, **locator: object) -> tuple:
        return evidence_key({"paper_id": "P", "source_type": source_type, "locator": locator})

    assert key("figure", page=2, figure_id="FIGURE  2") == ("P", "figure", "2", "figure 2")
    assert key("figure", page=2, figure_id="Fig. 2") == ("P", "figure", "2", "fig. 2")
    assert key("equation_algorithm", section="3.2", equation_id="Equation 3") == (
        "P",
        "equation_algorithm",
        "3.2",
        "equation 3",
    )
    assert key("equation_algorithm", page=5, algorithm_id="1") == ("P", "equation_algorithm", "5", "equation 1")
    assert key("citation_context", page=12, citation_id=24) == ("P", "citation_context", "12", "citation 24")


def test_evidence_without_location_or_object_is_dropped() -> None:
    row = {
        "evidence": [
            {"paper_id": "P", "source_type": "text_span", "locator": {"paragraph_id": 3}},
            {"paper_id": "", "source_type": "table", "locator": {"page": 1, "table_id": "Table 1"}},
            {"paper_id": "P", "source_type": "table", "locator": {"table_id": "Table 1"}},
        ]
    }
    assert evidence_keys(row) == {("P", "table", "", "table 1")}


def test_evidence_precision_recall_f1() -> None:
    predicted = [
        {**TABLE_EVIDENCE, "locator": {"page": 6, "table_id": "Table 4", "row": "other row"}},
        {"paper_id": "A", "source_type": "table", "locator": {"page": 7, "table_id": "Table 5"}},
    ]
    report = score_submission(gold_rows()[:1], [submission("q1", evidence=predicted)])
    # one of two predicted keys is gold, one of two gold keys found
    assert report["evidence_precision_macro"] == 0.5
    assert report["evidence_recall_macro"] == 0.5
    assert report["evidence_f1_macro"] == 0.5


# Answers.


def test_multiple_choice_accuracy_and_freeform_exact_match() -> None:
    gold = [gold_rows()[0], {**gold_rows()[0], "query_id": "q3"}]
    predictions = [
        submission("q1", answer={"multiple_choice": {"gold": " c "}, "freeform": {"text": ' "14.70" '}}),
        submission("q3", answer={"multiple_choice": {"gold": "B"}, "freeform": {"text": "14.7 points"}}),
    ]
    report = score_submission(gold, predictions)
    assert report["multiple_choice_accuracy"] == 0.5
    assert report["freeform_exact_match"] == 0.5
    assert report["multiple_choice_questions"] == 2


def test_table_with_one_wrong_cell() -> None:
    predicted = {
        "rows": [
            {"Method": "imm", "FID": "1.98", "Base Model": "DiT-XL"},
            {"Method": " TCM ", "FID": 2.05, "Base Model": "sana-1.0"},
            {"Method": "sCT", "FID": 2.07, "Base Model": "Infinity-2B"},
        ]
    }
    score = score_table(GOLD_TABLE, predicted)
    assert (score.row_precision, score.row_recall, score.row_f1) == (1.0, 1.0, 1.0)
    assert (score.cell_correct, score.cell_total) == (5, 6)
    assert score.cell_accuracy == pytest.approx(5 / 6)


def test_table_extra_and_missing_rows() -> None:
    predicted = {
        "rows": [
            {"Method": "TCM", "FID": "2.05%", "Base Model": "SANA-1.0"},
            {"Method": "sCT", "FID": 2.06, "Base Model": "Infinity-2B"},
            {"Method": "ECM", "FID": 1.96, "Base Model": "?"},
        ]
    }
    score = score_table(GOLD_TABLE, predicted)
    # keys {TCM, sCT, ECM} vs {TCM, sCT, IMM}: P=R=2/3; IMM's two cells count as wrong
    assert score.row_f1 == pytest.approx(2 / 3)
    assert (score.cell_correct, score.cell_total) == (4, 6)


def test_table_with_key_columns_only_takes_row_f1_as_cell_accuracy() -> None:
    gold = {
        "schema": [{"name": "Paper Title", "is_row_key": True}],
        "rows": [{"Paper Title": "X"}, {"Paper Title": "Y"}],
    }
    score = score_table(gold, {"rows": [{"Paper Title": "x"}]})
    assert score == TableScore(1.0, 0.5, pytest.approx(2 / 3), 0, 0)
    assert score.cell_accuracy == pytest.approx(2 / 3)


def test_table_without_marked_key_uses_the_first_column() -> None:
    gold = {"schema": [{"name": "Method"}, {"name": "Score", "type": "number"}], "rows": [{"Method": "A", "Score": 1}]}
    score = score_table(gold, {"rows": [{"Method": "a", "Score": 1.0}]})
    # the fallback key column is not marked as a key, so it is also compared as a value cell (as in the task's scorer)
    assert (score.row_f1, score.cell_correct, score.cell_total) == (1.0, 2, 2)


def test_table_macro_and_micro_cell_accuracy() -> None:
    small = {"schema": SCHEMA[:2], "rows": [{"Method": "TCM", "FID": 2.05}]}
    gold = [gold_rows()[1], {**gold_rows()[1], "query_id": "q3", "answer": {"table": small}}]
    predictions = [
        submission("q2", answer={"table": {"rows": GOLD_TABLE["rows"]}}),  # 6 of 6 cells
        submission("q3", answer={"table": {"rows": [{"Method": "TCM", "FID": 9.9}]}}),  # 0 of 1 cell
    ]
    report = score_submission(gold, predictions)
    assert report["table_row_f1_macro"] == 1.0
    assert report["table_cell_accuracy_macro"] == 0.5
    assert report["table_cell_accuracy_micro"] == pytest.approx(6 / 7)
    assert (report["table_cell_correct"], report["table_cell_total"], report["table_questions"]) == (6, 7, 2)


def test_metrics_without_questions_of_their_kind_are_none() -> None:
    report = score_submission(gold_rows()[:1], [submission("q1")])
    assert report["table_row_f1_macro"] is None
    assert report["table_cell_accuracy_micro"] is None
    assert report["multiple_choice_accuracy"] == 0.0


def test_composite_score_averages_papers_evidence_and_answers() -> None:
    gold = gold_rows()[:1]
    perfect_answer = {"multiple_choice": {"gold": "C"}, "freeform": {"text": "14.70"}}
    report = score_submission(gold, [submission("q1", gold_papers=["A"], answer=perfect_answer)])
    # paper F1 2/3, evidence F1 0, answers (1 + 1) / 2
    assert report["composite_score"] == pytest.approx((2 / 3 + 0 + 1) / 3)


# Candidate recall.


def test_candidate_recall_at_k_by_family() -> None:
    predictions = [
        submission("q1", candidate_papers=["X", {"paper_id": "A"}, "A", "Y", "B"]),
        submission("q2", candidate_papers=["C"]),
    ]
    report = score_submission(gold_rows(), predictions, ks=(1, 2, 4))
    # q1 ranking after dropping the repeat: X, A, Y, B
    assert report["candidate_recall"]["multi_paper"] == {1: 0.0, 2: 0.5, 4: 1.0}
    assert report["candidate_recall"]["hidden_source_single_paper"] == {1: 1.0, 2: 1.0, 4: 1.0}
    assert report["candidate_recall"]["all"] == {1: 0.5, 2: 0.75, 4: 1.0}
    assert report["candidate_recall_questions"] == {"all": 2, "multi_paper": 1, "hidden_source_single_paper": 1}


def test_candidate_recall_is_absent_without_candidate_lists_and_zero_for_rows_lacking_one() -> None:
    assert score_submission(gold_rows(), [submission("q1"), submission("q2")])["candidate_recall"] is None
    report = score_submission(gold_rows(), [submission("q1"), submission("q2", candidate_papers=["C"])])
    assert report["candidate_recall"]["all"][50] == 0.5


# Missing, unknown and malformed predictions.


def test_missing_prediction_scores_zero_everywhere() -> None:
    gold = gold_rows()
    gold[0]["evidence"] = []  # even where an empty prediction would match an empty gold
    report = score_submission(gold, [submission("q2", gold_papers=["C"], candidate_papers=["C"])])
    assert report["missing_predictions"] == 1
    assert report["paper_f1_macro"] == 0.5
    assert report["evidence_f1_macro"] == 0.0
    assert report["multiple_choice_accuracy"] == 0.0
    assert report["candidate_recall"]["multi_paper"][1] == 0.0


def test_missing_table_prediction_counts_its_cells_wrong() -> None:
    report = score_submission(gold_rows()[1:], [])
    assert (report["table_row_f1_macro"], report["table_cell_accuracy_micro"]) == (0.0, 0.0)
    assert report["table_cell_total"] == 6


def test_unknown_query_ids_are_ignored_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    predictions = [submission("q1", gold_papers=["A", "B"]), submission("q99", gold_papers=["Z"])]
    with caplog.at_level(logging.WARNING):
        report = score_submission(gold_rows()[:1], predictions)
    assert report["unknown_query_ids"] == 1
    assert report["paper_f1_macro"] == 1.0
    assert "q99" in caplog.text


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ([], "expected a JSON object"),
        ({"gold_papers": []}, "query_id"),
        ({"query_id": "q1", "gold_papers": "A"}, "gold_papers"),
        ({"query_id": "q1", "evidence": ["Table 1"]}, "evidence"),
        ({"query_id": "q1", "evidence": [{"paper_id": "A", "locator": "p. 3"}]}, "locator"),
        ({"query_id": "q1", "answer": "C"}, "answer must be an object"),
        ({"query_id": "q1", "answer": {"table": {"rows": ["TCM"]}}}, "rows"),
        ({"query_id": "q1", "candidate_papers": "A"}, "candidate_papers"),
    ],
)
def test_malformed_submission_rows_are_rejected_with_their_number(row: object, message: str) -> None:
    with pytest.raises(SubmissionFormatError, match=message) as error:
        score_submission(gold_rows(), [submission("q2"), row])
    assert "submission row 2" in str(error.value)


def test_repeated_query_id_is_rejected() -> None:
    with pytest.raises(SubmissionFormatError, match="appears twice"):
        score_submission(gold_rows(), [submission("q1"), submission("q1")])


def test_files_round_trip_and_bad_lines_name_file_and_line(tmp_path: Path) -> None:
    gold_path = tmp_path / "gold.jsonl"
    gold_path.write_text("".join(json.dumps(row) + "\n" for row in gold_rows()), encoding="utf-8")
    sub_path = tmp_path / "sub.jsonl"
    sub_path.write_text(json.dumps(submission("q1", gold_papers=["A", "B"])) + "\n\n{oops\n", encoding="utf-8")
    assert [row["query_id"] for row in read_gold(gold_path)] == ["q1", "q2"]
    with pytest.raises(SubmissionFormatError, match="not valid JSON") as error:
        read_submission(sub_path)
    assert f"{sub_path}:3" in str(error.value)


# The real data.


@pytest.mark.shared_data
def test_validation_gold_scored_against_itself() -> None:
    gold = read_gold(shared("littraceqa", "validation.jsonl"))
    predictions = [{**row, "candidate_papers": [p["paper_id"] for p in row["gold_papers"]]} for row in gold]
    report = score_submission(gold, predictions)
    names = [
        "paper_precision_macro",
        "paper_recall_macro",
        "paper_f1_macro",
        "evidence_precision_macro",
        "evidence_recall_macro",
        "evidence_f1_macro",
        "multiple_choice_accuracy",
        "freeform_exact_match",
        "table_row_f1_macro",
        "table_cell_accuracy_macro",
        "table_cell_accuracy_micro",
        "composite_score",
    ]
    assert {name: report[name] for name in names} == dict.fromkeys(names, 1.0)
    assert report["candidate_recall"]["all"][50] == 1.0
    assert report["candidate_recall_questions"] == {"all": 55, "hidden_source_single_paper": 26, "multi_paper": 29}
    assert (report["questions"], report["missing_predictions"], report["table_questions"]) == (55, 0, 11)


@pytest.mark.shared_data
def test_sample_submission_is_valid_and_scores_zero() -> None:
    gold = read_gold(shared("littraceqa", "validation.jsonl"))
    sample = read_submission(shared("littraceqa", "sample_submission.jsonl"))
    report = score_submission(gold, sample)
    assert report["paper_f1_macro"] == report["evidence_f1_macro"] == report["composite_score"] == 0.0
    assert report["multiple_choice_accuracy"] == report["table_cell_accuracy_micro"] == 0.0
    assert report["candidate_recall"] is None and report["missing_predictions"] == 0
