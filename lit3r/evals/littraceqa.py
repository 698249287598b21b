"""LitTraceQA scoring: supporting papers, evidence locators, answers and candidate recall@k.

The metric names are the shared task's leaderboard names, which the Lit3R paper reports in its Table 3. The rules
follow the task's scoring program as its public copies show it (written from that definition, not copied):

* Papers: set precision / recall / F1 of the submitted ``gold_papers`` ids against the gold ones, averaged over
  questions (macro). Empty against empty is 1.0; predicting nothing against a non-empty gold is 0.0; predicting
  something against an empty gold is P=0, R=1, F1=0.
* Evidence: the same set P/R/F1 over *coarse keys* ``(paper_id, source_type, location, object_id)``:
  ``location`` is the locator's ``page`` (or its ``section`` when there is no page) as a trimmed string;
  ``object_id`` is the table / figure / equation (or algorithm) / citation id, lower-cased with white space folded
  and surrounding quotes dropped, and "Table4", "table 4" and a bare "4" all read "table 4" (likewise "figure N",
  "equation N", "citation N"); text spans have no object id. Finer locator fields (row, column, region, paragraph,
  sentence bounds) do not count. An item without a paper id, a source type, or both a location and an object id is
  dropped.
* Multiple choice: the option letter (``answer.multiple_choice.gold``; ``answer`` or ``predicted_answer_id`` are
  accepted too), trimmed and upper-cased, equals gold's. Free form: exact match after the same text normalisation.
* Tables: rows are aligned by their row key, the values of the gold schema's ``is_row_key`` columns (the first column
  when none is marked; it then also counts as a value column) after text normalisation; a key repeated within a
  table keeps its last row. Row P/R/F1 is set F1 over the keys. Cell accuracy counts, over every gold row and every
  column not marked as key, the cells of the matched predicted row equal to gold's (a gold row without a match counts
  all its cells wrong): ``number`` columns compare as floats ("%" dropped, tolerance 1e-6), ``boolean`` columns by
  truthiness, everything else as normalised text. A table with no value columns takes its row F1 as cell accuracy.
  Macro averages over table questions; micro pools the cells. Both numbers follow the scoring program; no fuzzy or
  bipartite row alignment is attempted, so a misspelt key costs the whole row, as it does on the leaderboard.
* A gold row may name ``evaluation_targets`` (any of paper, evidence, answer; all three by default); a question
  only enters the averages of its targets.
* ``composite_score`` is the leaderboard's single number: the mean of paper F1, evidence F1 and the answer score
  (the mean of whichever of multiple-choice accuracy, free-form exact match, table row F1 and table cell accuracy
  exist).

Where this differs from the scoring program, on purpose: a gold question with no prediction scores 0 on everything
(the program refuses such a submission) and is counted in ``missing_predictions``; a prediction for an unknown
query id is ignored and counted in ``unknown_query_ids`` (the program refuses it too); a metric with no questions to
average over is ``None`` (the program reports 0.0 for the two table macros).

Candidate recall@k (not a leaderboard metric; Table 1 of the paper): the sample submission has no field for the
candidate ranking, so a submission row may carry an optional ``candidate_papers`` list (ids, or objects with
``paper_id``, best first). recall@k is the share of the gold papers among the first k distinct candidates, averaged
over questions, for all questions and per gold ``task_family``. It is reported only when some row carries the
field; a row without it then counts as an empty ranking.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lit3r.evals.jsonl import iter_jsonl
from lit3r.evals.metrics import KS

log = logging.getLogger(__name__)

ALL_FAMILIES = "all"
TARGETS = ("paper", "evidence", "answer")
_QUOTES = "\"'“”‘’`"
_SPACE = re.compile(r"\s+")
_OBJECT_PREFIX = {
    "table": "table",
    "figure": "figure",
    "equation_algorithm": "equation",
    "citation_context": "citation",
}
_OBJECT_FIELDS = {
    "table": ("table_id",),
    "figure": ("figure_id",),
    "equation_algorithm": ("equation_id", "algorithm_id"),
    "citation_context": ("citation_id",),
}

EvidenceKey = tuple[str, str, str, str]


class SubmissionFormatError(ValueError):
    """A gold or submission file, or row, that does not follow the LitTraceQA format."""


# Reading and validating.


def read_gold(path: Path) -> list[dict[str, Any]]:
    """The gold rows of a LitTraceQA JSON-lines file (``validation.jsonl``), validated line by line."""
    return _read_jsonl(Path(path), validate_gold_row)


def read_submission(path: Path) -> list[dict[str, Any]]:
    """The rows of a submission in ``sample_submission.jsonl``'s format, validated line by line."""
    return _read_jsonl(Path(path), validate_submission_row)


def validate_gold_row(row: Any, where: str) -> str:
    """The row's query id; raises :class:`SubmissionFormatError` naming ``where`` when the gold row is malformed."""
    query_id = validate_submission_row(row, where)
    if not isinstance(row.get("answer_types", []), list):
        raise SubmissionFormatError(f"{where}: answer_types must be a list")
    table = (row.get("answer") or {}).get("table")
    if table is not None and not isinstance(table.get("schema", []), list):
        raise SubmissionFormatError(f"{where}: answer.table.schema must be a list")
    return query_id


def validate_submission_row(row: Any, where: str) -> str:
    """The row's query id; raises :class:`SubmissionFormatError` naming ``where`` when the row is malformed."""
    if not isinstance(row, Mapping):
        raise SubmissionFormatError(f"{where}: expected a JSON object, found {type(row).__name__}")
    query_id = row.get("query_id")
    if not isinstance(query_id, str) or not query_id.strip():
        raise SubmissionFormatError(f"{where}: missing or empty query_id")
    for name in ("gold_papers", "candidate_papers"):
        if not _list_of(row.get(name, []), (str, Mapping)):
            raise SubmissionFormatError(f"{where}: {name} must be a list of paper ids or objects")
    if not _list_of(row.get("evidence", []), (Mapping,)):
        raise SubmissionFormatError(f"{where}: evidence must be a list of objects")
    if any(not isinstance(item.get("locator") or {}, Mapping) for item in row.get("evidence", [])):
        raise SubmissionFormatError(f"{where}: an evidence locator must be an object")
    _validate_answer(row.get("answer", {}), where)
    return query_id.strip()


def _validate_answer(answer: Any, where: str) -> None:
    if not isinstance(answer, Mapping):
        raise SubmissionFormatError(f"{where}: answer must be an object")
    for kind in ("freeform", "multiple_choice", "table"):
        if not isinstance(answer.get(kind, {}), Mapping):
            raise SubmissionFormatError(f"{where}: answer.{kind} must be an object")
    if not _list_of(answer.get("table", {}).get("rows", []), (Mapping,)):
        raise SubmissionFormatError(f"{where}: answer.table.rows must be a list of objects")


def _read_jsonl(path: Path, validate: Callable[[Any, str], str]) -> list[dict[str, Any]]:
    rows = []
    for row, where in iter_jsonl(path, SubmissionFormatError):
        validate(row, where)
        rows.append(row)
    return rows


def _list_of(value: Any, kinds: tuple[type, ...]) -> bool:
    return isinstance(value, list) and all(isinstance(item, kinds) for item in value)


# Normalisation.


def normalize_text(value: Any) -> str:
    """Lower case, trimmed, surrounding quotes dropped, white space folded; None (and any falsy value) reads ""."""
    text = str(value).strip().lower() if value else ""
    return _SPACE.sub(" ", text.strip(_QUOTES))


def normalize_id(value: Any) -> str:
    """An id as a trimmed string; None (and any falsy value) reads ""."""
    return str(value).strip() if value else ""


def normalize_object_id(value: Any, prefix: str) -> str:
    """A visible object id: "Table4", "table 4" and "4" all read "table 4"; anything else is normalised text."""
    text = normalize_text(value)
    if match := re.fullmatch(rf"{prefix}\s*(\d+[a-z]?)", text):
        return f"{prefix} {match.group(1)}"
    if re.fullmatch(r"\d+[a-z]?", text):
        return f"{prefix} {text}"
    return text


# Papers and evidence.


def paper_ids(row: Mapping[str, Any]) -> set[str]:
    """The row's paper ids (``gold_papers``, given as ids or as objects with ``paper_id``)."""
    papers = row.get("gold_papers") or row.get("papers") or []
    return {pid for pid in map(_paper_id, papers) if pid} if isinstance(papers, list) else set()


def evidence_key(item: Mapping[str, Any]) -> EvidenceKey:
    """The coarse key ``(paper_id, source_type, page or section, object id)`` of one evidence item."""
    source_type = normalize_id(item.get("source_type"))
    locator = item.get("locator") if isinstance(item.get("locator"), Mapping) else {}
    location = normalize_id(locator.get("page") or locator.get("section"))
    object_id = ""
    if source_type in _OBJECT_FIELDS:
        raw = next((locator.get(name) for name in _OBJECT_FIELDS[source_type] if locator.get(name)), None)
        object_id = normalize_object_id(raw, _OBJECT_PREFIX[source_type])
    return normalize_id(item.get("paper_id")), source_type, location, object_id


def evidence_keys(row: Mapping[str, Any]) -> set[EvidenceKey]:
    """The coarse keys of a row's evidence, leaving out items that say neither where nor which object."""
    keys = {evidence_key(item) for item in row.get("evidence") or [] if isinstance(item, Mapping)}
    return {key for key in keys if key[0] and key[1] and (key[2] or key[3])}


def set_prf(gold: set[Any], predicted: set[Any]) -> tuple[float, float, float]:
    """Precision, recall and F1 of a predicted set; (1, 1, 1) when both are empty."""
    if not gold and not predicted:
        return 1.0, 1.0, 1.0
    if not predicted:
        return 0.0, 0.0, 0.0
    shared = len(gold & predicted)
    precision = shared / len(predicted)
    recall = shared / len(gold) if gold else 1.0
    return precision, recall, _f1(precision, recall)


# Answers.


def multiple_choice_answer(row: Mapping[str, Any]) -> str:
    """The chosen option letter, trimmed and upper-cased ("" when there is none)."""
    choice = (row.get("answer") or {}).get("multiple_choice")
    if isinstance(choice, Mapping):
        value = choice.get("gold") or choice.get("answer") or choice.get("predicted_answer_id")
    else:
        value = row.get("predicted_answer_id") or row.get("gold") or row.get("gold_answer")
    return normalize_id(value).upper()


def freeform_answer(row: Mapping[str, Any]) -> str:
    """The free-form answer text, normalised."""
    freeform = (row.get("answer") or {}).get("freeform")
    if isinstance(freeform, Mapping):
        return normalize_text(freeform.get("text"))
    return normalize_text(row.get("answer_text") or row.get("freeform"))


@dataclass(frozen=True)
class TableScore:
    """How one predicted table matches its gold table."""

    row_precision: float
    row_recall: float
    row_f1: float
    cell_correct: int
    cell_total: int

    @property
    def cell_accuracy(self) -> float:
        """Share of gold value cells reproduced; the row F1 when the table has no value columns."""
        return self.cell_correct / self.cell_total if self.cell_total else self.row_f1


def score_table(gold_table: Mapping[str, Any], predicted_table: Mapping[str, Any]) -> TableScore:
    """Row P/R/F1 and cell counts of a predicted table against the gold one, rows aligned by the schema's row key."""
    schema = [column for column in gold_table.get("schema") or [] if isinstance(column, Mapping)]
    keys = [str(column.get("name", "")) for column in schema if column.get("is_row_key")]
    if not keys and schema:
        keys = [str(schema[0].get("name", ""))]
    values = [(str(c.get("name", "")), str(c.get("type", "string"))) for c in schema if not c.get("is_row_key")]
    values = [(name, kind) for name, kind in values if name]
    gold_rows = _rows_by_key(gold_table.get("rows"), keys)
    predicted_rows = _rows_by_key(predicted_table.get("rows"), keys)
    precision, recall, f1 = set_prf(set(gold_rows), set(predicted_rows))
    correct = 0
    for key, gold_row in gold_rows.items():
        predicted_row = predicted_rows.get(key)
        if predicted_row is not None:
            correct += sum(cell_equal(gold_row.get(name), predicted_row.get(name), kind) for name, kind in values)
    return TableScore(precision, recall, f1, correct, len(gold_rows) * len(values))


def row_key(row: Mapping[str, Any], key_columns: Sequence[str]) -> tuple[str, ...]:
    """A row's key: its normalised values in the key columns."""
    return tuple(normalize_text(row.get(column)) for column in key_columns)


def cell_equal(gold: Any, predicted: Any, column_type: str) -> bool:
    """Whether a predicted cell equals gold's: floats within 1e-6 for numbers, truthiness for booleans, else text."""
    if gold is None or predicted is None:
        return gold is None and predicted is None
    if column_type == "number":
        gold_number, predicted_number = _number(gold), _number(predicted)
        if gold_number is None or predicted_number is None:
            return False
        return math.isclose(gold_number, predicted_number, rel_tol=1e-6, abs_tol=1e-6)
    if column_type == "boolean":
        return bool(gold) == bool(predicted)
    return normalize_text(gold) == normalize_text(predicted)


def _rows_by_key(rows: Any, key_columns: Sequence[str]) -> dict[tuple[str, ...], Mapping[str, Any]]:
    if not key_columns or not isinstance(rows, list):
        return {}
    return {row_key(row, key_columns): row for row in rows if isinstance(row, Mapping)}


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(normalize_id(value).replace("%", ""))
    except ValueError:
        return None


# Candidate recall.


def candidate_papers(row: Mapping[str, Any]) -> list[str] | None:
    """The row's ranked candidate paper ids, repeats dropped; None when the row has no ``candidate_papers``."""
    if not isinstance(row.get("candidate_papers"), list):
        return None
    ranked = (_paper_id(item) for item in row["candidate_papers"])
    return list(dict.fromkeys(pid for pid in ranked if pid))


def recall_at_k(gold: set[str], ranked: Sequence[str], k: int) -> float:
    """Share of ``gold`` among the first ``k`` of ``ranked``; 1.0 for an empty gold."""
    return len(gold & set(ranked[:k])) / len(gold) if gold else 1.0


# The whole submission.


@dataclass
class _Tally:
    """Per-question scores collected while walking the gold questions."""

    paper: list[tuple[float, float, float]] = field(default_factory=list)
    evidence: list[tuple[float, float, float]] = field(default_factory=list)
    multiple_choice: list[bool] = field(default_factory=list)
    freeform: list[bool] = field(default_factory=list)
    tables: list[TableScore] = field(default_factory=list)
    recall: dict[str, dict[int, list[float]]] = field(default_factory=dict)


def score_submission(
    gold_rows: Iterable[Mapping[str, Any]],
    pred_rows: Iterable[Mapping[str, Any]],
    ks: Sequence[int] = KS,
) -> dict[str, Any]:
    """Every LitTraceQA metric of a submission over the gold questions (see the module docstring for the rules).

    Args:
        gold_rows: gold rows (``validation.jsonl``).
        pred_rows: submission rows (``sample_submission.jsonl``'s format, optionally with ``candidate_papers``).
        ks: the cut-offs of candidate recall.
    """
    gold = _index_rows(gold_rows, "gold row", validate_gold_row)
    predicted = _index_rows(pred_rows, "submission row", validate_submission_row)
    unknown = sorted(set(predicted) - set(gold))
    if unknown:
        log.warning("ignoring %d predictions for unknown query ids, e.g. %s", len(unknown), unknown[:3])
    with_candidates = any(candidate_papers(predicted[qid]) is not None for qid in predicted if qid in gold)
    tally = _Tally()
    for query_id, gold_row in gold.items():
        _score_question(gold_row, predicted.get(query_id), tally, ks if with_candidates else ())
    report = _summary(tally)
    report.update(
        questions=len(gold),
        missing_predictions=len(set(gold) - set(predicted)),
        unknown_query_ids=len(unknown),
        candidate_recall=_recall_summary(tally.recall) if with_candidates else None,
        candidate_recall_questions=_recall_counts(tally.recall) if with_candidates else None,
    )
    return report


def _index_rows(
    rows: Iterable[Mapping[str, Any]], label: str, validate: Callable[[Any, str], str]
) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    for number, row in enumerate(rows, start=1):
        query_id = validate(row, f"{label} {number}")
        if query_id in out:
            raise SubmissionFormatError(f"{label} {number}: query_id {query_id!r} appears twice")
        out[query_id] = row
    return out


def _score_question(gold: Mapping[str, Any], pred: Mapping[str, Any] | None, tally: _Tally, ks: Sequence[int]) -> None:
    """Add one gold question's scores to ``tally``; a missing prediction scores 0 everywhere."""
    missing = pred is None
    pred = pred or {}
    targets = set(gold.get("evaluation_targets") or TARGETS)
    zero = (0.0, 0.0, 0.0)
    if "paper" in targets:
        tally.paper.append(zero if missing else set_prf(paper_ids(gold), paper_ids(pred)))
    if "evidence" in targets:
        tally.evidence.append(zero if missing else set_prf(evidence_keys(gold), evidence_keys(pred)))
    answer_types = set(gold.get("answer_types") or []) if "answer" in targets else set()
    gold_answer = gold.get("answer") or {}
    if "multiple_choice" in answer_types:
        choice = normalize_id((gold_answer.get("multiple_choice") or {}).get("gold")).upper()
        tally.multiple_choice.append(not missing and multiple_choice_answer(pred) == choice)
    if "freeform" in answer_types:
        text = normalize_text((gold_answer.get("freeform") or {}).get("text"))
        tally.freeform.append(not missing and freeform_answer(pred) == text)
    if "table" in answer_types:
        table = score_table(gold_answer.get("table") or {}, (pred.get("answer") or {}).get("table") or {})
        if missing:
            table = replace(table, row_precision=0.0, row_recall=0.0, row_f1=0.0, cell_correct=0)
        tally.tables.append(table)
    if ks:
        _add_candidate_recall(gold, None if missing else candidate_papers(pred) or [], tally, ks)


def _add_candidate_recall(gold: Mapping[str, Any], ranked: list[str] | None, tally: _Tally, ks: Sequence[int]) -> None:
    """Recall@k of one question under "all" and under its task family; ``ranked`` None (no prediction) scores 0."""
    family = normalize_id(gold.get("task_family"))
    gold_papers = paper_ids(gold)
    for name in [ALL_FAMILIES, family] if family else [ALL_FAMILIES]:
        by_k = tally.recall.setdefault(name, {k: [] for k in ks})
        for k in ks:
            by_k[k].append(0.0 if ranked is None else recall_at_k(gold_papers, ranked, k))


def _summary(tally: _Tally) -> dict[str, Any]:
    tables = tally.tables
    cell_total = sum(t.cell_total for t in tables)
    cell_correct = sum(t.cell_correct for t in tables)
    report = {
        "paper_precision_macro": _mean([p for p, _, _ in tally.paper]),
        "paper_recall_macro": _mean([r for _, r, _ in tally.paper]),
        "paper_f1_macro": _mean([f for _, _, f in tally.paper]),
        "evidence_precision_macro": _mean([p for p, _, _ in tally.evidence]),
        "evidence_recall_macro": _mean([r for _, r, _ in tally.evidence]),
        "evidence_f1_macro": _mean([f for _, _, f in tally.evidence]),
        "multiple_choice_accuracy": _mean([float(ok) for ok in tally.multiple_choice]),
        "freeform_exact_match": _mean([float(ok) for ok in tally.freeform]),
        "table_row_f1_macro": _mean([t.row_f1 for t in tables]),
        "table_cell_accuracy_macro": _mean([t.cell_accuracy for t in tables]),
        "table_cell_accuracy_micro": cell_correct / cell_total if cell_total else None,
    }
    report["composite_score"] = _composite(report)
    report.update(
        multiple_choice_questions=len(tally.multiple_choice),
        freeform_questions=len(tally.freeform),
        table_questions=len(tables),
        table_cell_correct=cell_correct,
        table_cell_total=cell_total,
    )
    return report


def _composite(report: Mapping[str, float | None]) -> float | None:
    """Mean of paper F1, evidence F1 and the answer score (mean of the answer metrics that exist, 0.0 if none)."""
    names = ("multiple_choice_accuracy", "freeform_exact_match", "table_row_f1_macro", "table_cell_accuracy_macro")
    answer = _mean([report[name] for name in names if report[name] is not None]) or 0.0
    return _mean([v for v in (report["paper_f1_macro"], report["evidence_f1_macro"], answer) if v is not None])


def _recall_counts(recall: Mapping[str, Mapping[int, list[float]]]) -> dict[str, int]:
    return {family: max(map(len, by_k.values()), default=0) for family, by_k in recall.items()}


def _recall_summary(recall: Mapping[str, Mapping[int, list[float]]]) -> dict[str, dict[int, float]]:
    return {family: {k: sum(v) / len(v) for k, v in by_k.items()} for family, by_k in recall.items()}


def _paper_id(item: Any) -> str:
    return normalize_id(item.get("paper_id") if isinstance(item, Mapping) else item)


def _f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
