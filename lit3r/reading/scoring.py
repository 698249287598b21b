"""The extractive reader's default sentence scorer: BM25 over the evidence sentences themselves.

``lexical_scores(question, sentences)`` scores each sentence with BM25 (``k1 = 1.2``,
``b = 0.75``) where the "collection" is ``sentences``: the idf of a term is
``log(1 + (N - df + 0.5) / (df + 0.5))`` over the N sentences (always positive), term
frequency saturates and long sentences are normalised, so a sentence scores by how many of
the question's rarer terms it contains, not by its length. Terms are the project's BM25 tokens
(:func:`lit3r.index.bm25.tokenize`: lower-cased, stop words removed, stemmed) plus numbers
kept whole (``1,240`` -> ``1240``, ``0.63``), which the BM25 tokeniser would cut into pieces.
Interrogatives and auxiliaries (``how``, ``many``, ``what``, ``does``, ...) are dropped from
the question: they say what kind of answer is wanted, not what it is about.

Numeric bonus: when the question asks for a quantity (``how many``, ``how much``, ``what
percentage``, ``what proportion``, ...), a sentence that already matches and contains a number
(digits or a number word such as ``twelve``) gets its score multiplied by ``1 + NUMBER_BONUS``;
for percentage questions only sentences with ``%`` or ``percent`` get it. A sentence with no
matching term always scores 0.

Count bonus: a "how many N" question asks for a count of N, so a matching sentence that counts N (a number, in
digits or words, followed within three words by N: "670 tweets", "a three-layer network", "1,240 questions")
gets ``COUNT_BONUS`` more on top of the numeric bonus; any number is weaker evidence than a count of what is
asked. A count qualified by a data split ("1,000 test questions") counts a part, and only counts for a question
that names a split itself.

Subject bonus (:func:`subject_factors`, when the reader knows the papers' titles): a unit of a paper whose title
holds a share ``s`` of the question's terms scores ``1 + SUBJECT_BONUS * s`` times as much. A question about a
named thing ("How many questions does LocatorQA contain?", "What candidate budget is recommended for
cross-encoder reranking?") is answered first by the paper about it, the one whose title names it, rather than by
a paper that mentions it in passing; within one paper every unit gets the same factor, so the order is unchanged.

Change bonus: when the question asks how something changed (a change verb: ``reduce``, ``increase``,
``improve``, ``halve``, ...), a matching sentence that states a change (a change word of the same closed class,
whatever its direction or form: "falls", "halves", "rose", or "from 18% to 6%") gets its score multiplied by
``1 + CHANGE_BONUS``: the question's verb is rarely the paper's ("How much did X reduce Y?" is answered by
"Y falls from 18% to 6%").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from lit3r.index.bm25 import idf as bm25_idf
from lit3r.index.bm25 import stem_word, tokenize
from lit3r.reading.conditions import SPLIT_WORDS
from lit3r.settings import BM25Settings

NUMBER_BONUS = 1.0
"""Relative score bonus for a matching sentence with a number, when the question asks for a quantity."""

COUNT_BONUS = 3.0
"""Further relative bonus for a sentence counting what a "how many N" question counts (:func:`count_bonus`)."""

QUESTION_WORDS = frozenset(
    {"how", "many", "much", "what", "which", "who", "whom", "whose", "when", "where", "why", "whether"}
    | {"do", "does", "did", "is", "are", "was", "were", "be", "been", "has", "have", "had", "can", "could"}
    | {"would", "should", "according", "reported", "report", "reports"}
)
"""Question words dropped from the query before scoring."""

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
_QUANTITY = re.compile(
    r"\bhow (?:many|much|large|big|long|often|high|low)\b"
    r"|\bwhat (?:is the |was the |are the )?(?:number|amount|percentage|percent|proportion|fraction|share|rate"
    r"|values?)\b",
    re.IGNORECASE,
)
_PERCENT_QUESTION = re.compile(r"\b(?:percentage|percent|per cent|proportion|share)\b|%", re.IGNORECASE)
_PERCENT = re.compile(r"%|\bper ?cent\b", re.IGNORECASE)
NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|million"
)
"""Numbers written as words, as the count, quantity and dimension patterns below read them."""
_DIGIT = re.compile(
    rf"\d|\b(?:{NUMBER_WORDS}|half|halves|halved|halving|twice|double[sd]?|doubling|triple[sd]?|dozen)\b",
    re.IGNORECASE,
)
_HOW_MANY = re.compile(
    r"\bhow many\s+(?:of\s+(?:the|these|those)\s+)?([^\W\d_][\w-]*(?:\s+[^\W\d_][\w-]*){0,3})", re.IGNORECASE
)
_NOT_COUNTED = frozenset(
    {"in", "of", "on", "for", "to", "from", "with", "by", "at", "per", "there", "they", "we", "and", "or"}
    | {"the", "a", "an", "their", "its", "our", "this", "these", "those", "that", "it", "he", "she", "you", "i"}
)
"""Words that end the counted phrase after "how many" (with :data:`QUESTION_WORDS`): "how many layers in ..."."""
_PLURALS = frozenset({"people", "children", "men", "women", "criteria", "phenomena", "corpora"})
"""Plural nouns without a final "s" (with those that have one, the end of the counted phrase; "data" and "media"
are left out: they modify as often as they are counted, "data pairs")."""
_COUNT = re.compile(
    rf"(?<![\w.])(?:\d+(?:,\d{{3}})*|{NUMBER_WORDS})(?![\w%.,]|\s*(?:%|per ?cent))((?:[\s-]+[^\W\d_][\w]*){{1,3}})",
    re.IGNORECASE,
)
"""A number (not a percentage) and the (up to) three words after it."""
_NUMBER_OF = re.compile(r"\b(?:numbers?|counts?)\s+of\s+([^\W\d_][\w-]*(?:\s+[^\W\d_][\w-]*){0,2})", re.IGNORECASE)
""""Number of N" (up to three words after "of"): a text stating numbers under it counts N (a table's caption)."""
CHANGE_BONUS = 1.0
"""Relative score bonus for a matching sentence stating a change, when the question asks about one."""
_CHANGE = re.compile(
    r"\b(?:reduc|decreas|lower|cut|fall|fell|drop|halv|declin|shrink|shrank|increas|rais|rise|rose|risen|improv"
    r"|gain|doubl|tripl|boost|grow|grew|outperform)\w*",
    re.IGNORECASE,
)
_FROM_TO = re.compile(r"\bfrom\s+\S*\d\S*\s+to\s+\S*\d", re.IGNORECASE)
SUBJECT_BONUS = 1.0
"""Relative score bonus for a unit of a paper whose title holds all of the question's terms (in proportion below)."""
K1 = 1.2
B = 0.75
_WORD = re.compile(r"[^\W\d_]+")

_SETTINGS = BM25Settings()
_COST = stem_word("cost", _SETTINGS)
_COST_WORD = re.compile(r"\bcost", re.IGNORECASE)


def _numbers(text: str) -> list[str]:
    """Numbers in ``text`` with thousands separators removed (``1,240`` -> ``1240``; ``0.63`` stays)."""
    out = []
    for match in _NUMBER.finditer(text):
        number = match.group(0)
        if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", number):
            number = number.replace(",", "")
        out.append(number)
    return out


def drop_question_words(text: str) -> str:
    """``text`` without interrogatives and auxiliaries."""
    return _WORD.sub(lambda m: " " if m.group(0).lower() in QUESTION_WORDS else m.group(0), text)


COST_MEASURES = frozenset(
    {"latency", "latencies", "runtime", "runtimes", "seconds", "minutes", "hours", "memory", "flops", "price", "prices"}
    | {"dollars", "usd"}
)
"""Words naming what a cost is measured in: a text naming one also holds the term "cost" ("What does it cost?" is
answered by "... at half the latency")."""
_COST_TERMS = frozenset(term for words in tokenize(sorted(COST_MEASURES), _SETTINGS) for term in words)
""":data:`COST_MEASURES` as scoring terms (stemmed once)."""


def terms(texts: Sequence[str], settings: BM25Settings = _SETTINGS) -> list[Counter[str]]:
    """The scoring terms of each text with their counts: stemmed content words plus whole numbers, and "cost" for
    a text naming a measure of cost (:data:`COST_MEASURES`)."""
    stripped = [_NUMBER.sub(" ", t) for t in texts]
    tokens = tokenize(stripped, settings) if stripped else []
    out = [Counter(words) + Counter(_numbers(text)) for words, text in zip(tokens, texts, strict=True)]
    for counter in out:
        if not _COST_TERMS.isdisjoint(counter):
            counter[_COST] += 1
    return out


def query_terms(question: str, settings: BM25Settings = _SETTINGS) -> set[str]:
    """The distinct terms of a question, without question words ("cost" only when the question says it: naming
    a measure of cost asks for that measure)."""
    found = set(terms([drop_question_words(question)], settings)[0])
    if _COST in found and not _COST_WORD.search(question):
        found.discard(_COST)
    return found


def idf(sentence_terms: Sequence[Counter[str]]) -> dict[str, float]:
    """BM25 idf of every term over the given sentences (always positive)."""
    n = len(sentence_terms)
    df = Counter(term for ts in sentence_terms for term in ts)
    return {term: bm25_idf(d, n) for term, d in df.items()}


def bm25(query: set[str], sentence: Counter[str], weights: dict[str, float], avg_length: float) -> float:
    """BM25 score of one sentence for the query terms."""
    norm = K1 * (1.0 - B + B * sum(sentence.values()) / avg_length) if avg_length else K1
    return sum(weights[t] * sentence[t] * (K1 + 1.0) / (sentence[t] + norm) for t in query if t in sentence)


def states_quantity(text: str) -> bool:
    """Whether ``text`` states a quantity: a number in digits or words ("twelve", "halves", "twice")."""
    return bool(_DIGIT.search(text))


def number_bonus(question: str, sentence: str) -> float:
    """The factor a matching sentence's score is multiplied by (1 unless the question asks for a quantity)."""
    if not _QUANTITY.search(question):
        return 1.0
    wanted = _PERCENT if _PERCENT_QUESTION.search(question) else _DIGIT
    if not wanted.search(sentence):
        return 1.0
    return 1.0 + NUMBER_BONUS + count_bonus(question, sentence) + dimension_bonus(question, sentence)


@lru_cache(maxsize=1024)
def counted_noun(question: str) -> str | None:
    """The stem of what a "how many N ..." or "how many of the N ..." question counts ("How many different
    languages are covered?" -> ``languag``), or ``None`` ("How many of them ...?")."""
    match = _HOW_MANY.search(question)
    if not match:
        return None
    phrase: list[str] = []
    for word in match.group(1).lower().split():
        if word in QUESTION_WORDS or word in _NOT_COUNTED:
            break
        phrase.append(word)
        if _plural(word):  # "how many annotators labelled the audio ..." counts annotators
            break
    return stem_word(phrase[-1], _SETTINGS) if phrase else None


def _plural(word: str) -> bool:
    """Whether ``word`` reads as a plural noun: "layers", "GPUs", "people" (not "class", "corpus", "this")."""
    return word in _PLURALS or (len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")))


_PARTITIVE = re.compile(r"\bhow many of (?:the|these|those)\b", re.IGNORECASE)
_OF_THEM = re.compile(
    rf"(?<![\w.])(?:\d[\d,]*|{NUMBER_WORDS})\s+of\s+(?:them|these|those)\b",
    re.IGNORECASE,
)


def partitive(question: str) -> bool:
    """Whether ``question`` asks how many of a set ("In how many of the answers did ...?"): then "in 41 of them"
    counts what it asks to count."""
    return bool(_PARTITIVE.search(question))


def counts(sentence: str, noun: str, splits: bool = False, of_them: bool = False) -> bool:
    """Whether ``sentence`` counts ``noun`` (a stem): a number followed within three words by it ("1,240
    questions"), or numbers stated under "number of" it (a table captioned "Number of questions per split"), or, with
    ``of_them`` (a "how many of the N" question: :func:`partitive`), "<number> of them". A count qualified by a data
    split ("1,000 test questions") counts only when ``splits`` (the question names one)."""
    if of_them and _OF_THEM.search(sentence):
        return True
    found = [m.group(1) for m in _COUNT.finditer(sentence)]
    if _NUMBER.search(sentence):
        found += [m.group(1) for m in _NUMBER_OF.finditer(sentence)]
    for phrase in found:
        words = re.split(r"[\s-]+", phrase.strip().lower())
        stems = [stem_word(w, _SETTINGS) for w in words]
        if noun in stems and (splits or not set(words[: stems.index(noun)]) & SPLIT_WORDS.keys()):
            return True
    return False


@lru_cache(maxsize=1024)
def names_split(question: str) -> bool:
    """Whether the question names a data split ("test", "training", ...)."""
    return bool(set(re.findall(r"[a-z]+", question.lower())) & SPLIT_WORDS.keys())


def count_bonus(question: str, sentence: str) -> float:
    """The further bonus of a sentence that counts what the question asks to count (0 otherwise)."""
    noun = counted_noun(question)
    if noun is None:
        return 0.0
    return COUNT_BONUS if counts(sentence, noun, names_split(question), partitive(question)) else 0.0


_NUMBER_WORD = rf"(?:\d[\d,.]*|{NUMBER_WORDS})"
DIMENSIONS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "memory": (
        re.compile(r"\b(?:memory|storage|disk|space|ram|footprint)\b", re.IGNORECASE),
        re.compile(r"\d[\d,.]*\s*(?:[KMGT]i?B|bytes?|[kmgt]ilobytes?|megabytes?|gigabytes?|terabytes?)\b"),
    ),
    "time": (
        re.compile(
            r"\bhow long\b.*\btakes?\b|\bhow much time\b|\b(?:latency|runtime|run time|duration)\b", re.IGNORECASE
        ),
        re.compile(
            rf"\b{_NUMBER_WORD}\s*(?:ms|milliseconds?|s|secs?|seconds?|min|minutes?|h|hours?|days?|weeks?)\b",
            re.IGNORECASE,
        ),
    ),
}
"""The dimensions a quantity question may ask for, each as (the question's words for it, a value in one of its
units): "How much memory ...?" asks for bytes ("316 MB"), "How long does encoding take?" for a time ("six
minutes")."""


def dimension_bonus(question: str, sentence: str) -> float:
    """The further bonus of a sentence stating a value in the dimension the question asks for (:data:`DIMENSIONS`;
    0 when it asks for none or the sentence states none): "How much memory do the vectors take?" prefers "occupy 316
    MB" to "encoding takes six minutes"."""
    for asked, value in DIMENSIONS.values():
        if asked.search(question):
            return COUNT_BONUS if value.search(sentence) else 0.0
    return 0.0


def change_bonus(question: str, sentence: str) -> float:
    """The factor a matching sentence's score is multiplied by (1 unless the question asks about a change)."""
    if not _CHANGE.search(question):
        return 1.0
    return 1.0 + CHANGE_BONUS if _CHANGE.search(sentence) or _FROM_TO.search(sentence) else 1.0


def lexical_scores(question: str, sentences: list[str]) -> list[float]:
    """Default scorer: BM25 over ``sentences`` with the numeric bonus (see the module docstring)."""
    query = query_terms(question)
    sentence_terms = terms(sentences)
    weights = idf(sentence_terms)
    avg_length = sum(sum(ts.values()) for ts in sentence_terms) / len(sentences) if sentences else 0.0
    scores = []
    for text, ts in zip(sentences, sentence_terms, strict=True):
        score = bm25(query, ts, weights, avg_length)
        scores.append(score * number_bonus(question, text) * change_bonus(question, text) if score else 0.0)
    return scores


def subject_factors(question: str, titles: Sequence[str]) -> list[float]:
    """For each title, the factor its paper's units are scored with: ``1 + SUBJECT_BONUS * share`` of the question's
    terms the title holds (1 for a question without terms)."""
    query = query_terms(question)
    if not query:
        return [1.0] * len(titles)
    return [1.0 + SUBJECT_BONUS * len(query & set(ts)) / len(query) for ts in terms(list(titles))]
