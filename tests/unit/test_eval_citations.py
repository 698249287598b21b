"""ALCE citation recall and precision on hand-computed examples, judged by a scripted key-phrase judge."""

from __future__ import annotations

import pytest

from lit3r.evals.citations import CitedClaim, answer_citations, citation_metrics, score_claims

from fakes.judges import KeyPhraseJudge

BM25 = "We tune BM25 with k1 and b."
ENCODER = "A small encoder embeds passages."
UNRELATED = "The dataset has 1,585 papers."
JUDGE_PHRASES = {
    "BM25 has a k1 parameter.": ["k1"],
    "Passages are embedded by an encoder.": ["encoder"],
    "k1 is tuned and an encoder embeds passages.": ["k1", "encoder"],
    "The corpus is multilingual.": ["multilingual"],
}


def _judge() -> KeyPhraseJudge:
    return KeyPhraseJudge(JUDGE_PHRASES)


def test_two_citations_one_irrelevant() -> None:
    # joint {BM25, UNRELATED} entails; BM25 alone entails (precise); UNRELATED alone does not and the rest (BM25)
    # still entails, so UNRELATED is irrelevant: recall 1, precision 1/2
    judge = _judge()
    [verdict] = score_claims([CitedClaim("BM25 has a k1 parameter.", (BM25, UNRELATED))], judge)
    assert (verdict.supported, verdict.citations, verdict.precise, verdict.irrelevant) == (True, 2, 1, 1)
    scores = answer_citations([verdict])
    assert (scores.recall, scores.precision) == (1.0, 0.5)
    assert len(judge.calls) == 4  # joint, each alone, the rest for the one failing alone


def test_claim_without_citation() -> None:
    # an uncited claim has recall 0 and adds no citation; beside the claim above: recall 1/2, precision 1/2
    judge = _judge()
    claims = [CitedClaim("BM25 has a k1 parameter.", (BM25, UNRELATED)), CitedClaim("Passages are embedded.")]
    verdicts = score_claims(claims, judge)
    assert (verdicts[1].supported, verdicts[1].citations, verdicts[1].precise) == (False, 0, 0)
    scores = answer_citations(verdicts)
    assert (scores.recall, scores.precision) == (0.5, 0.5)
    assert all(hypothesis != "Passages are embedded." for _premise, hypothesis in judge.calls)  # never judged


def test_claim_supported_only_jointly() -> None:
    # neither passage alone entails, and removing either breaks the joint verdict: both precise
    [verdict] = score_claims([CitedClaim("k1 is tuned and an encoder embeds passages.", (BM25, ENCODER))], _judge())
    assert (verdict.supported, verdict.precise, verdict.irrelevant) == (True, 2, 0)
    assert (answer_citations([verdict]).recall, answer_citations([verdict]).precision) == (1.0, 1.0)


def test_unsupported_claim_makes_its_citations_imprecise() -> None:
    claims = [CitedClaim("BM25 has a k1 parameter.", (BM25,)), CitedClaim("The corpus is multilingual.", (ENCODER,))]
    scores = answer_citations(score_claims(claims, _judge()))
    assert (scores.recall, scores.precision) == (0.5, 0.5)


def test_single_supported_citation_costs_one_call() -> None:
    judge = _judge()
    [verdict] = score_claims([CitedClaim("BM25 has a k1 parameter.", (BM25,))], judge)
    assert (verdict.supported, verdict.precise) == (True, 1) and len(judge.calls) == 1


def test_joint_premise_is_the_cited_passages_joined_by_new_lines() -> None:
    judge = _judge()
    score_claims([CitedClaim("Passages are embedded by an encoder.", (BM25, ENCODER))], judge)
    assert judge.calls[0] == (f"{BM25}\n{ENCODER}", "Passages are embedded by an encoder.")


def test_at_most_three_citations_as_alce() -> None:
    claim = CitedClaim("Passages are embedded by an encoder.", (BM25, UNRELATED, BM25, ENCODER))
    assert not score_claims([claim], _judge())[0].supported  # the fourth citation is not read
    assert score_claims([claim], _judge(), at_most_citations=None)[0].supported


def test_metrics_average_over_answers_and_skip_empty_answers() -> None:
    answers = [
        [CitedClaim("BM25 has a k1 parameter.", (BM25, UNRELATED)), CitedClaim("Passages are embedded.")],  # 1/2, 1/2
        [CitedClaim("k1 is tuned and an encoder embeds passages.", (BM25, ENCODER))],  # 1, 1
        [CitedClaim("The corpus is multilingual.")],  # 0, 0 (no citation at all)
        [],  # no statement: left out
    ]
    metrics = citation_metrics(answers, _judge())
    assert metrics["citation_recall"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert metrics["citation_precision"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert {k: metrics[k] for k in ("answers", "claims", "citations", "supported_claims")} == {
        "answers": 3,
        "claims": 4,
        "citations": 4,
        "supported_claims": 2,
    }
    assert (metrics["uncited_claims"], metrics["irrelevant_citations"]) == (2, 1)


def test_no_answer_with_statements() -> None:
    metrics = citation_metrics([[]], _judge())
    assert metrics["citation_recall"] is None and metrics["citation_precision"] is None and metrics["answers"] == 0
    with pytest.raises(ValueError):
        answer_citations([])
