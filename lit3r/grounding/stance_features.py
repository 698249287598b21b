"""What the offline stance verdict sees in a (claim, sentence) pair: overlap, negation, direction, hedges, numbers.

Every feature is computed from the words alone (no model, no download), so the verdict runs anywhere:

* relevance: how much of the claim's content (stems, weighted towards rare-looking words) and of its word pairs
  the sentence holds, and how much of it the whole paper holds;
* negation: a claim and a sentence disagreeing on "not / no / never / fails to / does not ...";
* direction: the claim says "increases / higher / promotes" where the sentence says "decreases / lower /
  inhibits" (or the reverse), the claim's own direction word missing from the sentence. A negation flips the
  direction word right after it: "does not reduce" disagrees with "falls" and agrees with "did not fall"
  (:func:`_polarity`); the direction words are matched with their inflections ("lowers", "lowered");
* hedging: "may / might / suggest / possibly" in the claim or the sentence;
* numbers: a number of the claim that the paper never states, or a sentence stating numbers but not all of the
  claim's, or another number after the same word ('to 6%' against the claim's 'to 2%');
* overstatement: "all / only / exclusively / always" in the claim and not in the sentence.

The learned weights that turn these into a verdict live in :mod:`lit3r.grounding.stance`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-']*|\d[\d,]*(?:\.\d+)?%?")
_NUMBER = re.compile(r"(?<![\w.@])\d[\d,]*(?:\.\d+)?%?")

STOP = frozenset(
    """a an the of in on at to for from by with and or as is are was were be been being this that these those it its
    their there which who whom whose than then also into over under between among about after before during such
    can has have had do does did we our they them he she his her i you your not no nor very more most less least
    both each other some any all only one two three may might could would should will shall must""".split()
)

NEGATION = frozenset(
    """not no never neither nor none without cannot unable fail fails failed failure lack lacks lacking absent
    absence nothing unaffected unchanged insufficient doesn't don't didn't isn't aren't wasn't weren't cannot
    won't""".split()
)
HEDGES = frozenset(
    """may might could possibly possible perhaps suggest suggests suggested suggesting likely unlikely potential
    potentially appear appears appeared seem seems seemed hypothesize hypothesized presumably""".split()
)
ABSOLUTE = frozenset("all only exclusively always never completely entirely solely every none sole".split())

UP = frozenset(
    """increase increases increased increasing increment higher high more greater elevate elevates elevated
    elevation enhance enhances enhanced enhancing promote promotes promoted promoting raise raises raised raising
    stimulate stimulates stimulated activate activates activated activation induce induces induced induction
    improve improves improved improvement better gain gains upregulate upregulates upregulated upregulation
    positive positively accelerate accelerates accelerated strengthen strengthens strengthened larger longer
    augment augments augmented boost boosts boosted rise rises rose amplify amplifies amplified facilitate
    facilitates facilitated grow grows grew double doubles doubled exacerbate exacerbates exacerbated worsen
    worsens worsened beneficial benefit benefits protective superior highest largest greatest longest best fast
    faster fastest quick quicker quickest quickly rapidly""".split()
)
DOWN = frozenset(
    """decrease decreases decreased decreasing lower low less fewer reduce reduces reduced reducing reduction
    diminish diminishes diminished inhibit inhibits inhibited inhibiting inhibition suppress suppresses
    suppressed suppression impair impairs impaired impairment attenuate attenuates attenuated prevent prevents
    prevented block blocks blocked downregulate downregulates downregulated downregulation worse poorer poor
    negative negatively delay delays delayed slow slows slowed weaken weakens weakened smaller shorter decline
    declines declined loss lose loses lost counteract counteracts counteracted abolish abolishes abolished
    limit limits limited fall falls fell drop drops dropped halve halves halved shrink shrinks repress represses
    repressed deplete depletes depleted harmful harm inferior lowest smallest shortest fewest worst slower
    slowest slowly""".split()
)


def inflected(lexicon: frozenset[str]) -> frozenset[str]:
    """``lexicon`` with each word's regular inflections ("lower" -> "lowers", "lowered", "lowering"), so a
    direction word is found in any of its forms; irregular ones ("rose", "fell") are listed in the lexicon."""
    forms = set(lexicon)
    for word in lexicon:
        stem = word[:-1] if word.endswith("e") else word
        forms.update({word + "s", stem + "ed", stem + "ing"})
    return frozenset(forms)


NOUNS = frozenset({"positives", "negatives"})
"""Inflections that name things, not a direction ("hard negatives", "false positives")."""
UP_FORMS = inflected(UP) - NOUNS
DOWN_FORMS = inflected(DOWN) - NOUNS

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


def _stem(word: str) -> str:
    """A light suffix stripper: enough for 'increases' / 'increased' / 'increasing' to meet."""
    word = word.lower().strip("'-")
    for suffix in ("ations", "ation", "ingly", "ings", "ing", "edly", "ies", "ied", "es", "ed", "ly", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def words(text: str) -> list[str]:
    """The words and numbers of ``text``, lower case."""
    return [w.lower() for w in _WORD.findall(text)]


def numbers(text: str) -> set[str]:
    """The numbers written in ``text``, thousands separators dropped ('1,000' -> '1000'), a percentage kept apart
    from the plain number ('50%' is not the 50 of 'top 50')."""
    found = set()
    for n in _NUMBER.findall(text):
        value, percent = n.rstrip("%").replace(",", ""), "%" if n.endswith("%") else ""
        found.add((value.rstrip("0").rstrip(".") if "." in value else value) + percent)
    return found


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


def _negated(tokens: Sequence[str]) -> bool:
    return any(t in NEGATION or t.endswith("n't") for t in tokens)


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


def _signs(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """``(position, sign)`` of each direction word, flipped by a negation just before it (within
    :data:`NEGATION_SCOPE`) or by "less": "reduces" -1, "does not reduce" +1 (it denies the decrease); and of each
    agreement coefficient's value (:func:`_agreement_sign`: "a kappa of 0.81" is high agreement)."""
    found = []
    for i, token in enumerate(tokens):
        if agreement := _agreement_sign(tokens, i):
            found.append((i, agreement))
            continue
        sign = _sign(token)
        if not sign or (token in GRADERS and i + 1 < len(tokens) and _sign(tokens[i + 1])):
            continue  # "more slowly" asserts what "slowly" does, "less harmful" the reverse (below)
        if i and tokens[i - 1] == "less":
            sign = -sign
        if _negated(tokens[max(0, i - NEGATION_SCOPE) : i]):
            sign = -sign
        found.append((i, sign))
    return found


COVARIATION = frozenset({"as", "when", "whenever"})
"""Words that, between two direction words, relate them: "latency falls as the budget grows" asserts that the two
move apart (the product of their signs, -1), not that the directions cancel."""

COVARIATION_SPAN = 8
"""At most this many words from the first direction word to the second for them to be read as one relation."""


def _polarity(signs: Sequence[tuple[int, int]]) -> int:
    """The direction the words assert (their :func:`_signs` summed): "reduces" -1, "does not reduce" +1, "no
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


def _anchors(tokens: Sequence[str], signs: Sequence[tuple[int, int]]) -> frozenset[str]:
    """The content stems within :data:`ANCHOR_WINDOW` words of the text's direction words (at ``signs``)."""
    near = {j for i, _ in signs for j in range(i - ANCHOR_WINDOW, i + ANCHOR_WINDOW + 1) if j != i}
    return frozenset(
        _stem(tokens[j]) for j in near if 0 <= j < len(tokens) and tokens[j] not in STOP and not _sign(tokens[j])
    )


def anchored_polarity(claim: Text, sentence: Text) -> int:
    """The direction the sentence asserts about what the claim's direction is about: only its direction words
    with one of the claim's :func:`_anchors` within :data:`ANCHOR_WINDOW` words count ("... against 0.57 for an
    encoder fifteen times larger, while encoding passages eight times faster" asserts "faster" of encoding
    passages; "larger" is about the encoder's size). The sentence's whole polarity when none is anchored."""
    tokens = sentence.tokens
    near = [
        (i, sign)
        for i, sign in sentence.signs
        if any(_stem(t) in claim.anchors for t in tokens[max(0, i - ANCHOR_WINDOW) : i + ANCHOR_WINDOW + 1])
    ]
    return _polarity(near) if near else sentence.polarity


COMPARING = ("than", "outperform", "surpass", "exceed", "beat")
"""Words a comparison pivots on ("A helps more than B", "A outperforms B"), the verbs in any inflection."""
COMPARED_SPAN = 6
"""The words after the pivot that name what a comparison is against ("... more than co-citation")."""


def _pivot(token: str) -> bool:
    return token == COMPARING[0] or token.startswith(COMPARING[1:])


def _sides(tokens: Sequence[str]) -> tuple[frozenset[str], frozenset[str]] | None:
    """The content stems before a text's one comparison pivot (:data:`COMPARING`) and within :data:`COMPARED_SPAN`
    words after it, direction words left out; ``None`` for a text with no comparison or with more than one."""
    at = [i for i, t in enumerate(tokens) if _pivot(t)]
    if len(at) != 1:
        return None
    i = at[0]
    return _compared(tokens[:i]), _compared(tokens[i + 1 : i + 1 + COMPARED_SPAN])


def _compared(tokens: Sequence[str]) -> frozenset[str]:
    """The content stems of one side of a comparison, its direction words left out."""
    return frozenset(_stem(t) for t in tokens if t not in STOP and len(t) > 1 and not _sign(t))


def swapped(claim: Text, sentence: Text) -> bool:
    """Whether the sentence compares what the claim compares with the two sides swapped: something the claim puts
    before its pivot ("than", "outperforms") the sentence puts after its own, and something after it before
    ("Co-citation helps more than bibliographic coupling" against "Bibliographic coupling helps more than
    co-citation"). The sentence then asserts the opposite direction of what the claim compares; "B is better than
    A" agrees with "A is worse than B"."""
    ours, theirs = _sides(claim.tokens), _sides(sentence.tokens)
    if ours is None or theirs is None:
        return False
    (left, right), (their_left, their_right) = ours, theirs
    return bool(left & their_right - their_left) and bool(right & their_left - their_right)


GRADERS = frozenset({"more", "less"})
"""Comparatives that grade the direction word after them rather than assert one of their own: "more slowly" is
slower (down), "less harmful" is up."""


def _sign(token: str) -> int:
    """+1 for a word asserting "more", -1 for "less", 0 otherwise."""
    return (token in UP_FORMS) - (token in DOWN_FORMS)


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
        if _negated([token]) and any(_stem(t) in stems for t in tokens[i + 1 : i + 2 + NEGATION_SCOPE]):
            return True
    return False


def _content(tokens: Sequence[str]) -> list[str]:
    """The stems of the content words among ``tokens`` (no stop words, no single letters), in order."""
    return [_stem(t) for t in tokens if t not in STOP and len(t) > 1]


def content_stems(text: str) -> frozenset[str]:
    """The content stems of ``text`` (what :attr:`Text.stems` holds, without the rest of :meth:`Text.of`)."""
    return frozenset(_content(words(text)))


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
    direction words applied (:func:`_polarity`)."""
    signs: tuple[tuple[int, int], ...]
    """Its direction words' positions and signs (:func:`_signs`)."""
    anchors: frozenset[str]
    """What its direction words are about (:func:`_anchors`)."""
    relation: int
    """The relation it states between two directions (:func:`covariation`), 0 when none."""

    @classmethod
    def of(cls, text: str) -> Text:
        tokens = tuple(words(text))
        content = _content(tokens)
        signs = tuple(_signs(tokens))
        return cls(
            raw=text,
            tokens=tokens,
            stems=frozenset(content),
            pairs=frozenset(zip(content, content[1:], strict=False)),
            numbers=frozenset(numbers(text)),
            negated=_negated(tokens),
            hedged=any(t in HEDGES for t in tokens),
            polarity=_polarity(signs),
            signs=signs,
            anchors=_anchors(tokens, signs),
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
