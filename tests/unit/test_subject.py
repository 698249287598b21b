"""What a claim is about, and how much of it a paper's best passage holds (lit3r.grounding.subject)."""

from __future__ import annotations

import pytest

from lit3r.grounding.subject import idf, subject_coverage, subject_words


def test_subject_words_leave_out_the_claims_stance_function_words_and_numbers() -> None:
    claim = "Aspirin does not lower the risk of a second heart attack by 25% when taken daily."
    assert subject_words(claim) == ["aspirin", "risk", "second", "heart", "attack", "taken", "daily"]
    assert subject_words("It may only increase.") == []


def test_idf_weighs_a_word_no_chunk_holds_most() -> None:
    assert idf(0, 100) > idf(1, 100) > idf(50, 100) > idf(100, 100) > 0


CHUNKS = {"a1": "a", "a2": "a", "b1": "b", "c1": "c", "c2": "c", "c3": "c"}


def test_a_paper_counts_its_best_chunk_holding_two_words_together() -> None:
    holders = {"steel": set(), "expands": {"a1", "b1"}, "heated": {"a2", "b1"}}
    shares = subject_coverage(holders, CHUNKS.__getitem__, len(CHUNKS))
    # a holds both words, but in two chunks: no chunk of it speaks of the claim; b1 holds both.
    assert set(shares) == {"b"}
    weights = {w: idf(len(c), len(CHUNKS)) for w, c in holders.items()}
    assert shares["b"] == pytest.approx((weights["expands"] + weights["heated"]) / sum(weights.values()))
    assert shares["b"] < 1.0


def test_a_paper_holding_every_word_in_one_chunk_has_the_whole_share() -> None:
    holders = {"rank": {"c1", "a1"}, "fusion": {"c1"}}
    shares = subject_coverage(holders, CHUNKS.__getitem__, len(CHUNKS))
    assert shares["c"] == pytest.approx(1.0) and "a" not in shares
    assert subject_coverage({"fusion": {"c2"}}, CHUNKS.__getitem__, len(CHUNKS)) == {
        "c": pytest.approx(1.0)
    }  # one word: one suffices
    assert subject_coverage({}, CHUNKS.__getitem__, len(CHUNKS)) == {}


def test_a_word_every_chunk_holds_weighs_little() -> None:
    everywhere = set(CHUNKS)
    holders = {"second": everywhere, "aspirin": set(), "attack": {"b1"}}
    shares = subject_coverage(holders, CHUNKS.__getitem__, len(CHUNKS))
    weights = {w: idf(len(c), len(CHUNKS)) for w, c in holders.items()}
    assert weights["second"] / sum(weights.values()) < 0.02
    assert set(shares) == {"b"}  # the others hold only "second": one word, not two together
    assert shares["b"] == pytest.approx((weights["second"] + weights["attack"]) / sum(weights.values()))
    assert shares["b"] < 0.5  # "aspirin", which no chunk holds, is most of what the claim is about
