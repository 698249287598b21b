"""The relevance gate: answer only when the best reranker score clears a calibrated threshold.

QASPER seed, Stage 3 ("the CRAG relevance gate"): "The best reranker logit is compared
against a calibrated threshold. Below it, the system returns 'insufficient context' instead
of generating from weak evidence." The threshold is set in one of two modes: "F1-max, which
grid-searches 300 candidates, or a percentile fallback that sets the threshold at the P-th
percentile of the best_rerank_score distribution and needs no [...] labels."

Convention used throughout: a question is *answered* iff ``best_score >= threshold`` and
*abstains* otherwise. The score is the raw best reranker score of the question (not the
rank-blended pool score of :func:`lit3r.retrieval.fusion.blend_rerank`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from lit3r.index.layout import IndexLayout

if TYPE_CHECKING:
    from lit3r.settings import Settings

__all__ = [
    "GateThreshold",
    "abstention_metrics",
    "calibrate_f1",
    "calibrate_percentile",
    "gate_path",
    "load_gate",
    "passes",
    "save_gate",
]

GATE_FILE = "gate.json"
"""The stored threshold, beside the index of the settings it was calibrated for."""

GateMode = Literal["f1", "percentile", "fixed"]
PositiveClass = Literal["answerable", "abstain"]


@dataclass(frozen=True)
class GateThreshold:
    """A calibrated gate threshold and how it was obtained (stored with the index settings).

    Attributes:
        value: Questions whose best reranker score is below this abstain.
        mode: ``"f1"`` (F1-max grid search), ``"percentile"`` or ``"fixed"`` (set by hand).
        f1: The calibration F1 at ``value`` (``mode == "f1"`` only).
        percentile: The percentile P used (``mode == "percentile"`` only).
        n: Number of calibration questions (0 for a fixed threshold).
        positive: Which decision ``f1`` was computed for (``mode == "f1"`` only).
    """

    value: float
    mode: GateMode
    f1: float | None = None
    percentile: float | None = None
    n: int = 0
    positive: PositiveClass | None = None

    @classmethod
    def fixed(cls, value: float) -> GateThreshold:
        """A hand-set threshold."""
        return cls(value=float(value), mode="fixed")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GateThreshold:
        """Inverse of :meth:`to_dict`; missing optional keys take their defaults."""
        if data.get("mode") not in ("f1", "percentile", "fixed"):
            raise ValueError(f"unknown gate mode {data.get('mode')!r}")
        return cls(
            value=float(data["value"]),
            mode=data["mode"],
            f1=data.get("f1"),
            percentile=data.get("percentile"),
            n=int(data.get("n", 0)),
            positive=data.get("positive"),
        )


def passes(best_score: float | None, threshold: GateThreshold | None) -> bool:
    """Whether a question goes on to the reader.

    No threshold (gate not calibrated) always passes; no score (nothing retrieved) or a
    NaN score always fails; otherwise pass iff ``best_score >= threshold.value``.
    """
    if threshold is None:
        return True
    if best_score is None or math.isnan(best_score):
        return False
    return best_score >= threshold.value


def _scores_array(best_scores: Sequence[float]) -> np.ndarray:
    scores = np.asarray(best_scores, dtype=float)
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError("best_scores must be a non-empty 1-D sequence of numbers")
    if not np.all(np.isfinite(scores)):
        raise ValueError("best_scores must be finite (no NaN or infinity)")
    return scores


def _labelled(best_scores: Sequence[float], answerable: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    scores = _scores_array(best_scores)
    if len(answerable) != scores.size:
        raise ValueError(f"best_scores has {scores.size} entries but answerable has {len(answerable)}")
    return scores, np.asarray(answerable, dtype=bool)


def _counts(predicted: np.ndarray, actual: np.ndarray) -> tuple[int, int, int]:
    """(true positives, false positives, false negatives)."""
    tp = int(np.sum(predicted & actual))
    return tp, int(np.sum(predicted & ~actual)), int(np.sum(~predicted & actual))


def _f1(tp: int, fp: int, fn: int) -> float:
    """``2TP / (2TP + FP + FN)``; 1.0 when there was no positive to find and none was predicted."""
    denominator = 2 * tp + fp + fn
    return 2 * tp / denominator if denominator else 1.0


def _f1_at(scores: np.ndarray, answerable: np.ndarray, value: float, positive: PositiveClass) -> float:
    answered = scores >= value
    if positive == "answerable":
        return _f1(*_counts(answered, answerable))
    return _f1(*_counts(~answered, ~answerable))


def calibrate_f1(
    best_scores: Sequence[float],
    answerable: Sequence[bool],
    candidates: int = 300,
    positive: PositiveClass = "answerable",
) -> GateThreshold:
    """F1-max calibration (QASPER seed, Stage 3: "grid-searches 300 candidates").

    The candidates are ``numpy.linspace(min(best_scores), max(best_scores), candidates)``,
    both ends included, so the lowest candidate answers every question and the highest
    answers only the top-scoring ones. The chosen threshold maximises the F1 of one decision:

    * ``positive="answerable"`` (default): F1 of "answer" against the ``answerable`` labels;
    * ``positive="abstain"``: F1 of "abstain" against the unanswerable questions — the
      "insufficient context" class the gate exists for, and what :func:`abstention_metrics`
      reports.

    Equal F1: the lowest threshold wins (abstain as little as the data allows).

    One-class labels: if every question is answerable the threshold is the minimum score
    (everything answers); if none is, it is the next float above the maximum (everything
    abstains), a value the grid cannot reach. Either way the F1 is the one that
    threshold achieves under ``positive``.

    Raises:
        ValueError: Empty input, non-finite scores, length mismatch, or ``candidates < 1``.
    """
    scores, labels = _labelled(best_scores, answerable)
    if candidates < 1:
        raise ValueError(f"candidates must be >= 1, got {candidates}")
    if labels.all():
        value = float(scores.min())
    elif not labels.any():
        value = float(np.nextafter(scores.max(), np.inf))
    else:
        grid = np.linspace(scores.min(), scores.max(), candidates)
        f1s = [_f1_at(scores, labels, float(t), positive) for t in grid]
        value = float(grid[int(np.argmax(f1s))])  # argmax takes the first, i.e. lowest, of equal F1s
    f1 = _f1_at(scores, labels, value, positive)
    return GateThreshold(value=value, mode="f1", f1=f1, n=int(scores.size), positive=positive)


def calibrate_percentile(best_scores: Sequence[float], percentile: float = 10.0) -> GateThreshold:
    """Label-free calibration (QASPER seed, Stage 3): the P-th percentile of the best scores.

    Uses ``numpy.percentile`` with linear interpolation, so roughly ``percentile`` per cent
    of the calibration questions score below the threshold and would abstain.

    Raises:
        ValueError: Empty input, non-finite scores, or ``percentile`` outside [0, 100].
    """
    scores = _scores_array(best_scores)
    if not 0.0 <= percentile <= 100.0:
        raise ValueError(f"percentile must be within [0, 100], got {percentile}")
    value = float(np.percentile(scores, percentile, method="linear"))
    return GateThreshold(value=value, mode="percentile", percentile=float(percentile), n=int(scores.size))


def abstention_metrics(
    best_scores: Sequence[float], answerable: Sequence[bool], threshold: GateThreshold | None
) -> dict[str, Any]:
    """Precision, recall and F1 of abstaining, with "unanswerable" as the positive class.

    A question abstains iff it does not :func:`pass <passes>` the gate.

    Returns:
        ``tp`` (abstained, unanswerable), ``fp`` (abstained, answerable), ``fn`` (answered,
        unanswerable), ``tn`` (answered, answerable), ``n``, ``abstained``, ``precision``
        (``None`` when nothing abstained), ``recall`` (``None`` when no question is
        unanswerable) and ``f1`` (``2TP/(2TP+FP+FN)``, 1.0 when there was nothing to abstain
        on and nothing abstained).
    """
    scores, labels = _labelled(best_scores, answerable)
    abstained = np.array([not passes(float(s), threshold) for s in scores], dtype=bool)
    tp, fp, fn = _counts(abstained, ~labels)
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": int(scores.size) - tp - fp - fn,
        "n": int(scores.size),
        "abstained": tp + fp,
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
        "f1": _f1(tp, fp, fn),
    }


def gate_path(settings: Settings) -> Path:
    """Where the calibrated threshold of an index (one settings key) is stored."""
    return IndexLayout(settings).root / GATE_FILE


def save_gate(settings: Settings, threshold: GateThreshold, reranker: str) -> Path:
    """Store ``threshold`` with the index settings; it is valid for this reranker only."""
    path = gate_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"reranker": reranker, **threshold.to_dict()}, indent=1), encoding="utf-8")
    return path


def load_gate(settings: Settings) -> GateThreshold | None:
    """The stored threshold for these settings and their reranker, or None when none was calibrated."""
    path = gate_path(settings)
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.pop("reranker", None) != settings.reranker:
        return None
    return GateThreshold.from_dict(data)
