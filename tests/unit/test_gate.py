"""Hand-computed checks of the relevance gate (QASPER seed, Stage 3)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lit3r.retrieval.gate import GateThreshold, abstention_metrics, calibrate_f1, calibrate_percentile, passes

# Toy calibration set: best reranker scores 1..6 with labels (answerable?)
SCORES = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
LABELS = [False, False, True, False, True, True]
# A question is answered iff score >= t.
# F1 of "answer" (positives: 3, 5, 6) at the grid points t = 1..6:
#   t=1 answers {1..6}: TP 3, FP 3, FN 0 -> 6/9  = 0.667
#   t=2 answers {2..6}: TP 3, FP 2, FN 0 -> 6/8  = 0.750
#   t=3 answers {3..6}: TP 3, FP 1, FN 0 -> 6/7  = 0.857   <- best
#   t=4 answers {4,5,6}: TP 2, FP 1, FN 1 -> 4/6 = 0.667
#   t=5 answers {5,6}:  TP 2, FP 0, FN 1 -> 4/5  = 0.800
#   t=6 answers {6}:    TP 1, FP 0, FN 2 -> 2/4  = 0.500
# F1 of "abstain" (positives: 1, 2, 4; abstain iff score < t):
#   t=1 abstains {}:         TP 0, FN 3       -> 0
#   t=2 abstains {1}:        TP 1, FN 2       -> 2/4 = 0.500
#   t=3 abstains {1,2}:      TP 2, FN 1       -> 4/5 = 0.800
#   t=4 abstains {1,2,3}:    TP 2, FP 1, FN 1 -> 4/6 = 0.667
#   t=5 abstains {1,2,3,4}:  TP 3, FP 1       -> 6/7 = 0.857   <- best
#   t=6 abstains {1..5}:     TP 3, FP 2       -> 6/8 = 0.750


def test_calibrate_f1_on_the_score_grid_answerable_positive() -> None:
    # candidates = 6 -> linspace(1, 6, 6) = [1, 2, 3, 4, 5, 6] exactly.
    gate = calibrate_f1(SCORES, LABELS, candidates=6)
    assert gate.value == 3.0
    assert gate.f1 == pytest.approx(6 / 7)
    assert (gate.mode, gate.n, gate.positive, gate.percentile) == ("f1", 6, "answerable", None)


def test_calibrate_f1_abstain_positive_picks_a_different_threshold() -> None:
    gate = calibrate_f1(SCORES, LABELS, candidates=6, positive="abstain")
    assert gate.value == 5.0
    assert gate.f1 == pytest.approx(6 / 7)


def test_calibrate_f1_300_candidates_takes_the_lowest_of_equal_f1() -> None:
    # Grid: 1 + 5 i / 299, i = 0..299. Every t in (2, 3] answers {3..6} (F1 6/7); the lowest such
    # grid point has 1 + 5 i / 299 > 2  <=>  i > 59.8  ->  i = 60, t = 1 + 300/299 = 2.00334.
    gate = calibrate_f1(SCORES, LABELS)
    assert gate.value == pytest.approx(1 + 300 / 299)
    assert gate.value == np.linspace(1.0, 6.0, 300)[60]
    assert gate.f1 == pytest.approx(6 / 7)
    # Abstain positive: best set {1,2,3,4} needs t in (4, 5]: 1 + 5 i / 299 > 4 <=> i > 179.4 -> i = 180.
    gate = calibrate_f1(SCORES, LABELS, positive="abstain")
    assert gate.value == pytest.approx(1 + 900 / 299)


def test_calibrate_f1_tie_between_separate_thresholds_takes_the_lower() -> None:
    # scores 1..4, labels T F F T, grid [1, 2, 3, 4]:
    #   t=1: TP 2, FP 2        -> 4/6 = 2/3
    #   t=2: TP 1, FP 2, FN 1  -> 2/5
    #   t=3: TP 1, FP 1, FN 1  -> 2/4
    #   t=4: TP 1, FN 1        -> 2/3   -> ties t=1; the lower threshold wins
    gate = calibrate_f1([1.0, 2.0, 3.0, 4.0], [True, False, False, True], candidates=4)
    assert gate.value == 1.0
    assert gate.f1 == pytest.approx(2 / 3)


def test_calibrate_f1_one_class_labels() -> None:
    # All answerable: answer everything (threshold = min score).
    gate = calibrate_f1([0.2, 0.5, 0.9], [True, True, True])
    assert gate.value == 0.2
    assert all(passes(s, gate) for s in (0.2, 0.5, 0.9))
    assert gate.f1 == 1.0
    # None answerable: abstain on everything (threshold just above the max score).
    gate = calibrate_f1([0.2, 0.5, 0.9], [False, False, False], positive="abstain")
    assert gate.value > 0.9
    assert not any(passes(s, gate) for s in (0.2, 0.5, 0.9))
    assert gate.f1 == 1.0  # 3 abstentions, all on unanswerable questions


def test_calibrate_f1_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        calibrate_f1([], [])
    with pytest.raises(ValueError, match="3 entries but answerable has 2"):
        calibrate_f1([1.0, 2.0, 3.0], [True, False])
    with pytest.raises(ValueError, match="finite"):
        calibrate_f1([1.0, float("nan")], [True, False])
    with pytest.raises(ValueError, match="candidates"):
        calibrate_f1([1.0, 2.0], [True, False], candidates=0)


def test_calibrate_percentile_is_linear() -> None:
    # sorted [1, 2, 3, 4, 5]; P = 10 -> position 0.10 * (5 - 1) = 0.4 -> 1 + 0.4 * (2 - 1) = 1.4
    gate = calibrate_percentile([5.0, 1.0, 4.0, 2.0, 3.0], percentile=10.0)
    assert gate.value == pytest.approx(1.4)
    assert (gate.mode, gate.percentile, gate.n, gate.f1) == ("percentile", 10.0, 5, None)
    assert calibrate_percentile([5.0, 1.0, 4.0, 2.0, 3.0], percentile=50.0).value == 3.0
    assert calibrate_percentile([5.0, 1.0], percentile=0.0).value == 1.0
    with pytest.raises(ValueError):
        calibrate_percentile([1.0], percentile=101.0)
    with pytest.raises(ValueError):
        calibrate_percentile([])


def test_passes() -> None:
    gate = GateThreshold.fixed(0.5)
    assert passes(0.5, gate)  # at the threshold: answered
    assert passes(0.7, gate)
    assert not passes(0.49, gate)
    assert not passes(None, gate)  # nothing retrieved
    assert not passes(float("nan"), gate)
    assert passes(None, None) and passes(-100.0, None)  # no gate configured


def test_abstention_metrics_on_the_toy_set() -> None:
    # threshold 3: abstains {1, 2} -> both unanswerable (TP 2), answers 4 which is unanswerable (FN 1),
    # answers 3, 5, 6 which are answerable (TN 3). precision 2/2, recall 2/3, F1 4/5.
    metrics = abstention_metrics(SCORES, LABELS, GateThreshold.fixed(3.0))
    assert metrics == {
        "tp": 2,
        "fp": 0,
        "fn": 1,
        "tn": 3,
        "n": 6,
        "abstained": 2,
        "precision": 1.0,
        "recall": pytest.approx(2 / 3),
        "f1": pytest.approx(4 / 5),
    }
    # agrees with the abstain-positive calibration at its own threshold (t = 5: F1 6/7)
    gate = calibrate_f1(SCORES, LABELS, candidates=6, positive="abstain")
    assert abstention_metrics(SCORES, LABELS, gate)["f1"] == pytest.approx(gate.f1)
    # no gate: nothing abstains, precision undefined, recall 0
    none = abstention_metrics(SCORES, LABELS, None)
    assert (none["abstained"], none["precision"], none["recall"], none["f1"]) == (0, None, 0.0, 0.0)


def test_threshold_round_trips_through_json() -> None:
    gate = calibrate_f1(SCORES, LABELS, candidates=6)
    assert GateThreshold.from_dict(json.loads(json.dumps(gate.to_dict()))) == gate
    assert GateThreshold.from_dict({"value": 1, "mode": "fixed"}) == GateThreshold.fixed(1.0)
    with pytest.raises(ValueError, match="mode"):
        GateThreshold.from_dict({"value": 1.0, "mode": "magic"})
