"""A question asking which languages, answered with the language names the paper states.

"Which languages do they experiment with?", "What language is the data in?", "What language pairs are explored?"
ask for names of one kind, as "how many" asks for a number: the answer is the names, "Dutch, Spanish, English,
German", not the sentence that holds them ("We perform NER experiments on two datasets: ..."), and a passage that
names no language does not answer. A word is a **language name** when it is capitalised (English capitalises the
names of languages), not a country's name, and the language names of ``langcodes`` (with its ``language_data``)
give it a language that has an ISO 639-1 code ("English", "Tibetan", "Bangla" and "Bengali"; a macrolanguage's
member counts as the macrolanguage: "Mandarin" is Chinese) or is spoken by at least :data:`MIN_SPEAKERS` people
("Cantonese", "Hokkien", "Filipino"); the thousands of small languages whose names are English words ("Even",
"Are", "Label", "Mono") are not read. A language pair's halves are read apart ("English-German").

:func:`naming_chunks` adds the papers' chunks naming a language to evidence that names none. :func:`names_span`
gives the stretch of a sentence from its first language name to its last ("Dutch, Spanish,
English and German"), a verbatim slice, so the answer stays a quote.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence

from lit3r.answers.sentences import Span
from lit3r.models import Chunk

PER_PAPER = 2
"""At most this many chunks naming a language added per paper read (:func:`naming_chunks`), as for counts
(:data:`lit3r.reading.counted.PER_PAPER`)."""

MIN_SPEAKERS = 10_000_000
"""A language without an ISO 639-1 code counts when at least this many people speak it (CLDR's figures)."""

_ASKS = re.compile(
    r"\b(?:what|which)\b(?:(?!\bmodels?\b)[^?])*?\blanguages?(?:\s*\(s\))?\b"
    r"(?!\s*(?:models?|modell?ing|representations?|understanding|processing|generation|inference|technolog|tasks?))",
    re.IGNORECASE,
)
_NOT_NATURAL = re.compile(r"\b(?:sign|programming|query|formal|markup|modell?ing|target)\s+languages?\b", re.I)
_WORD = re.compile(r"[A-Z][a-z]+(?:[-\u2013/][A-Z][a-z]+)*")
_PART = re.compile(r"[A-Z][a-z]+")


def asks_languages(question: str) -> bool:
    """Whether ``question`` asks which natural languages: "Which languages ...?", "What language is the data in?",
    "What language pairs ...?"; not "What language model ...?", "Which sign language ...?", "What programming
    language ...?"."""
    return bool(_ASKS.search(question)) and not _NOT_NATURAL.search(question)


@functools.cache
def is_language(word: str) -> bool:
    """Whether ``word`` is the English name of a language (see the module docstring): capitalised, four letters
    or more (shorter ones are as often surnames: "Wu", "Yue"), not the name of a country ("Germany", which the
    names data also maps to German), and a language with an ISO 639-1 code or :data:`MIN_SPEAKERS` speakers."""
    import langcodes
    from language_data.names import name_to_code

    if len(word) < 4 or not word[0].isupper() or not word[1:].islower():
        return False
    try:
        found = langcodes.find(word, language="en")
    except LookupError:
        return False
    if found.language is None or name_to_code("territory", word, "en") is not None:
        return False
    if len(langcodes.standardize_tag(found.language, macro=True)) == 2:
        return True
    try:
        return int(found.speaking_population()) >= MIN_SPEAKERS
    except (LookupError, ValueError):
        return False


def language_spans(text: str, start: int = 0, end: int | None = None) -> list[Span]:
    """The spans of the language names in ``text[start:end]``, in order (a pair's halves apart)."""
    end = len(text) if end is None else end
    found = []
    for match in _WORD.finditer(text, start, end):
        for part in _PART.finditer(text, match.start(), match.end()):
            if is_language(part.group()):
                found.append((part.start(), part.end()))
    return found


def names_span(text: str, sentence: Span) -> Span | None:
    """The stretch of ``text[sentence]`` from its first language name to its last; ``None`` when it names none."""
    spans = language_spans(text, *sentence)
    return (spans[0][0], spans[-1][1]) if spans else None


def naming_chunks(evidence: Sequence[Chunk], paper_chunks: Mapping[str, Sequence[Chunk]], question: str) -> list[Chunk]:
    """``evidence``, then, for a question asking which languages whose evidence names none, the first
    :data:`PER_PAPER` chunks of each paper read (``paper_chunks``: in reading order) that name one; the same list
    otherwise. Retrieval ranks chunks by the question's words ("languages", "experiment"), and the passage listing
    the languages ("the CoNLL data in Dutch, Spanish, ...") may share few of them, as a paper's count may not
    (:func:`lit3r.reading.counted.counting_chunks`)."""
    if not asks_languages(question) or any(language_spans(chunk.text) for chunk in evidence):
        return list(evidence)
    present = {chunk.id for chunk in evidence}
    added: list[Chunk] = []
    for paper in dict.fromkeys(chunk.paper_id for chunk in evidence):
        found = [c for c in paper_chunks.get(paper, ()) if c.id not in present and language_spans(c.text)]
        added += found[:PER_PAPER]
    return [*evidence, *added]
