"""A scripted entailment judge for metric tests: a claim is supported when the premise holds all its key phrases.

    judge = KeyPhraseJudge({"BM25 uses k1 and b.": ["k1", "b = 0.75"]})
    judge.judge("We set k1 = 1.2 and b = 0.75.", "BM25 uses k1 and b.").supported  # True

A claim without listed phrases is its own key phrase (supported iff the premise contains it). Matching ignores
case. Every judged pair is kept in :attr:`KeyPhraseJudge.calls`, so tests can count judge calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lit3r.grounding.judge import Judgement


class KeyPhraseJudge:
    """Supported iff every key phrase of the hypothesis occurs in the premise; score is the fraction found."""

    name = "key-phrase"

    def __init__(self, phrases: Mapping[str, Sequence[str]] | None = None) -> None:
        self.phrases = {claim: list(keys) for claim, keys in (phrases or {}).items()}
        self.calls: list[tuple[str, str]] = []

    def judge(self, premise: str, hypothesis: str) -> Judgement:
        """The verdict on one pair."""
        self.calls.append((premise, hypothesis))
        keys = self.phrases.get(hypothesis) or [hypothesis]
        found = sum(key.lower() in premise.lower() for key in keys)
        supported = found == len(keys)
        return Judgement(supported, found / len(keys), "all key phrases found" if supported else "key phrase missing")

    def judge_many(self, pairs: Sequence[tuple[str, str]]) -> list[Judgement]:
        """The verdicts on several pairs, in order."""
        return [self.judge(premise, hypothesis) for premise, hypothesis in pairs]
