"""QASPER answer F1 / evidence F1: hand-computed cases, the official evaluator's edge rules, the real test split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lit3r.evals.qasper_score import (
    PredictionFormatError,
    Reference,
    abstention_scores,
    gold_references,
    load_gold,
    normalize_answer,
    paragraph_f1,
    read_predictions,
    references,
    score_predictions,
    token_f1,
    write_predictions,
)

from conftest import shared


def annotation(**answer: object) -> dict:
    base = {"unanswerable": False, "extractive_spans": [], "yes_no": None, "free_form_answer": "", "evidence": []}
    return {"answer": {**base, **answer}, "annotation_id": "a"}


def gold_of(*questions: tuple[str, list[dict]]) -> dict:
    qas = [{"question_id": qid, "question": "?", "answers": answers} for qid, answers in questions]
    return {"paper1": {"title": "T", "abstract": "", "full_text": [], "qas": qas}}


def predict(answer: str, evidence: list[str] | None = None) -> dict:
    return {"predicted_answer": answer, "predicted_evidence": evidence or []}


# Token F1.


def test_normalize_answer_drops_case_punctuation_articles_and_extra_space() -> None:
    assert normalize_answer("The  Cat, a dog!") == "cat dog"
    assert normalize_answer("An apple's core") == "apples core"
    assert normalize_answer("theory of the anthem") == "theory of anthem"


def test_token_f1_by_hand() -> None:
    # prediction tokens [cat, sat], reference [cat, sat, down]: P=1, R=2/3, F1=0.8
    assert token_f1("The cat sat.", "a cat sat down") == pytest.approx(0.8)
    assert token_f1("cat.", "Cat") == 1.0
    assert token_f1("dog", "cat") == 0.0


def test_token_f1_of_empty_answers_is_zero_as_in_squad_v1() -> None:
    assert token_f1("", "") == 0.0
    assert token_f1("the", "a") == 0.0


# Evidence F1.


def test_paragraph_f1_empty_against_empty_is_one() -> None:
    assert paragraph_f1([], []) == 1.0


def test_paragraph_f1_one_side_empty_is_zero() -> None:
    assert paragraph_f1([], ["p1"]) == 0.0
    assert paragraph_f1(["p1"], []) == 0.0


def test_paragraph_f1_by_hand() -> None:
    # one of two predicted paragraphs is gold: P=1/2, R=1, F1=2/3
    assert paragraph_f1(["p1", "p2"], ["p1"]) == pytest.approx(2 / 3)


def test_paragraph_f1_counts_repeats_in_the_lengths_like_the_official_evaluator() -> None:
    assert paragraph_f1(["p1", "p1"], ["p1"]) == pytest.approx(2 / 3)
    assert paragraph_f1(["p1"], ["p1", "p1"]) == pytest.approx(2 / 3)


# References.


def test_references_per_annotator_and_type() -> None:
    qa = {
        "question_id": "q",
        "answers": [
            annotation(unanswerable=True, evidence=["ignored"]),
            annotation(extractive_spans=["BERT", "ELMo"], free_form_answer="not used", evidence=["p1"]),
            annotation(free_form_answer="They fine-tune it", evidence=["p2"]),
            annotation(yes_no=True),
            annotation(yes_no=False),
        ],
    }
    assert references(qa) == [
        Reference("Unanswerable", [], "none"),
        Reference("BERT, ELMo", ["p1"], "extractive"),
        Reference("They fine-tune it", ["p2"], "abstractive"),
        Reference("Yes", [], "boolean"),
        Reference("No", [], "boolean"),
    ]
    assert [r.evidence for r in references(qa)] == [[], ["p1"], ["p2"], [], []]


def test_annotation_without_any_answer_is_an_error() -> None:
    with pytest.raises(ValueError, match="no answer"):
        references({"question_id": "q", "answers": [annotation()]})


def test_text_evidence_only_drops_float_selected_evidence() -> None:
    qa = {"question_id": "q", "answers": [annotation(yes_no=True, evidence=["FLOAT SELECTED: Table 1", "p1"])]}
    assert references(qa, text_evidence_only=True)[0].evidence == ["p1"]
    gold = gold_of(("q", qa["answers"]))
    predictions = {"q": predict("yes", ["p1"])}
    assert score_predictions(gold, predictions)["evidence_f1"] == pytest.approx(2 / 3)
    assert score_predictions(gold, predictions, text_evidence_only=True)["evidence_f1"] == 1.0


# Scoring a prediction set.


@pytest.fixture
def three_questions() -> dict:
    return gold_of(
        (
            "q1",
            [
                annotation(extractive_spans=["BERT", "ELMo"], evidence=["p1"]),
                annotation(free_form_answer="they use BERT", evidence=["p2"]),
            ],
        ),
        ("q2", [annotation(yes_no=False, evidence=["p3"]), annotation(unanswerable=True)]),
        ("q3", [annotation(free_form_answer="a lot")]),
    )


def test_score_predictions_by_hand(three_questions: dict) -> None:
    predictions = {
        # vs "BERT, ELMo": P=1, R=1/2 -> 2/3 (extractive); vs "they use BERT": 1/2. Evidence: best annotator p2 -> 1.0
        "q1": predict("BERT", ["p2"]),
        # vs "No": 0; vs "Unanswerable": 1.0 (type none). Evidence: empty vs the unanswerable annotator's empty -> 1.0
        "q2": predict("Unanswerable"),
        # q3 has no prediction; this one is not a gold question and is ignored
        "elsewhere": predict("anything", ["p9"]),
    }
    report = score_predictions(three_questions, predictions)
    assert report["answer_f1"] == pytest.approx((2 / 3 + 1.0 + 0.0) / 3)
    assert report["evidence_f1"] == pytest.approx((1.0 + 1.0 + 0.0) / 3)
    assert report["answer_f1_by_type"] == pytest.approx(
        {"extractive": 2 / 3, "abstractive": 0.0, "boolean": 0.0, "none": 1.0}
    )
    assert report["questions_by_type"] == {"extractive": 1, "abstractive": 0, "boolean": 0, "none": 1}
    assert (report["questions"], report["missing_predictions"], report["extra_predictions"]) == (3, 1, 1)


def test_missing_prediction_scores_zero_on_both(three_questions: dict) -> None:
    report = score_predictions(three_questions, {})
    assert (report["answer_f1"], report["evidence_f1"], report["missing_predictions"]) == (0.0, 0.0, 3)


def test_type_is_the_best_matching_annotators_and_the_first_on_ties() -> None:
    yes_first = gold_of(("q", [annotation(yes_no=True), annotation(free_form_answer="yes")]))
    free_first = gold_of(("q", [annotation(free_form_answer="yes"), annotation(yes_no=True)]))
    by_type = score_predictions(yes_first, {"q": predict("Yes")})["questions_by_type"]
    assert by_type["boolean"] == 1 and by_type["abstractive"] == 0
    by_type = score_predictions(free_first, {"q": predict("Yes")})["questions_by_type"]
    assert by_type["abstractive"] == 1 and by_type["boolean"] == 0


def test_type_follows_the_maximum_not_the_first_annotator() -> None:
    gold = gold_of(("q", [annotation(yes_no=True), annotation(extractive_spans=["the BLEU score"])]))
    report = score_predictions(gold, {"q": predict("BLEU score")})
    assert report["answer_f1"] == 1.0
    assert report["questions_by_type"]["extractive"] == 1


def test_abstention_scores_read_unanswerable_by_some_and_by_every_annotator() -> None:
    none, spans = annotation(unanswerable=True), annotation(extractive_spans=["BM25"])
    gold = gold_of(("q1", [none, none]), ("q2", [none, spans]), ("q3", [spans]), ("q4", [spans]))
    predictions = {q: predict("Unanswerable") for q in ("q2", "q3")} | {"q1": predict("BM25")}  # q4 missing
    scores = abstention_scores(gold, predictions)
    # some annotator: q1, q2 unanswerable; abstained q2, q3: P 1/2, R 1/2
    assert scores["some_annotator"] == {"questions": 2, "abstained": 2, "precision": 0.5, "recall": 0.5, "f1": 0.5}
    # every annotator: q1 only, never abstained
    assert scores["every_annotator"] == {"questions": 1, "abstained": 2, "precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert abstention_scores(gold, {"q1": predict(" unanswerable. ")})["every_annotator"]["f1"] == 1.0  # normalised


def test_malformed_prediction_in_memory_is_rejected(three_questions: dict) -> None:
    with pytest.raises(PredictionFormatError, match="q1"):
        score_predictions(three_questions, {"q1": {"predicted_answer": "x", "predicted_evidence": "p1"}})


# Prediction files.


def test_write_then_read_predictions_round_trip(tmp_path: Path) -> None:
    rows = [
        {"question_id": "q1", "predicted_answer": "BERT", "predicted_evidence": ["p1"], "extra": "dropped"},
        {"question_id": "q2", "predicted_answer": "Unanswerable", "predicted_evidence": []},
    ]
    path = write_predictions(tmp_path / "out" / "preds.jsonl", rows)
    assert read_predictions(path) == {
        "q1": {"predicted_answer": "BERT", "predicted_evidence": ["p1"]},
        "q2": {"predicted_answer": "Unanswerable", "predicted_evidence": []},
    }
    assert json.loads(path.read_text().splitlines()[0]) == {
        "question_id": "q1",
        "predicted_answer": "BERT",
        "predicted_evidence": ["p1"],
    }


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"predicted_answer": "x", "predicted_evidence": []}', "question_id"),
        ('{"question_id": "q2", "predicted_answer": 3, "predicted_evidence": []}', "predicted_answer"),
        ('{"question_id": "q2", "predicted_answer": "x", "predicted_evidence": "p"}', "predicted_evidence"),
        ('{"question_id": "q1", "predicted_answer": "x", "predicted_evidence": []}', "appears twice"),
    ],
)
def test_read_predictions_names_file_and_line_of_a_bad_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "preds.jsonl"
    good = '{"question_id": "q1", "predicted_answer": "x", "predicted_evidence": []}'
    path.write_text(f"{good}\n\n{line}\n", encoding="utf-8")
    with pytest.raises(PredictionFormatError, match=message) as error:
        read_predictions(path)
    assert f"{path}:3" in str(error.value)


def test_write_predictions_rejects_a_bad_row(tmp_path: Path) -> None:
    with pytest.raises(PredictionFormatError, match="prediction row 1"):
        write_predictions(tmp_path / "p.jsonl", [{"question_id": "q", "predicted_answer": None}])


# The real data.


def oracle(gold: dict, text_evidence_only: bool) -> dict:
    """The first annotator's answer and (distinct) evidence paragraphs, as a prediction."""
    refs = gold_references(gold, text_evidence_only)
    return {qid: predict(r[0].answer, list(dict.fromkeys(r[0].evidence))) for qid, r in refs.items()}


@pytest.mark.shared_data
def test_qasper_test_split_scored_against_itself() -> None:
    gold = load_gold(shared("qasper", "qasper-test-v0.3.corpus-and-dev-questions.json.gz"))
    text_only = score_predictions(gold, oracle(gold, True), text_evidence_only=True)
    full = score_predictions(gold, oracle(gold, False))
    for report in (text_only, full):
        assert report["questions"] == 940 and report["missing_predictions"] == 0
        assert report["answer_f1"] == 1.0
        assert report["answer_f1_by_type"] == {"extractive": 1.0, "abstractive": 1.0, "boolean": 1.0, "none": 1.0}
        assert sum(report["questions_by_type"].values()) == 940
    assert text_only["evidence_f1"] == 1.0
    # One annotation (question 3a40559e...) lists a table paragraph twice; the official rule divides by the list
    # length, so its distinct-paragraph oracle reaches 2/2 precision, 2/3 recall (F1 0.8) and nothing more.
    assert full["evidence_f1"] == pytest.approx(1 - 0.2 / 940)


@pytest.mark.shared_data
def test_hugging_face_layout_sample_scored_against_itself() -> None:
    gold = load_gold(shared("qasper", "qasper-train-sample-10-papers.hf-layout.json"))
    report = score_predictions(gold, oracle(gold, False))
    assert report["questions"] == 51
    assert (report["answer_f1"], report["evidence_f1"]) == (1.0, 1.0)
