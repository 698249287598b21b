"""The words the claim check reads: tokens, light stems, numbers, negation, hedges and direction lexicons.

Shared by the offline stance features (:mod:`lit3r.grounding.stance_features`), the directions they read
(:mod:`lit3r.grounding.directions`), the subject check and the LLM verdict's quote checks; no model, no download.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

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
    faster fastest quick quicker quickest quickly rapidly outperform outperforms outperformed surpass surpasses
    surpassed exceed exceeds exceeded beat beats""".split()
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


def stem_of(word: str) -> str:
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


def negates(tokens: Sequence[str]) -> bool:
    return any(t in NEGATION or t.endswith("n't") for t in tokens)


def content_words(tokens: Sequence[str]) -> list[str]:
    """The stems of the content words among ``tokens`` (no stop words, no single letters), in order."""
    return [stem_of(t) for t in tokens if t not in STOP and len(t) > 1]


def content_stems(text: str) -> frozenset[str]:
    """The content stems of ``text`` (what :attr:`Text.stems` holds, without the rest of :meth:`Text.of`)."""
    return frozenset(content_words(words(text)))
