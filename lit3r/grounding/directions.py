"""The direction a text asserts: its direction words' signs, negation applied, and how two directions relate.

"reduces" is -1, "does not reduce" +1 (a negation just before a direction word flips it), "a kappa of 0.81" +1 (high
agreement); the words around a direction word say what it is about (its anchors); "A falls as B grows" relates two
directions; "A helps more than B" compares two sides. Read by :mod:`lit3r.grounding.stance_features`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lit3r.grounding.lexicon import DOWN_FORMS, STOP, UP_FORMS, negates, stem_of, words

NEGATION_SCOPE = 1
"""A negation flips a direction word it comes at most this many words before ("does not reduce", "no
increase"); further away it negates something else ("mice lacking the gene showed reduced ..."). Chosen by
cross-validation by paper on SciFact among 0 (no flip) to 5 (``lit3r eval scifact``, gold abstract: 0.740, 0.731,
0.716, 0.721, 0.731, 0.721) and by claims about the demo papers written for the purpose (docs/BENCHMARKS.md):
1 reads the negated claims that 0 misses, at the cost of "did not significantly reduce", which it leaves unflipped."""


AGREEMENT_COEFFICIENTS = frozenset({"kappa", "alpha", "icc"})
"""Chance-corrected agreement coefficients, read on Landis and Koch's (1977) scale: at least
:data:`HIGH_AGREEMENT` is substantial agreement or better (high), at most :data:`LOW_AGREEMENT` fair or worse
(low)."""
HIGH_AGREEMENT = 0.61
LOW_AGREEMENT = 0.40


def _agreement_sign(tokens: Sequence[str], i: int) -> int:
    """+1 or -1 for a value of an agreement coefficient stated at ``tokens[i]`` ("a Cohen's kappa of 0.81": +1,
    high agreement), 0 for any other token."""
    if not (tokens[i][0].isdigit() and AGREEMENT_COEFFICIENTS & set(tokens[max(0, i - 2) : i])):
        return 0
    try:
        value = float(tokens[i].rstrip("%").replace(",", ""))
    except ValueError:
        return 0
    return 1 if HIGH_AGREEMENT <= value <= 1 else -1 if 0 <= value <= LOW_AGREEMENT else 0


def direction_signs(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """``(position, sign)`` of each direction word, flipped by a negation just before it (within
    :data:`NEGATION_SCOPE`) or by "less": "reduces" -1, "does not reduce" +1 (it denies the decrease); and of each
    agreement coefficient's value (:func:`_agreement_sign`: "a kappa of 0.81" is high agreement)."""
    found = []
    for i, token in enumerate(tokens):
        if agreement := _agreement_sign(tokens, i):
            found.append((i, agreement))
            continue
        sign = word_sign(token)
        if not sign or (token in GRADERS and i + 1 < len(tokens) and word_sign(tokens[i + 1])):
            continue  # "more slowly" asserts what "slowly" does, "less harmful" the reverse (below)
        if i and tokens[i - 1] == "less":
            sign = -sign
        if negates(tokens[max(0, i - NEGATION_SCOPE) : i]):
            sign = -sign
        found.append((i, sign))
    return found


COVARIATION = frozenset({"as", "when", "whenever"})
"""Words that, between two direction words, relate them: "latency falls as the budget grows" asserts that the two
move apart (the product of their signs, -1), not that the directions cancel."""

COVARIATION_SPAN = 8
"""At most this many words from the first direction word to the second for them to be read as one relation."""


def signed_polarity(signs: Sequence[tuple[int, int]]) -> int:
    """The direction the words assert (their :func:`direction_signs` summed): "reduces" -1, "does not reduce" +1, "no
    increase" -1."""
    total = sum(sign for _, sign in signs)
    return (total > 0) - (total < 0)


def covariation(tokens: Sequence[str], signs: Sequence[tuple[int, int]]) -> int:
    """The relation a text states between two directions: the first two consecutive direction words joined by a
    :data:`COVARIATION` word ("A falls as B grows", "A rises when B rises") assert their product, how the first
    moves with the second (-1, +1); 0 when there are none. A sentence's relation is read only against a claim that
    states one (:func:`pair_features`): read for every sentence, the form also joins two separate findings
    (measured on SciFact, docs/BENCHMARKS.md)."""
    for (i, first), (j, second) in zip(signs, signs[1:], strict=False):
        if j - i <= COVARIATION_SPAN and any(t in COVARIATION for t in tokens[i + 1 : j]):
            return first * second
    return 0


ANCHOR_WINDOW = 3
"""Words either side of a direction word that say what it is about ("encodes passages more slowly": encoding,
passages)."""


def direction_anchors(tokens: Sequence[str], signs: Sequence[tuple[int, int]]) -> frozenset[str]:
    """The content stems within :data:`ANCHOR_WINDOW` words of the text's direction words (at ``signs``)."""
    near = {j for i, _ in signs for j in range(i - ANCHOR_WINDOW, i + ANCHOR_WINDOW + 1) if j != i}
    return frozenset(
        stem_of(tokens[j]) for j in near if 0 <= j < len(tokens) and tokens[j] not in STOP and not word_sign(tokens[j])
    )


COMPARING = ("than", "above", "below", "outperform", "surpass", "exceed", "beat")
"""Words a comparison pivots on ("A helps more than B", "A is five points above B", "A outperforms B"), the verbs
(from the fourth on) in any inflection."""
COMPARED_SPAN = 6
"""The words after the pivot that name what a comparison is against ("... more than co-citation")."""


def _pivot(token: str) -> bool:
    return token in COMPARING[:3] or token.startswith(COMPARING[3:])


COMPARED_WITH = re.compile(
    r"\b(?:compared (?:to|with)|relative to|versus|vs\.?)\s+"
    r"([^,;:.()]+(?:,\s*[^,;:.()\s]+(?:\s+[^,;:.()\s]+){0,3}(?=,))?)",
    re.IGNORECASE,
)
"""What a text compares against when it says so in a phrase: the phrase up to the next comma, with a short
apposition after it ("Compared to the strongest baseline, PaSa-GPT-4o, A improves ..."); the rest of the text is
the other side."""


def compared_sides(tokens: Sequence[str], text: str = "") -> tuple[frozenset[str], frozenset[str]] | None:
    """The two sides of a text's comparison: the content stems before its first pivot (:data:`COMPARING`) and
    within :data:`COMPARED_SPAN` words after each ("A is eight points above B and five above C": A against B and C),
    or, without a pivot, the rest of ``text`` and the one phrase it compares against (:data:`COMPARED_WITH`);
    direction words left out. ``None`` for a text with no comparison, or with two compared-against phrases."""
    at = [i for i, t in enumerate(tokens) if _pivot(t)]
    if at:
        after = [t for i in at for t in tokens[i + 1 : i + 1 + COMPARED_SPAN]]
        left = _compared(tokens[: at[0]])
        return left, _compared(after) - left
    against = list(COMPARED_WITH.finditer(text))
    if len(against) != 1:
        return None
    match = against[0]
    rest = f"{text[: match.start()]} {text[match.end() :]}"
    return _compared(words(rest)), _compared(words(match.group(1)))


def _compared(tokens: Sequence[str]) -> frozenset[str]:
    """The content stems of one side of a comparison, its direction words left out."""
    return frozenset(stem_of(t) for t in tokens if t not in STOP and len(t) > 1 and not word_sign(t))


GRADERS = frozenset({"more", "less"})
"""Comparatives that grade the direction word after them rather than assert one of their own: "more slowly" is
slower (down), "less harmful" is up."""


def word_sign(token: str) -> int:
    """+1 for a word asserting "more", -1 for "less", 0 otherwise."""
    return (token in UP_FORMS) - (token in DOWN_FORMS)
