"""What the verdict model (:mod:`lit3r.reading.verdict`) reads in the evidence: cue counts and words.

Two kinds of input, both computed from the question and the evidence units the reader is given:

* **cue features** (:func:`cue_features`, named by :func:`cue_names`): for a few groups of units (the best
  matching ones, all of them, the *result* units and the best matching of those), the share that carries a
  cue of each closed class of :data:`CUES` (no-effect phrasings of clinical abstracts, negation cues of
  :mod:`lit3r.reading.polarity`, hedges as in the BioScope guidelines, significance reports, changes,
  numbers); the p-values of the results read as numbers (how many are below 0.05, how many not); whether the
  clause of the best matching result sentence that holds the question's terms is negated (negation scopes
  over its clause); a few cues of the question's own wording; the question's coverage.
* **words** (:func:`text_fields`, :func:`tokens`): the question's words and the result units' words and word
  pairs, weighted by tf-idf (:class:`TermWeights`), for a strongly regularised bag-of-words part of the model.

The *result* units are those of the chunks whose section heading names results or findings (where an abstract
reports what was found); without such a heading, the last :data:`TAIL` units in document order (abstracts end
with their results). Document order is the chunk's ordinal in its paper, whatever order the evidence came in.
Text inside the evidence is data: it is only counted.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from lit3r.answers.question import is_negated
from lit3r.reading.polarity import denies_asked, negation_cues
from lit3r.reading.quotes import Candidate
from lit3r.reading.scoring import query_terms
from lit3r.reading.spans import best_clause

TOP = 3
"""How many best-matching units the ``top`` group reads."""
RESULTS_TOP = 2
"""How many best-matching result units the ``results_top`` group reads."""
TAIL = 3
"""How many closing units (document order) stand for the results when no section heading names them."""
GROUPS = ("top", "best", "all", "results", "results_top")

_I = re.IGNORECASE
CUES: dict[str, re.Pattern[str]] = {
    "no_effect": re.compile(
        r"\bno (?:statistically )?(?:significant |significantly )?(?:difference|association|effect|correlation|change"
        r"|relationship|benefit|improvement|increase|decrease|reduction|impact|evidence|advantage|role)s?\b"
        r"|\bnot (?:statistically )?(?:significantly )?(?:different|associated|correlated|related|affected|improved"
        r"|increased|reduced|changed|predictive|superior|significant)\b"
        r"|\b(?:did|does|do|was|were|is|are) not (?:significantly )?(?:differ|improve|increase|reduce|change|affect"
        r"|predict|correlate|influence|show|reach|find|alter)\w*\b|\bfailed to\b|\bneither\b"
        r"|\bsimilar\b|\bcomparable\b",
        _I,
    ),
    "negation": re.compile(r"$^"),  # counted with polarity.negation_cues, see has_cue
    "hedge": re.compile(
        r"\b(?:may|might|could|possibly|potentially|perhaps|suggests?|suggested|suggesting|appears?|seems?"
        r"|unclear|uncertain|unknown|inconclusive|controversial|remains?|limited|further (?:studies|research|work"
        r"|investigation)|larger|trend|tended|marginal(?:ly)?|borderline|preliminary|warrant\w*|needed)\b",
        _I,
    ),
    "significant": re.compile(
        r"\bsignificant(?:ly)?\b|\bp\s*[<\u2264]\s*0?\.0\d*|\bp\s*=\s*0?\.0[0-4]\d*|\b(?:associated|correlated) with\b"
        r"|\bindependent(?:ly)? (?:predictor|risk|associated)\b|\bodds ratio\b|\bOR\b|\bhazard ratio\b",
        _I,
    ),
    "nonsignificant": re.compile(
        r"\bp\s*[>\u2265]\s*0?\.0[5-9]|\bp\s*=\s*0?\.(?:0[5-9]|[1-9])\d*|\bn\.?s\.?\b|\bnot significant\b"
        r"|\bnon-?significant\b|\binsignificant\b",
        _I,
    ),
    "change": re.compile(
        r"\b(?:increase[sd]?|decrease[sd]?|reduce[sd]?|reduction|improve[sd]?|improvement|higher|lower|greater"
        r"|better|worse|more|less|fewer|superior|inferior|elevated|risk)\b",
        _I,
    ),
    "number": re.compile(r"\d"),
}
"""The cue classes; a unit has a class when one of its expressions occurs in it."""
QUESTION_CUES: dict[str, re.Pattern[str]] = {
    "q_compare": re.compile(r"\b(?:differ\w*|better|worse|than|versus|vs\.?|compared|superior|equal)\b", _I),
    "q_modal": re.compile(r"^\s*(?:can|could|may|might|should|would)\b", _I),
    "q_association": re.compile(r"\b(?:associated|association|correlat\w*|predict\w*|related|risk|factor)\b", _I),
}
RESULT_SECTION = re.compile(r"result|finding|outcome", _I)
"""A section heading that names what a study found."""

_P_VALUE = re.compile(
    r"\bp\s*(?:value\s*)?(<|>|=|\u2264|\u2265|&lt;|&gt;)\s*(?:or\s*=\s*)?(0?\.\d+|\d(?:\.\d+)?)(\s*[x\u00d7]\s*10)?",
    _I,
)
_NOT_SIGNIFICANT = re.compile(
    r"\bn\.?s\.?\b|\bnot (?:statistically )?significant|\bnon-?significant|\binsignificant", _I
)
_SIGNIFICANT = re.compile(r"(?<!not )(?<!non-)(?<!non)\b(?:statistically )?significant(?:ly)?\b", _I)
_TOKEN = re.compile(r"\b\w\w+\b")


def has_cue(kind: str, text: str) -> bool:
    """Whether ``text`` carries a cue of class ``kind`` (:data:`CUES`)."""
    if kind == "negation":
        return bool(negation_cues(text))
    return bool(CUES[kind].search(text))


def p_values(text: str) -> tuple[int, int]:
    """``(significant, not significant)``: the p-values reported in ``text`` below 0.05 and those at or above it
    ("p < 0.001", "P = .03", "p>0.05", "p < 2 x 10-6"); an inequality that says neither counts for neither."""
    significant = not_significant = 0
    for operator, number, power in _P_VALUE.findall(text):
        value = 0.0 if power else float(number)
        if operator in ("<", "\u2264", "&lt;"):
            significant += value <= 0.05
        elif operator in (">", "\u2265", "&gt;"):
            not_significant += value >= 0.05
        else:
            significant += value < 0.05
            not_significant += value >= 0.05
    return significant, not_significant


def ordinal(candidate: Candidate) -> int:
    """The chunk's position in its paper (the ``c<ordinal>`` of its id; 0 when the id has none)."""
    tail = candidate.chunk.id.rpartition("::c")[2]
    return int(tail) if tail.isdigit() else 0


def result_units(pool: Sequence[Candidate]) -> tuple[list[Candidate], bool]:
    """The result units in document order, and whether a section heading named them (else the closing units)."""
    ordered = sorted(pool, key=lambda c: (c.chunk.paper_id, ordinal(c), c.unit.start))
    named = [c for c in ordered if RESULT_SECTION.search(c.chunk.locator.section or "")]
    return (named, True) if named else (ordered[-TAIL:], False)


def cue_names() -> list[str]:
    """The cue features' names, in order."""
    names = [f"{group}_{kind}" for group in GROUPS for kind in CUES]
    names += ["p_significant", "p_not_significant", "p_share", "said_significant", "said_not_significant"]
    names += ["said_share", "best_clause_negated", "results_clause_negated", "q_negated", *QUESTION_CUES]
    return [*names, "coverage", "sentences", "results_section"]


def _share(n: int, m: int) -> float:
    """The smoothed share n / (n + m) (one half when both are zero)."""
    return (n + 1) / (n + m + 2)


def _clause_negated(question: str, question_terms: set[str], candidate: Candidate) -> bool:
    """Whether the clause of the unit that holds the most question terms denies what the question asks
    (:func:`~lit3r.reading.polarity.denies_asked`: a negation cue, an object-scoped one only when its object
    holds the question's terms)."""
    text, unit = candidate.chunk.text, candidate.unit
    start, end = best_clause(text, (unit.start, unit.end), question_terms)
    return denies_asked(question, text[start:end])


def cue_features(question: str, pool: Sequence[Candidate], scores: Sequence[float], coverage: float) -> np.ndarray:
    """One row of :func:`cue_names` for a question and its evidence units (``scores`` against the question;
    ``coverage``: the share of the question's terms the best unit holds)."""
    by_score = [pool[i] for i in sorted(range(len(pool)), key=lambda i: (-scores[i], i))]
    rank = {id(c): n for n, c in enumerate(by_score)}
    results, named = result_units(pool)
    groups = {
        "top": by_score[:TOP],
        "best": by_score[:1],
        "all": list(pool),
        "results": results,
        "results_top": sorted(results, key=lambda c: rank[id(c)])[:RESULTS_TOP],
    }
    row = []
    for group in GROUPS:
        texts = [c.text for c in groups[group]]
        row += [sum(has_cue(kind, t) for t in texts) / len(texts) if texts else 0.0 for kind in CUES]
    text = " ".join(c.text for c in results)
    significant, not_significant = p_values(text)
    said, said_not = len(_SIGNIFICANT.findall(text)), len(_NOT_SIGNIFICANT.findall(text))
    row += [math.log1p(significant), math.log1p(not_significant), _share(significant, not_significant)]
    row += [math.log1p(said), math.log1p(said_not), _share(said, said_not)]
    wanted = query_terms(question)
    row += [float(_clause_negated(question, wanted, by_score[0])) if by_score else 0.0]
    top = groups["results_top"]
    row += [sum(_clause_negated(question, wanted, c) for c in top) / len(top) if top else 0.0]
    row += [float(is_negated(question)), *(float(bool(p.search(question))) for p in QUESTION_CUES.values())]
    row += [coverage, math.log1p(len(pool)), float(named)]
    return np.asarray(row, dtype=float)


def text_fields(question: str, pool: Sequence[Candidate]) -> dict[str, str]:
    """The texts whose words the model weighs: the question, and the result units joined."""
    return {"question": question, "results": " ".join(c.text for c in result_units(pool)[0])}


FIELD_NGRAMS: dict[str, int] = {"question": 1, "results": 2}
"""The longest word n-gram each text field contributes (the results' word pairs hold "no difference")."""


def tokens(text: str, ngrams: int) -> list[str]:
    """The lower-cased words of ``text`` (two or more word characters), then its word pairs when ``ngrams`` is 2."""
    words = _TOKEN.findall(text.lower())
    return words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)] if ngrams > 1 else words


@dataclass(frozen=True)
class TermWeights:
    """A vocabulary with its idf weights: texts become L2-normalised sublinear tf-idf vectors."""

    vocabulary: list[str]
    idf: np.ndarray
    ngrams: int

    @classmethod
    def fit(cls, texts: Sequence[str], ngrams: int, min_df: int) -> TermWeights:
        """The terms in at least ``min_df`` of ``texts``, with the smoothed idf ln((1 + n) / (1 + df)) + 1."""
        df = Counter(t for text in texts for t in set(tokens(text, ngrams)))
        vocabulary = sorted(t for t, n in df.items() if n >= min_df)
        idf = np.array([math.log((1 + len(texts)) / (1 + df[t])) + 1.0 for t in vocabulary])
        return cls(vocabulary, idf, ngrams)

    @cached_property
    def _where(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.vocabulary)}

    def vector(self, text: str) -> np.ndarray:
        """The text's tf-idf vector over the vocabulary (1 + ln tf, times idf, L2-normalised)."""
        row = np.zeros(len(self.vocabulary))
        for term, count in Counter(tokens(text, self.ngrams)).items():
            if term in self._where:
                row[self._where[term]] = 1.0 + math.log(count)
        row *= self.idf
        norm = np.linalg.norm(row)
        return row / norm if norm else row
