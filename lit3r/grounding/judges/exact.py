"""The extractive mode's check: a claim is supported when its text occurs in the premise, quoted verbatim."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from lit3r.grounding.judge import Judgement

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"'})
_DASHES = re.compile(r"[\u2010-\u2015\u2212]")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([.,;:!?])")


def normalise(text: str) -> str:
    """``text`` compared loosely: NFKC, lower case, straight quotes, one dash, collapsed white space."""
    text = _DASHES.sub("-", unicodedata.normalize("NFKC", text).translate(_QUOTES)).lower()
    return _SPACE_BEFORE_PUNCTUATION.sub(r"\1", " ".join(text.split()))


class ExactJudge:
    """Supported (score 1.0) iff the normalised hypothesis is a substring of the normalised premise.

    This is what an extractive answer promises: every sentence is a verbatim quote of the chunk it cites.
    An answer a language model wrote in its own words is mostly judged unsupported by it.
    """

    name = "exact"

    def judge(self, premise: str, hypothesis: str) -> Judgement:
        """Whether ``hypothesis`` is quoted from ``premise``."""
        claim = normalise(hypothesis)
        if not claim:
            return Judgement(False, 0.0, "empty claim")
        if claim in normalise(premise):
            return Judgement(True, 1.0, "quoted")
        return Judgement(False, 0.0, "not found in premise")

    def judge_many(self, pairs: Sequence[tuple[str, str]]) -> list[Judgement]:
        """One judgement per ``(premise, hypothesis)`` pair."""
        return [self.judge(p, h) for p, h in pairs]
