"""Yes or No from the sentence that decides a polar question: does it negate what it says?

The reader answers a yes/no question with the sentence that best matches it (the one it quotes). That
sentence says what the question asks about (it shares the question's terms); whether it affirms or denies
it is marked in English by a negation cue. The cues are the closed classes the negation-annotation
literature lists (NegEx; the *SEM 2012 shared task on negation cues):

* syntactic negators: ``not``, ``no``, ``never``, ``none``, ``nor``, ``neither``, ``nothing``, ``nobody``,
  ``nowhere``, ``without``, ``cannot`` and every ``n't`` contraction;
* lexical negators, verbs and nouns whose meaning is the absence of what follows: ``lack``, ``absence``,
  ``fail to``, ``unable``, ``instead of``, ``rather than``.

The rule: the answer is "No" when exactly one of the question and the sentence is negated, else "Yes" (a negated
question "Don't they ...?" answered by a negated sentence is a "Yes" to the question's content). A cue that denies
only its object ("X rather than Y", "X instead of Y", "X without Y") negates the sentence for the question only when
some of the question's terms stand in its object: the words after it up to the next comma, semicolon, colon,
bracket or dash ("Verification alone, without further rounds, halves the rate of unsupported claims" denies
further rounds, not the reduction). Expressions that contain a cue but do not negate (``not only``, ``no
longer than``, ``no more than``, ``whether or not``, ``if not``, ``not to mention``) are not cues. There is no
parameter.
"""

from __future__ import annotations

import re

from lit3r.answers.question import NO, YES, is_negated
from lit3r.reading.scoring import query_terms, terms

_CUES = re.compile(
    r"\b(?:not|no|never|none|nor|neither|nothing|nobody|nowhere|without|cannot|unable|lacks?|lacking|lacked"
    r"|absence|fail(?:s|ed)? to|instead of|rather than)\b"
    r"|\b\w+n't\b|\b\w+n\u2019t\b",
    re.IGNORECASE,
)
_OBJECT_SCOPED = re.compile(r"instead of|rather than|without", re.IGNORECASE)
_OBJECT_END = re.compile(r"[,;:()\[\]\u2013\u2014]|\s-\s")
"""Where the object of an object-scoped cue ends: the phrase it governs is closed by punctuation."""
_NOT_NEGATING = re.compile(
    r"\bnot only\b|\bnot just\b|\bno (?:longer|more|less|fewer) than\b|\bwhether or not\b|\bif not\b"
    r"|\bnot to mention\b|\bno doubt\b",
    re.IGNORECASE,
)


def cue_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Offsets of the negation cues in ``text[start:end]``, in order (expressions that only look negative left out)."""
    end = len(text) if end is None else end
    kept = _NOT_NEGATING.sub(lambda m: " " * len(m.group(0)), text[start:end])
    return [(start + m.start(), start + m.end()) for m in _CUES.finditer(kept)]


def negation_cues(sentence: str) -> list[str]:
    """The negation cues of ``sentence``, in order (expressions that only look negative left out)."""
    return [sentence[s:e] for s, e in cue_spans(sentence)]


def is_negative(sentence: str) -> bool:
    """Whether ``sentence`` carries a negation cue."""
    return bool(negation_cues(sentence))


def denies_asked(question: str, sentence: str) -> bool:
    """Whether the deciding sentence negates what the question asks: it carries a negation cue, other than one that
    denies only its object ("rather than", "instead of", "without") whose object holds none of the question's terms.
    "X rather than Y" affirms X and denies Y: "We fuse rankings rather than scores" answers "Do they fuse rankings?"
    with Yes and "Do they fuse scores?" with No; "The reranker repeats the terms without answering" still reranks.
    The object runs to the next comma, semicolon, colon, bracket or dash (:data:`_OBJECT_END`)."""
    asked = query_terms(question)
    for start, end in cue_spans(sentence):
        if not _OBJECT_SCOPED.fullmatch(sentence[start:end]):
            return True
        closed = _OBJECT_END.search(sentence, end)
        if not asked or asked & set(terms([sentence[end : closed.start() if closed else len(sentence)]])[0]):
            return True
    return False


def yes_or_no(question: str, sentence: str) -> str:
    """The answer "No" when exactly one of the question and the deciding sentence is negated (the sentence as
    :func:`denies_asked` reads it), else "Yes"."""
    return NO if is_negated(question) != denies_asked(question, sentence) else YES
