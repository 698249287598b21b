"""The relevance gate as an abstention decision: cross-fitted F1 mode, percentile mode, the system's own choices."""

from __future__ import annotations

import itertools

import pytest

from lit3r.evals.abstention import AbstentionSample, abstention_report, fold_of, system_abstention
from lit3r.retrieval.gate import GateThreshold


def _ids(fold: int, n: int) -> list[str]:
    """``n`` question ids that fall in ``fold``."""
    return list(itertools.islice((f"q{i}" for i in itertools.count() if fold_of(f"q{i}") == fold), n))


def _sample(question_id: str, score: float | None, answerable: bool, abstained: bool = False) -> AbstentionSample:
    return AbstentionSample(question_id, score, answerable, abstained)


def test_folds_are_stable_and_both_used() -> None:
    assert [fold_of(f"q{i}") for i in range(40)] == [fold_of(f"q{i}") for i in range(40)]
    assert {fold_of(f"q{i}") for i in range(40)} == {0, 1}


def test_f1_mode_scores_each_fold_with_the_other_folds_threshold() -> None:
    # each fold alone is separable, but at different levels: fold 0 at ~0.2, fold 1 at ~0.6.
    (a0, u0), (a1, u1) = _ids(0, 2), _ids(1, 2)
    samples = [_sample(a0, 0.5, True), _sample(u0, 0.2, False), _sample(a1, 0.9, True), _sample(u1, 0.6, False)]
    f1 = abstention_report(samples, None)["f1"]
    low, high = f1["fold_thresholds"]
    assert 0.2 < low <= 0.5 and 0.6 < high <= 0.9
    # fold 1 under fold 0's low threshold: both answer (the unanswerable one is missed: fn, tn);
    # fold 0 under fold 1's high threshold: both abstain (tp, fp)
    assert {k: f1[k] for k in ("tp", "fp", "fn", "tn", "n")} == {"tp": 1, "fp": 1, "fn": 1, "tn": 1, "n": 4}
    assert (f1["precision"], f1["recall"], f1["f1"]) == (0.5, 0.5, 0.5)
    assert isinstance(f1["threshold"], float) and f1["fold_sizes"] == [2, 2]


def test_separable_data_is_perfect_under_cross_fitting() -> None:
    samples = [_sample(q, 0.9 + i / 100, True) for i, q in enumerate(_ids(0, 3) + _ids(1, 3))]
    unanswerable = _ids(0, 5)[3:] + _ids(1, 5)[3:]
    samples += [_sample(q, score, False) for q, score in zip(unanswerable, (0.1, 0.2, 0.15, 0.2), strict=True)]
    report = abstention_report(samples, None)
    assert (report["f1"]["precision"], report["f1"]["recall"], report["f1"]["f1"]) == (1.0, 1.0, 1.0)
    percentile = report["percentile"]
    assert percentile["percentile"] == 10.0 and percentile["n"] == 10
    assert percentile["abstained"] == 1 and percentile["precision"] == 1.0 and percentile["recall"] == 0.25
    assert percentile["f1"] == pytest.approx(2 / 5)


def test_too_few_questions_for_two_folds() -> None:
    f1 = abstention_report([_sample(_ids(0, 1)[0], 0.3, False)], None)["f1"]
    assert f1["f1"] is None and f1["fold_thresholds"][1] is None and "note" in f1


def test_question_without_score_always_abstains() -> None:
    (a, u), (a1, u1) = _ids(0, 2), _ids(1, 2)
    samples = [_sample(a, 0.9, True), _sample(u, None, False), _sample(a1, 0.8, True), _sample(u1, 0.1, False)]
    percentile = abstention_report(samples, None)["percentile"]
    assert percentile["tp"] >= 1 and percentile["n"] == 4


def test_system_abstention_uses_the_answers_decisions() -> None:
    samples = [
        _sample("a", 0.9, True, abstained=False),  # tn
        _sample("b", 0.1, True, abstained=True),  # fp
        _sample("c", 0.2, False, abstained=True),  # tp
        _sample("d", 0.8, False, abstained=False),  # fn
        _sample("e", None, False, abstained=True),  # tp
    ]
    system = system_abstention(samples, GateThreshold.fixed(0.5))
    assert (system["threshold"], system["gate_mode"]) == (0.5, "fixed")
    assert {k: system[k] for k in ("tp", "fp", "fn", "tn")} == {"tp": 2, "fp": 1, "fn": 1, "tn": 1}
    assert system["precision"] == pytest.approx(2 / 3) and system["recall"] == pytest.approx(2 / 3)
    assert system_abstention(samples, None)["threshold"] is None
