"""The shortest verbatim span of a quoted sentence that carries its answer.

A sentence chosen to answer a question repeats some of the question (its terms) and adds what the
question asks for. The answer is the added part: for a factoid question ("What dataset do they use?",
sentence "We use the Yelp Challenge dataset BIBREF2 for our fake review generation.") the span left
when the words the question already says are cut from both ends ("Yelp Challenge dataset").

:func:`answer_span` does this in three parameter-free steps, on the sentence's own characters (the
span is a slice of it, so it stays a verbatim quote):

1. cut the sentence into clauses at ``;``, ``:``, dashes and a comma that opens a subordinate or
   relative clause (``, which``, ``, while``, ``, but``, ...); plain commas are kept, since they
   separate the items of a list, which is often the answer;
2. keep the clause sharing the most distinct terms with the question (the first on ties): the part of
   the sentence that is about the question;
3. trim from both ends every token the question already gives (its terms), every function word
   (:data:`FUNCTION_WORDS`), placeholder (``BIBREF3``, ``INLINEFORM0``) and punctuation mark.

When nothing new is left (the sentence only restates the question) there is no span and the caller
quotes the sentence. :func:`number_span` answers a quantity question: the number that goes with the
question's terms, with the words it counts ("1,240 questions").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from lit3r.answers.sentences import Span, strip_span
from lit3r.reading.scoring import terms

FUNCTION_WORDS = frozenset(
    {"a", "an", "the", "this", "that", "these", "those", "such", "some", "any", "each", "every", "all", "both"}
    | {"we", "our", "ours", "us", "i", "my", "you", "your", "he", "she", "his", "her", "it", "its"}
    | {"they", "their", "them", "one", "which", "who", "whom", "whose", "what", "where", "when", "how"}
    | {"is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "has", "have", "had"}
    | {"can", "could", "will", "would", "shall", "should", "may", "might", "must"}
    | {"of", "in", "on", "at", "by", "for", "from", "to", "with", "into", "onto", "over", "under", "as"}
    | {"about", "between", "through", "via", "per", "than", "upon", "within", "across", "among", "using"}
    | {"and", "or", "but", "nor", "so", "also", "then", "thus", "hence", "however", "here", "there"}
    | {"not", "if", "while", "whereas", "since", "because", "although", "though", "namely"}
)
"""Closed-class words (determiners, pronouns, auxiliaries, prepositions, conjunctions): never an answer's edge."""

SUBORDINATORS = frozenset(
    {"which", "who", "whose", "where", "while", "whereas", "although", "though", "because", "since", "but"}
    | {"so", "thus", "hence", "yielding", "resulting", "leading", "allowing", "making", "whereby"}
)
"""Words that, after a comma, open a new clause rather than continue a list."""

_TOKEN = re.compile(r"\w+(?:[-'\u2019.,/]\w+)*%?|[^\w\s]")
_PLACEHOLDER = re.compile(r"(?:BIBREF|FIGREF|TABREF|SECREF|INLINEFORM|DISPLAYFORM|EQREF)\d*")
_CLAUSE_BREAK = re.compile(r"\s*(?:[;:]|\s[\u2013\u2014]\s|\s--?\s|\u2014)\s*")
_NUMBER = re.compile(
    r"\d+(?:[.,]\d+)*%?|(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty"
    r"|fifty|hundred|thousand|million|billion|half|twice|dozen)",
    re.IGNORECASE,
)
_PERCENT = re.compile(r"%|percent|per cent", re.IGNORECASE)
_OPEN, _CLOSE = "([{", ")]}"


@dataclass(frozen=True)
class Token:
    """A word or punctuation mark of a sentence, by its offsets."""

    start: int
    end: int
    text: str

    @property
    def is_word(self) -> bool:
        return self.text[0].isalnum() or self.text[0] == "_"


def tokenize(text: str, start: int = 0, end: int | None = None) -> list[Token]:
    """Words (inner hyphens, apostrophes and decimal points kept) and punctuation marks of ``text[start:end]``."""
    end = len(text) if end is None else end
    return [Token(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(text, start, end)]


def _given(tokens: list[Token], question_terms: set[str]) -> list[bool]:
    """For each token, whether it is a word the question already says (one of its terms after stemming)."""
    words = terms([t.text if t.is_word else "" for t in tokens]) if tokens else []
    return [bool(set(w) & question_terms) for w in words]


def _trimmable(tokens: list[Token], question_terms: set[str]) -> list[bool]:
    """Punctuation, function words, placeholders and the question's own terms: no answer starts or ends with one."""
    given = _given(tokens, question_terms)
    return [
        not t.is_word or t.text.lower() in FUNCTION_WORDS or bool(_PLACEHOLDER.fullmatch(t.text)) or g
        for t, g in zip(tokens, given, strict=True)
    ]


def clauses(text: str, start: int, end: int) -> list[Span]:
    """``text[start:end]`` cut at semicolons, colons, dashes and commas that open a subordinate clause."""
    cuts: list[Span] = [(m.start(), m.end()) for m in _CLAUSE_BREAK.finditer(text, start, end)]
    tokens = tokenize(text, start, end)
    for comma, following in zip(tokens, tokens[1:], strict=False):
        if comma.text == "," and following.text.lower() in SUBORDINATORS:
            cuts.append((comma.start, comma.end))
    spans, cursor = [], start
    for cut_start, cut_end in sorted(cuts):
        if cut_start >= cursor:
            spans.append((cursor, cut_start))
            cursor = cut_end
    spans.append((cursor, end))
    return [stripped for s, e in spans if (stripped := strip_span(text, s, e))[0] < stripped[1]]


def _balanced(text: str, start: int, end: int, limit: int) -> Span:
    """Brackets of ``text[start:end]`` closed: a missing closing one taken in (up to ``limit``), a stray one dropped."""
    for opening, closing in zip(_OPEN, _CLOSE, strict=True):
        piece = text[start:end]
        if piece.count(opening) > piece.count(closing):
            found = text.find(closing, end, limit)
            if found >= 0:
                end = found + 1
            elif piece.startswith(opening):
                start += 1
        elif piece.count(closing) > piece.count(opening) and piece.endswith(closing):
            end -= 1
    return start, end


def trim(text: str, span: Span, question_terms: set[str]) -> Span | None:
    """``span`` without the tokens an answer does not start or end with; ``None`` when nothing is left."""
    tokens = tokenize(text, *span)
    keep = [i for i, cut in enumerate(_trimmable(tokens, question_terms)) if not cut]
    if not keep:
        return None
    start, end = _balanced(text, tokens[keep[0]].start, tokens[keep[-1]].end, span[1])
    return (start, end) if start < end else None


def best_clause(text: str, span: Span, question_terms: set[str]) -> Span:
    """The clause of the sentence ``text[span]`` sharing the most distinct terms with the question (first on ties)."""
    parts = clauses(text, *span)
    if not parts:
        return span
    overlap = [len(set(counts) & question_terms) for counts in terms([text[s:e] for s, e in parts])]
    return parts[overlap.index(max(overlap))]


def answer_span(text: str, span: Span, question_terms: set[str]) -> Span | None:
    """The answer-carrying slice of the sentence ``text[span]`` (see the module docstring), or ``None``."""
    return trim(text, best_clause(text, span, question_terms), question_terms)


def _counted_words(tokens: list[Token], at: int) -> int:
    """Index after the words a number at ``tokens[at]`` counts: up to a function word, punctuation or number.

    A percentage (``12%``, ``12 %``, ``12 percent``) counts nothing after it.
    """
    if tokens[at].text.endswith("%"):
        return at + 1
    end = at + 1
    if end < len(tokens) and _PERCENT.fullmatch(tokens[end].text):
        return end + 1
    while end < len(tokens):
        token = tokens[end]
        if not token.is_word or token.text.lower() in FUNCTION_WORDS or _NUMBER.fullmatch(token.text):
            break
        end += 1
    return end


def number_span(text: str, span: Span, question: str, question_terms: set[str]) -> Span | None:
    """The number in ``text[span]`` that goes with the question's terms, with what it counts; ``None`` if none.

    Each number owns the stretch of the sentence between the number before it and the number after it;
    it scores the question terms in that stretch, and the best wins (the first on ties). A question about
    a percentage only takes numbers written with ``%`` or ``percent``.
    """
    tokens = tokenize(text, *span)
    given = _given(tokens, question_terms)
    wants_percent = bool(re.search(r"percent|proportion|%", question, re.IGNORECASE))
    numbers = [i for i, t in enumerate(tokens) if _NUMBER.fullmatch(t.text)]
    best: tuple[int, Span] | None = None
    for n, i in enumerate(numbers):
        stop = _counted_words(tokens, i)
        if wants_percent and not any(_PERCENT.search(t.text) for t in tokens[i:stop]):
            continue
        before = numbers[n - 1] + 1 if n else 0
        after = numbers[n + 1] if n + 1 < len(numbers) else len(tokens)
        score = sum(given[before:after])
        if best is None or score > best[0]:
            best = (score, (tokens[i].start, tokens[stop - 1].end))
    return None if best is None else best[1]


def covering_span(text: str, span: Span, question_terms: set[str], keep: Sequence[Span] = ()) -> Span | None:
    """The shortest slice of ``text[span]`` holding every question term it holds at all, and the ``keep`` spans.

    This is the part of a clause that states what a yes/no question asks about ("use BERT" of "In all
    experiments we use BERT as the encoder" for "Do they use BERT?"); ``keep`` (its negation cues) is
    taken in, so the quote never drops the word that makes it a "No". ``None`` when no term is there.
    """
    tokens = tokenize(text, *span)
    words = terms([t.text if t.is_word else "" for t in tokens]) if tokens else []
    found = [set(w) & question_terms for w in words]
    wanted = set().union(*found) if found else set()
    if not wanted:
        return None
    best: tuple[int, int] | None = None
    counts: dict[str, int] = {}
    left = 0
    for right, have in enumerate(found):
        for term in have:
            counts[term] = counts.get(term, 0) + 1
        while len(counts) == len(wanted):
            if best is None or right - left < best[1] - best[0]:
                best = (left, right)
            for term in found[left]:
                counts[term] -= 1
                if not counts[term]:
                    del counts[term]
            left += 1
    assert best is not None
    start, end = tokens[best[0]].start, tokens[best[1]].end
    for keep_start, keep_end in keep:
        start, end = min(start, keep_start), max(end, keep_end)
    return _balanced(text, start, end, span[1])
