"""The relevance gate as an abstention decision, measured on the questions of one answer run.

The right output for a QASPER question is "insufficient evidence" when every annotator marked it unanswerable
(:attr:`~lit3r.evals.qasper.QasperQuestion.unanswerable`); abstaining is the positive class, so precision, recall
and F1 are those of abstaining (:func:`lit3r.retrieval.gate.abstention_metrics`). Each question's score is the best
reranker score the gate saw while the agent answered it (the trace's ``read`` step, ``best_score``).

* ``f1`` mode: F1-max calibration (:func:`~lit3r.retrieval.gate.calibrate_f1`, as ``lit3r eval gate``) needs the
  labels it is then scored on, so it is measured by two-fold cross-fitting: the questions are split by a hash of
  their id; the threshold calibrated on one fold decides the other fold's questions, and the counts of both
  held-out folds are pooled. ``fold_thresholds`` are the two thresholds used; ``threshold`` is the one calibrated
  on all the questions (what ``eval gate --save f1`` would store from these scores).
* ``percentile`` mode: the label-free threshold (the P-th percentile of the best scores) over all questions.
* ``system``: what the agent did (``answer.sufficient`` false is an abstention, whether the gate or the reader
  decided it), with the stored gate it ran with.

A question with no best score (nothing retrieved) abstains under every threshold and takes no part in
calibration.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lit3r.retrieval.gate import GateThreshold, abstention_metrics, calibrate_f1, calibrate_percentile

COUNTS = ("tp", "fp", "fn", "tn")
PERCENTILE = 10.0
"""The label-free mode's percentile (the default of ``lit3r eval gate``)."""


@dataclass(frozen=True)
class AbstentionSample:
    """One question: the gate's best score, the gold label and what the system did."""

    question_id: str
    best_score: float | None
    answerable: bool
    abstained: bool


def fold_of(question_id: str) -> int:
    """0 or 1: a question's cross-fitting fold, from a hash of its id (stable across runs and machines)."""
    return hashlib.sha256(question_id.encode("utf-8")).digest()[0] % 2


def _scored(samples: Sequence[AbstentionSample]) -> list[AbstentionSample]:
    return [s for s in samples if s.best_score is not None]


def _counts(samples: Sequence[AbstentionSample], threshold: GateThreshold | None) -> dict[str, int]:
    """Confusion counts of abstaining under ``threshold`` (a question without a score always abstains)."""
    scored = _scored(samples)
    counts = dict.fromkeys(COUNTS, 0)
    if scored:
        metrics = abstention_metrics([s.best_score for s in scored], [s.answerable for s in scored], threshold)
        counts = {k: metrics[k] for k in COUNTS}
    for sample in samples:
        if sample.best_score is None:
            counts["fp" if sample.answerable else "tp"] += 1
    return counts


def metrics_from_counts(counts: dict[str, int]) -> dict[str, Any]:
    """Precision, recall and F1 of abstaining from confusion counts, with the counts (as ``abstention_metrics``)."""
    tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
    denominator = 2 * tp + fp + fn
    return {
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
        "f1": 2 * tp / denominator if denominator else 1.0,
        **counts,
        "n": sum(counts.values()),
        "abstained": tp + fp,
    }


def _calibrate_f1(samples: Sequence[AbstentionSample]) -> GateThreshold | None:
    scored = _scored(samples)
    if not scored:
        return None
    return calibrate_f1([s.best_score for s in scored], [s.answerable for s in scored])


def f1_cross_fitted(samples: Sequence[AbstentionSample]) -> dict[str, Any]:
    """The F1-max mode measured by two-fold cross-fitting (see the module docstring)."""
    folds = [[s for s in samples if fold_of(s.question_id) == k] for k in (0, 1)]
    thresholds = [_calibrate_f1(fold) for fold in folds]
    whole = _calibrate_f1(samples)
    if None in thresholds:
        return {
            "threshold": whole.value if whole else None,
            "fold_thresholds": [t.value if t else None for t in thresholds],
            "precision": None,
            "recall": None,
            "f1": None,
            "note": "too few scored questions for two folds: not measured",
        }
    pooled = dict.fromkeys(COUNTS, 0)
    for held_out, threshold in ((folds[1], thresholds[0]), (folds[0], thresholds[1])):
        for key, value in _counts(held_out, threshold).items():
            pooled[key] += value
    return {
        "threshold": whole.value,
        "fold_thresholds": [t.value for t in thresholds],
        "fold_sizes": [len(fold) for fold in folds],
        "positive": whole.positive,
        **metrics_from_counts(pooled),
        "measured": "two-fold cross-fitting (calibrated on one half, scored on the other)",
    }


def percentile_mode(samples: Sequence[AbstentionSample], percentile: float = PERCENTILE) -> dict[str, Any]:
    """The label-free mode: the ``percentile``-th percentile of all the best scores, scored on all questions."""
    scored = _scored(samples)
    if not scored:
        return {"threshold": None, "percentile": percentile, "precision": None, "recall": None, "f1": None}
    threshold = calibrate_percentile([s.best_score for s in scored], percentile)
    return {
        "threshold": threshold.value,
        "percentile": percentile,
        **metrics_from_counts(_counts(samples, threshold)),
        "measured": "all questions (no labels used)",
    }


def system_abstention(samples: Sequence[AbstentionSample], gate: GateThreshold | None) -> dict[str, Any]:
    """The agent's own decisions (``sufficient`` false = abstained) against the labels, with its stored gate."""
    counts = dict.fromkeys(COUNTS, 0)
    for sample in samples:
        key = ("tp" if sample.abstained else "fn") if not sample.answerable else ("fp" if sample.abstained else "tn")
        counts[key] += 1
    return {
        "threshold": gate.value if gate else None,
        "gate_mode": gate.mode if gate else None,
        **metrics_from_counts(counts),
    }


def abstention_report(
    samples: Sequence[AbstentionSample], gate: GateThreshold | None, percentile: float = PERCENTILE
) -> dict[str, Any]:
    """``{"f1": ..., "percentile": ..., "system": ...}``: threshold, precision, recall and F1 of abstaining."""
    return {
        "f1": f1_cross_fitted(samples),
        "percentile": percentile_mode(samples, percentile),
        "system": system_abstention(samples, gate),
    }
