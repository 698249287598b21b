"""QASPER answer F1 and evidence F1, as the dataset's official evaluator defines them.

Written from the definition in allenai/qasper-led-baseline ``scripts/evaluator.py`` (the script behind the numbers in
Dasigi et al., 2021), not copied from it. The points where it is easy to go wrong, all matched here:

* References are per annotator. Unanswerable: answer "Unanswerable", no evidence, type ``none``. Otherwise the
  extractive spans joined by ", " (``extractive``), else the free-form answer (``abstractive``), else "Yes"/"No"
  (``boolean``); an annotation with none of these is an error.
* Answer F1 is SQuAD v1.1 token F1 (no special case for empty strings: two empty answers score 0). A question's answer
  F1 is the maximum over its annotators, and it is filed under the type of the annotator that reached that maximum
  (the first such annotator on ties).
* Evidence F1 counts the distinct paragraphs shared by the prediction and an annotator's list, and divides by the
  lengths of the two lists as given (so a repeated paragraph lowers precision or recall), 1.0 when both are empty;
  the maximum over annotators. ``text_evidence_only`` drops annotator evidence containing "FLOAT SELECTED".
* A gold question without a prediction scores 0 on both and is counted in ``missing_predictions``; it is left out of
  the by-type averages. Predictions for questions not in the gold file are ignored (counted in
  ``extra_predictions``). A type with no questions averages to 0.0, as in the official script.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lit3r.corpus.parsers.qasper import read_qasper_records
from lit3r.evals.jsonl import iter_jsonl

ANSWER_TYPES = ("extractive", "abstractive", "boolean", "none")
FLOAT_MARKER = "FLOAT SELECTED"
UNANSWERABLE = "Unanswerable"

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)


@dataclass(frozen=True)
class Reference:
    """One annotator's answer to a question, as the evaluator compares against it."""

    answer: str
    evidence: list[str] = field(default_factory=list, hash=False)
    type: str = "none"


class PredictionFormatError(ValueError):
    """A predictions file or row that does not follow ``{"question_id", "predicted_answer", "predicted_evidence"}``."""


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower case, drop punctuation, drop the articles a/an/the, fold white space."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(prediction: str, reference: str) -> float:
    """SQuAD token F1 between two answers after :func:`normalize_answer` (0.0 when nothing is shared)."""
    predicted = normalize_answer(prediction).split()
    gold = normalize_answer(reference).split()
    shared = sum((Counter(predicted) & Counter(gold)).values())
    if shared == 0:
        return 0.0
    return _f1(shared / len(predicted), shared / len(gold))


def paragraph_f1(predicted: Sequence[str], reference: Sequence[str]) -> float:
    """F1 of predicted evidence paragraphs against one annotator's: 1.0 when both are empty.

    Shared paragraphs are counted once; precision and recall divide by the list lengths as given, like the official
    evaluator (a repeated paragraph therefore costs precision or recall).
    """
    if not predicted and not reference:
        return 1.0
    shared = len(set(predicted) & set(reference))
    if shared == 0:
        return 0.0
    return _f1(shared / len(predicted), shared / len(reference))


def references(question_record: Mapping[str, Any], text_evidence_only: bool = False) -> list[Reference]:
    """Every annotator's reference for one question of a QASPER record (original layout), in annotator order."""
    out = []
    for annotation in question_record.get("answers") or []:
        answer = annotation.get("answer", annotation)
        if answer.get("unanswerable"):
            out.append(Reference(UNANSWERABLE, [], "none"))
            continue
        text, kind = _answer_and_type(answer, question_record.get("question_id"), annotation.get("annotation_id"))
        evidence = list(answer.get("evidence") or [])
        if text_evidence_only:
            evidence = [paragraph for paragraph in evidence if FLOAT_MARKER not in paragraph]
        out.append(Reference(text, evidence, kind))
    return out


def gold_references(
    gold: Mapping[str, Mapping[str, Any]], text_evidence_only: bool = False
) -> dict[str, list[Reference]]:
    """``{question_id: [Reference, ...]}`` for every question of ``{paper_id: record}``."""
    return {
        qa["question_id"]: references(qa, text_evidence_only)
        for record in gold.values()
        for qa in record.get("qas") or []
    }


def score_predictions(
    gold: Mapping[str, Mapping[str, Any]],
    predictions: Mapping[str, Mapping[str, Any]],
    text_evidence_only: bool = False,
) -> dict[str, Any]:
    """Answer F1 (overall and by type) and evidence F1 of ``predictions`` over the questions of ``gold``.

    Args:
        gold: ``{paper_id: record}`` in QASPER's original layout (only questions in it are scored).
        predictions: ``{question_id: {"predicted_answer": str, "predicted_evidence": [paragraph, ...]}}``.
        text_evidence_only: drop annotator evidence that is a table or figure ("FLOAT SELECTED").
    """
    answer_f1s: list[float] = []
    evidence_f1s: list[float] = []
    by_type: dict[str, list[float]] = {kind: [] for kind in ANSWER_TYPES}
    missing = 0
    gold_refs = gold_references(gold, text_evidence_only)
    for question_id, refs in gold_refs.items():
        prediction = predictions.get(question_id)
        if prediction is None:
            missing += 1
            answer_f1s.append(0.0)
            evidence_f1s.append(0.0)
            continue
        answer, evidence = _prediction_fields(prediction, question_id)
        best_f1, best_type = best_answer_match(answer, refs)
        answer_f1s.append(best_f1)
        by_type[best_type].append(best_f1)
        evidence_f1s.append(max((paragraph_f1(evidence, ref.evidence) for ref in refs), default=0.0))
    return {
        "answer_f1": _mean(answer_f1s),
        "answer_f1_by_type": {kind: _mean(values) for kind, values in by_type.items()},
        "questions_by_type": {kind: len(values) for kind, values in by_type.items()},
        "evidence_f1": _mean(evidence_f1s),
        "questions": len(gold_refs),
        "missing_predictions": missing,
        "extra_predictions": len(set(predictions) - set(gold_refs)),
    }


def abstention_scores(
    gold: Mapping[str, Mapping[str, Any]], predictions: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Abstention on the unanswerable questions of ``gold``: a prediction abstains when its answer is
    "Unanswerable" (as the official scorer reads it, normalised). Two readings of "unanswerable": ``some_annotator``
    (an annotator says so: an abstention then scores Answer F1 1 against that annotator, as the official scorer
    counts it) and ``every_annotator`` (all do, the stricter). Each: the questions unanswerable in that reading,
    the abstentions, and their precision, recall and F1."""
    unanswerable = normalize_answer(UNANSWERABLE)
    kinds = {qid: [r.type == "none" for r in refs] for qid, refs in gold_references(gold).items() if refs}
    said = {qid: (predictions.get(qid) or {}).get("predicted_answer") for qid in kinds}
    abstained = {q for q, text in said.items() if isinstance(text, str) and normalize_answer(text) == unanswerable}
    out = {}
    for reading, test in (("some_annotator", any), ("every_annotator", all)):
        positive = {qid for qid, flags in kinds.items() if test(flags)}
        hits = len(abstained & positive)
        precision = hits / len(abstained) if abstained else 0.0
        recall = hits / len(positive) if positive else 0.0
        out[reading] = {
            "questions": len(positive),
            "abstained": len(abstained),
            "precision": round(precision, 4),
            "recall": round(recall, 4),
            "f1": round(_f1(precision, recall), 4) if hits else 0.0,
        }
    return out


def best_answer_match(answer: str, refs: Sequence[Reference]) -> tuple[float, str]:
    """The maximum token F1 over ``refs`` and the type of the first reference reaching it."""
    best_f1, best_type = -1.0, "none"
    for ref in refs:
        f1 = token_f1(answer, ref.answer)
        if f1 > best_f1:
            best_f1, best_type = f1, ref.type
    if best_f1 < 0:
        raise ValueError("a gold question has no annotations to score against")
    return best_f1, best_type


def load_gold(path: Path) -> dict[str, dict[str, Any]]:
    """A QASPER gold file as ``{paper_id: record}`` (original or Hugging Face layout, .json or .json.gz)."""
    return read_qasper_records(Path(path))


def read_predictions(path: Path) -> dict[str, dict[str, Any]]:
    """A JSON-lines predictions file as ``{question_id: {"predicted_answer", "predicted_evidence"}}``.

    Blank lines are skipped. A line that is not a JSON object with a non-empty ``question_id``, a string
    ``predicted_answer`` and a list of strings ``predicted_evidence``, or a repeated ``question_id``, raises
    :class:`PredictionFormatError` naming the file and line (the official script silently keeps the last repeat).
    """
    path = Path(path)
    out: dict[str, dict[str, Any]] = {}
    for row, where in iter_jsonl(path, PredictionFormatError):
        question_id = _validated_row(row, where)
        if question_id in out:
            raise PredictionFormatError(f"{where}: question_id {question_id!r} appears twice")
        out[question_id] = {
            "predicted_answer": row["predicted_answer"],
            "predicted_evidence": row["predicted_evidence"],
        }
    return out


def write_predictions(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    """Write prediction rows ``{"question_id", "predicted_answer", "predicted_evidence"}`` as JSON lines."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for number, row in enumerate(rows, start=1):
        question_id = _validated_row(row, f"prediction row {number}")
        record = {
            "question_id": question_id,
            "predicted_answer": row["predicted_answer"],
            "predicted_evidence": list(row["predicted_evidence"]),
        }
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _answer_and_type(answer: Mapping[str, Any], question_id: Any, annotation_id: Any) -> tuple[str, str]:
    if answer.get("extractive_spans"):
        return ", ".join(answer["extractive_spans"]), "extractive"
    if answer.get("free_form_answer"):
        return answer["free_form_answer"], "abstractive"
    if answer.get("yes_no") is not None:
        return ("Yes" if answer["yes_no"] else "No"), "boolean"
    raise ValueError(f"question {question_id}: annotation {annotation_id} has no answer")


def _prediction_fields(prediction: Mapping[str, Any], question_id: str) -> tuple[str, list[str]]:
    answer = prediction.get("predicted_answer")
    evidence = prediction.get("predicted_evidence")
    if not isinstance(answer, str) or not _is_string_list(evidence):
        raise PredictionFormatError(
            f"prediction for {question_id}: needs a string predicted_answer and a list of strings predicted_evidence"
        )
    return answer, list(evidence)


def _validated_row(row: Any, where: str) -> str:
    if not isinstance(row, Mapping):
        raise PredictionFormatError(f"{where}: expected a JSON object, found {type(row).__name__}")
    question_id = row.get("question_id")
    if not isinstance(question_id, str) or not question_id:
        raise PredictionFormatError(f"{where}: missing or empty question_id")
    if not isinstance(row.get("predicted_answer"), str):
        raise PredictionFormatError(f"{where}: predicted_answer must be a string")
    if not _is_string_list(row.get("predicted_evidence")):
        raise PredictionFormatError(f"{where}: predicted_evidence must be a list of strings")
    return question_id


def _is_string_list(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(item, str) for item in value)


def _f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
