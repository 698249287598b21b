"""What the offline stance verdict sees in a (claim, sentence) pair: overlap, negation, direction, hedges, numbers.

Every feature is computed from the words alone (no model, no download), so the verdict runs anywhere:

* relevance: how much of the claim's content (stems, weighted towards rare-looking words) and of its word pairs
  the sentence holds, and how much of it the whole paper holds;
* negation: a claim and a sentence disagreeing on "not / no / never / fails to / does not ...";
* direction: the claim says "increases / higher / promotes" where the sentence says "decreases / lower /
  inhibits" (or the reverse), the claim's own direction word missing from the sentence. A negation flips the
  direction word right after it: "does not reduce" disagrees with "falls" and agrees with "did not fall"
  (:func:`lit3r.grounding.directions.signed_polarity`); the direction words are matched with their inflections
  ("lowers", "lowered");
* hedging: "may / might / suggest / possibly" in the claim or the sentence;
* numbers: a number of the claim that the paper never states, or a sentence stating numbers but not all of the
  claim's, or another number after the same word ('to 6%' against the claim's 'to 2%');
* overstatement: "all / only / exclusively / always" in the claim and not in the sentence.

The learned weights that turn these into a verdict live in :mod:`lit3r.grounding.stance`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from lit3r.grounding.directions import (
    ANCHOR_WINDOW,
    NEGATION_SCOPE,
    compared_sides,
    covariation,
    direction_anchors,
    direction_signs,
    signed_polarity,
)
from lit3r.grounding.lexicon import (
    ABSOLUTE,
    DOWN_FORMS,
    HEDGES,
    UP_FORMS,
    content_words,
    negates,
    numbers,
    stem_of,
    words,
)

FEATURES = (
    "coverage",
    "rare_coverage",
    "pair_coverage",
    "paper_coverage",
    "paper_missing",
    "negation_mismatch",
    "claim_negated",
    "sentence_negated",
    "direction_conflict",
    "direction_agree",
    "claim_direction_missing",
    "claim_hedged",
    "sentence_hedged",
    "number_unstated",
    "number_other",
    "overstatement",
)
"""The names of the pair features, in the order :func:`pair_features` returns them."""


def numbers_in_context(tokens: Sequence[str]) -> dict[str, set[str]]:
    """Each word that comes right before a number, with the numbers it comes before ('to 6%' -> {'to': {'6'}})."""
    found: dict[str, set[str]] = {}
    for before, token in zip(tokens, tokens[1:], strict=False):
        if token[0].isdigit() and not before[0].isdigit():
            found.setdefault(before, set()).update(numbers(token))
    return found


def renumbered(claim: Text, sentence: Text) -> bool:
    """The sentence puts another number where the claim puts its own ('falls to 2%' against 'falls to 6%')."""
    mine, theirs = numbers_in_context(claim.tokens), numbers_in_context(sentence.tokens)
    return any(word in theirs and not (nums & theirs[word]) for word, nums in mine.items())


def anchored_polarity(claim: Text, sentence: Text) -> int:
    """The direction the sentence asserts about what the claim's direction is about: only its direction words
    with one of the claim's :func:`direction_anchors` within :data:`ANCHOR_WINDOW` words count ("... against 0.57 for an
    encoder fifteen times larger, while encoding passages eight times faster" asserts "faster" of encoding
    passages; "larger" is about the encoder's size). The sentence's whole polarity when none is anchored."""
    tokens = sentence.tokens
    near = [
        (i, sign)
        for i, sign in sentence.signs
        if any(stem_of(t) in claim.anchors for t in tokens[max(0, i - ANCHOR_WINDOW) : i + ANCHOR_WINDOW + 1])
    ]
    return signed_polarity(near) if near else sentence.polarity


def swapped(claim: Text, sentence: Text) -> bool:
    """Whether the sentence compares what the claim compares with the two sides swapped: something the claim puts
    before its pivot ("than", "outperforms") the sentence puts after its own (or in the phrase it compares against:
    "compared to X, ..."), and something after it before ("Co-citation helps more than bibliographic coupling"
    against "Bibliographic coupling helps more than co-citation"). The sentence then asserts the opposite direction
    of what the claim compares; "B is better than A" agrees with "A is worse than B"."""
    ours, theirs = compared_sides(claim.tokens, claim.raw), compared_sides(sentence.tokens, sentence.raw)
    if ours is None or theirs is None:
        return False
    (left, right), (their_left, their_right) = ours, theirs
    return bool(left & their_right - their_left) and bool(right & their_left - their_right)


def denies(claim: Text, sentence: Text) -> bool:
    """Whether one of the two negates what they share and the other does not: a negation governing a content
    word both hold (:func:`negates_any`), not one elsewhere in the sentence, or a word one holds that the other
    holds with a negative prefix (:func:`prefix_negated`: "sensitive" against "insensitive")."""
    if prefix_negated(claim.stems, sentence.stems) or prefix_negated(sentence.stems, claim.stems):
        return True
    shared = claim.stems & sentence.stems
    return negates_any(claim.tokens, shared) != negates_any(sentence.tokens, shared)


NEGATIVE_PREFIXES = ("non-", "non", "un", "in", "ir", "il")
"""Prefixes that negate the word they open ("insensitive", "unchanged", "non-significant", "irrelevant"). Read only
against a text holding the word without them, and only for words of :data:`PREFIXED_MIN` letters or more, so that
"increase" is not a negated "crease" nor "inform" a negated "form"."""
PREFIXED_MIN = 6


def prefix_negated(stems: frozenset[str], other: frozenset[str]) -> frozenset[str]:
    """The ``stems`` that ``other`` holds with a negative prefix (:data:`NEGATIVE_PREFIXES`)."""
    return frozenset(
        s for s in stems if len(s) >= PREFIXED_MIN and any(prefix + s in other for prefix in NEGATIVE_PREFIXES)
    )


def negates_any(tokens: Sequence[str], stems: frozenset[str]) -> bool:
    """Whether a negation in ``tokens`` governs one of ``stems``: the stem comes within
    :data:`NEGATION_SCOPE` + 1 words after it ("needs no tuning" negates tuning, not the recall beside it)."""
    for i, token in enumerate(tokens):
        if negates([token]) and any(stem_of(t) in stems for t in tokens[i + 1 : i + 2 + NEGATION_SCOPE]):
            return True
    return False


def _weight(word: str) -> float:
    """How much a content word counts: longer, digit-bearing or hyphenated words name the claim's subject."""
    return 1.0 + (len(word) >= 8) + any(c.isdigit() for c in word) + ("-" in word)


@dataclass(frozen=True)
class Text:
    """A text prepared once: its words, content stems, stem pairs, numbers and cues."""

    raw: str
    tokens: tuple[str, ...]
    stems: frozenset[str]
    pairs: frozenset[tuple[str, str]]
    numbers: frozenset[str]
    negated: bool
    hedged: bool
    polarity: int
    """The direction the text asserts, +1 "more", -1 "less", 0 neither, with the negations that govern its
    direction words applied (:func:`signed_polarity`)."""
    signs: tuple[tuple[int, int], ...]
    """Its direction words' positions and signs (:func:`direction_signs`)."""
    anchors: frozenset[str]
    """What its direction words are about (:func:`direction_anchors`)."""
    relation: int
    """The relation it states between two directions (:func:`covariation`), 0 when none."""

    @classmethod
    def of(cls, text: str) -> Text:
        tokens = tuple(words(text))
        content = content_words(tokens)
        signs = tuple(direction_signs(tokens))
        return cls(
            raw=text,
            tokens=tokens,
            stems=frozenset(content),
            pairs=frozenset(zip(content, content[1:], strict=False)),
            numbers=frozenset(numbers(text)),
            negated=negates(tokens),
            hedged=any(t in HEDGES for t in tokens),
            polarity=signed_polarity(signs),
            signs=signs,
            anchors=direction_anchors(tokens, signs),
            relation=covariation(tokens, signs),
        )


def _weighted(claim: Text, present: frozenset[str]) -> float:
    total = sum(_weight(s) for s in claim.stems)
    return sum(_weight(s) for s in claim.stems if s in present) / total if total else 0.0


def _with_unprefixed(claim: Text, sentence: Text) -> Text:
    """``sentence`` holding, besides its own stems, each claim stem it holds with a negative prefix and each prefixed
    claim stem it holds without one: "insensitive" speaks of what "sensitive" does (the negation is read by
    :func:`denies`)."""
    found = prefix_negated(claim.stems, sentence.stems)  # the claim's "sensitive", the sentence's "insensitive"
    found |= {s for s in claim.stems if prefix_negated(sentence.stems, frozenset({s}))}  # the reverse
    return replace(sentence, stems=sentence.stems | found) if found else sentence


def pair_features(
    claim: Text,
    sentence: Text,
    paper_stems: frozenset[str],
    paper_numbers: frozenset[str],
    stated: int | None = None,
) -> list[float]:
    """The :data:`FEATURES` of one claim against one sentence of a paper (whose stems and numbers are given).
    ``stated``: the direction the sentence states when its words do not (a table row against the table's first
    row, :mod:`lit3r.grounding.table_direction`); ``None`` reads it from its words."""
    stems = claim.stems
    sentence = _with_unprefixed(claim, sentence)
    coverage = len(stems & sentence.stems) / len(stems) if stems else 0.0
    pairs = len(claim.pairs & sentence.pairs) / len(claim.pairs) if claim.pairs else coverage
    claim_dir_words = {t for t in claim.tokens if t in UP_FORMS or t in DOWN_FORMS}
    sentence_tokens = set(sentence.tokens)
    direction_missing = bool(claim_dir_words) and not (claim_dir_words & sentence_tokens)
    claimed = claim.relation or claim.polarity  # "A falls as B grows": how A moves with B
    if not claimed:
        direction = 0
    elif stated is not None:
        direction = stated
    else:  # a relation claim is read against the relation a sentence states, else its direction
        direction = (claim.relation and sentence.relation) or anchored_polarity(claim, sentence)
        direction = -direction if swapped(claim, sentence) else direction
    conflict = claimed * direction < 0
    agree = claimed * direction > 0
    unstated = bool(claim.numbers - paper_numbers)
    other = (bool(claim.numbers) and bool(sentence.numbers) and not claim.numbers <= sentence.numbers) or renumbered(
        claim, sentence
    )
    absolute = {t for t in claim.tokens if t in ABSOLUTE}
    return [
        coverage,
        _weighted(claim, sentence.stems),
        pairs,
        _weighted(claim, paper_stems),
        len(stems - paper_stems) / len(stems) if stems else 1.0,
        float(claim.negated != sentence.negated),
        float(claim.negated),
        float(sentence.negated),
        float(conflict),
        float(agree),
        float(direction_missing),
        float(claim.hedged),
        float(sentence.hedged),
        float(unstated),
        float(other),
        float(bool(absolute) and not (absolute & sentence_tokens)),
    ]
