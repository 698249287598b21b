"""What form of answer a question asks for, read from the question's wording alone (no model).

The offline reader quotes; the form decides how much it quotes and whether a "Yes"/"No" comes first:

* ``boolean``: a polar question. It opens with an auxiliary or modal verb (``Is``, ``Are``, ``Was``, ``Were``,
  ``Do``, ``Does``, ``Did``, ``Can``, ``Could``, ``Has``, ``Have``, ``Had``, ``Will``, ``Would``, ``Should``,
  ``May``, ``Might``, ``Must``, ``Shall``), possibly after a short lead-in ending in a comma ("In the
  experiments, do they ...?"), and offers no alternatives joined by ``or`` ("Is it X or Y?" asks to choose
  and is a ``span`` question). Answered "Yes" or "No", followed by the quoted words that decide it.
* ``quantity``: asks for an amount (``how many``, ``how much``, ``by how much``, ``how large``/``long``/...,
  ``what (is the) number``/``percentage``/``proportion``/``value``/..., also qualified: "what learning rate") or the
  value of an evaluation measure ("What recall did X reach?", :data:`MEASURES`): the quoted number with its unit.
* ``span``: a factoid question (``what``, ``which``, ``who``, ``whom``, ``whose``, ``where``, ``when``, also
  after a preposition: "In which ...", "On what ..."): the shortest quoted span that carries the answer.
* ``sentence``: the rest (``how`` asked of a method, ``why``, imperatives): whole quoted sentences.

A question may ask two things ("Which configuration was best, and what did the title field add?"):
:func:`question_parts` cuts it where ``and`` opens a second interrogative clause, so each part can be answered.

These are the answer types of the reading-comprehension literature (yes/no, number, factoid span,
free-form explanation) recognised by the question's opening words, the same cue every question
classifier starts from.
"""

from __future__ import annotations

import re
from typing import Literal

AnswerForm = Literal["boolean", "quantity", "span", "sentence"]

YES, NO = "Yes", "No"
YES_NO: tuple[str, str] = (YES, NO)
"""The two implicit options of a yes/no question, as an answer's ``option`` names them."""

OPTION_SEPARATOR = " — "
"""Between the chosen option (or the Yes/No of a polar question) and its supporting sentence."""

AUXILIARIES = frozenset(
    {"is", "are", "was", "were", "am", "do", "does", "did", "can", "could", "has", "have", "had"}
    | {"will", "would", "should", "shall", "may", "might", "must"}
)
"""Verbs that open a polar question (subject-auxiliary inversion)."""

WH_WORDS = frozenset({"what", "which", "who", "whom", "whose", "where", "when"})
"""Interrogatives whose answer is a thing, a person, a place or a time: a factoid span."""

_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")
_LEAD_IN = re.compile(r"^[^,?]{1,60},\s*")
_ALTERNATIVE = re.compile(r"\bor\b(?!\s+not\b)", re.IGNORECASE)
_QUANTITY = re.compile(
    r"\bhow (?:many|much|large|big|long|often|high|low|far|fast|old)\b"
    r"|\bwhat (?:is |was |are |were )?(?:the )?(?:number|amount|size|percentage|percent|proportion|fraction|share"
    r"|rate|count|values?)\b",
    re.IGNORECASE,
)
MEASURES: dict[str, str] = {
    "accuracy": r"accura(?:cy|cies|te)",
    "precision": r"precision|P@\d+",
    "recall": r"recall|R@\d+",
    "f1": r"F-?1|F_1|F-?score|F-?measure",
    "bleu": r"BLEU",
    "rouge": r"ROUGE(?:-\w+)?",
    "meteor": r"METEOR",
    "perplexity": r"perplexit(?:y|ies)|PPL",
    "error rate": r"error rates?|[CW]ER",
    "auc": r"AUC|area under",
    "mrr": r"MRR|mean reciprocal rank",
    "ndcg": r"n?DCG",
    "exact match": r"exact match|EM",
}
"""Evaluation measures by the names a paper reports them under: "What recall ... did X reach?" asks for a value of
one (a quantity), and only a text naming that measure supplies it."""
_MEASURE_ALIASES = {"f1-score": "f1", "f-score": "f1", "f-measure": "f1"}
"""Other names a question gives a measure of :data:`MEASURES` by."""
_VARIANTS = {"rouge": r"rouge(?:-\w+)?"}
"""Measures named with a variant after a hyphen ("ROUGE-L")."""
_ASKED_MEASURES = sorted([*MEASURES, *_MEASURE_ALIASES], key=len, reverse=True)
_MEASURE_QUESTION = re.compile(
    r"\b(?:what|which)\s+(?:is\s+|was\s+|are\s+|were\s+)?(?:the\s+|their\s+|its\s+)?(?:[\w-]+\s+)?"
    rf"({'|'.join(_VARIANTS.get(m, re.escape(m)) for m in _ASKED_MEASURES)})(?![\w-])",
    re.IGNORECASE,
)
"""A question asking for a measure's value: "what" or "which", at most one word, then the measure ("ROUGE-L")."""
_QUALIFIED = re.compile(
    r"\bwhat\s+(?:is\s+|was\s+|are\s+|were\s+)?(?:the\s+|their\s+|its\s+)?([^\W\d_][\w-]*)\s+"
    r"(?:number|amount|size|percentage|proportion|fraction|share|rate|count|value)s?\b",
    re.IGNORECASE,
)
GENERIC_QUALIFIERS = frozenset(
    {"the", "their", "its", "a", "an", "this", "that", "average", "mean", "median", "total", "overall", "exact"}
    | {"final", "maximum", "minimum", "approximate", "typical", "expected", "relative", "absolute", "reported"}
    | {"estimated", "same", "new", "best", "optimal", "actual"}
)
"""Words that qualify any quantity ("the average number", "the total size"): they do not name which one is asked."""
_TIME_QUESTION = re.compile(
    r"^\s*(?:when\s+(?:is|are|was|were|did|does|do|will|has|have|had)\b|(?:in\s+)?(?:what|which)\s+(?:year|decade|"
    r"century|month)\b)",
    re.IGNORECASE,
)
_PREPOSITIONS = frozenset({"in", "on", "at", "by", "for", "from", "to", "with", "of", "under", "over", "among"})
_NEGATED_QUESTION = re.compile(r"^\s*\w+n't\b|^\s*\w+\s+(?:\w+\s+){0,3}not\b", re.IGNORECASE)


_SECOND_ASK = re.compile(
    r"(?:,\s*|\s+)and\s+(?=(?:how|what|which|who|whom|whose|where|when|why|whether)\b)", re.IGNORECASE
)


def question_parts(question: str) -> list[str]:
    """The asks of a question: two when ``and`` opens a second interrogative clause ("How many questions does it
    hold, and how many are unanswerable?"), else the question alone. A polar question stays whole (its "and"
    joins what it asks about), and so does a part of fewer than two words."""
    match = _SECOND_ASK.search(question)
    if match is None or answer_form(question) == "boolean":
        return [question]
    first, second = question[: match.start()].strip(), question[match.end() :].strip()
    if len(_WORD.findall(first)) < 2 or len(_WORD.findall(second)) < 2:
        return [question]
    return [first.rstrip("?,; ") + "?", second[0].upper() + second[1:]]


def _opening_words(question: str, n: int = 2) -> list[str]:
    """The first ``n`` words of the question, lower-cased, after a comma-closed lead-in if it has one."""
    words = [w.lower() for w in _WORD.findall(question)[:n]]
    lead = _LEAD_IN.match(question)
    if lead and words and words[0] not in AUXILIARIES | WH_WORDS | {"how", "why"}:
        words = [w.lower() for w in _WORD.findall(question[lead.end() :])[:n]]
    return words


def asked_measure(question: str) -> str | None:
    """The evaluation measure (a key of :data:`MEASURES`) whose value ``question`` asks for ("What recall at 10 did
    the dense encoder reach?" -> ``recall``; "What is the ROUGE-L score ...?" -> ``rouge``), or ``None``."""
    match = _MEASURE_QUESTION.search(question)
    if match is None:
        return None
    word = match.group(1).lower()
    return "rouge" if word.startswith("rouge") else _MEASURE_ALIASES.get(word, word)


def asked_qualifier(question: str) -> str | None:
    """The word naming which quantity a "what X rate/size/number/value ...?" question asks for ("What learning rate
    was used?" -> ``learning``, "What is the atomic number of gold?" -> ``atomic``), or ``None`` (none, or one of
    :data:`GENERIC_QUALIFIERS`: "What is the average number of ...?")."""
    match = _QUALIFIED.search(question)
    word = match.group(1).lower() if match else ""
    if not word or word in GENERIC_QUALIFIERS or word in AUXILIARIES:  # "What does size 0 mean ...?" asks no size
        return None
    return word


_PAPERS_QUESTION = re.compile(
    r"^\W*(?:(?:in|from|of)\s+)?(?:(?:which|what)\s+(?:of\s+the\s+)?(papers?|works?|articles?|publications?)"
    r"|which\s+(?:of\s+the\s+)?(stud(?:y|ies)))\b",
    re.IGNORECASE,
)
"""A which-paper question; "what studies" is left out ("What studies okapi saturation?" asks what does)."""


def asked_papers(question: str) -> Literal["one", "many"] | None:
    """Whether ``question`` asks which paper ("Which paper introduced LocatorQA?": ``"one"``) or which papers
    ("Which papers use reciprocal rank fusion?": ``"many"``) say something, rather than what they say."""
    match = _PAPERS_QUESTION.search(question)
    if match is None:
        return None
    word = (match.group(1) or match.group(2)).lower()
    return "many" if word.endswith("s") else "one"


def asks_time(question: str) -> bool:
    """Whether ``question`` asks for a time ("When was the corpus collected?", "In which year ...?"); "When the
    baseline fails, does ...?" does not."""
    return bool(_TIME_QUESTION.search(question))


def answer_form(question: str) -> AnswerForm:
    """The form of answer ``question`` asks for (see the module docstring)."""
    if _QUANTITY.search(question) or asked_measure(question) or asked_qualifier(question):
        return "quantity"
    words = _opening_words(question)
    if not words:
        return "sentence"
    first = words[0]
    if first in AUXILIARIES or first.endswith("n't"):
        return "span" if _ALTERNATIVE.search(question) else "boolean"
    if first in WH_WORDS or (first in _PREPOSITIONS and len(words) > 1 and words[1] in WH_WORDS):
        return "span"
    return "sentence"


def is_negated(question: str) -> bool:
    """Whether a polar question is asked in the negative ("Don't they ...?", "Is it not ...?")."""
    return bool(_NEGATED_QUESTION.search(question))


def implicit_options(question: str) -> tuple[str, ...]:
    """The options a question offers by its form alone: ``("Yes", "No")`` for a polar question, else none."""
    return YES_NO if answer_form(question) == "boolean" else ()
