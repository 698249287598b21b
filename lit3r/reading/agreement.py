"""Whether the papers a question names agree on a value: "Do the sparse retrieval and rank fusion papers agree on
the recall at 10 of tuned BM25?"

Retrieval pools the chunks that match the whole question, so one paper's answering row can be missing, and a
yes/no reading of one sentence cannot compare two papers. :func:`agreement_answer` reads each named paper on its own
instead:

1. the question is "Do / Does / Did <names> agree on <topic>?" with at least two names joined by "and" or commas,
   and the topic names a value, not a clause ("agree on whether ..."; :func:`agreement_parts`);
2. each name is the paper whose title holds the largest share of the name's words, at least half of them, and no
   other title as many (:func:`named_papers`); a name that picks no paper, or two names one paper, and the question
   is answered as any other;
3. each paper's chunks are read by the offline reader for "How much is <topic>?" (a quantity question, so a unit
   stating a number is preferred), and the numbers of the units they quote compared: a number every quote states
   answers "Yes — <quote> [1] <quote> [2]", quotes that all state numbers but none in common answer "No — ...".
   A paper that does not answer, or a quote without a number, leaves the question to the reader.

The answer's words are the papers' own (verbatim quotes, one citation per paper) after the verdict. The synthesize
tool looks the names up among the papers retrieval found, so a question restricted to some papers compares only
those.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from lit3r.answers.question import OPTION_SEPARATOR
from lit3r.grounding.lexicon import numbers
from lit3r.models import Answer, Chunk
from lit3r.reading.assurance import genre_terms
from lit3r.reading.extractive import extractive_answer
from lit3r.reading.quotes import joined
from lit3r.reading.scoring import query_terms, terms

_AGREE = re.compile(
    r"^\s*(?:do|does|did)\s+(?P<names>.+?)\s+(?:agree|concur)\s+(?:on|about|over|in)\s+(?P<topic>.+?)\s*\??\s*$",
    re.IGNORECASE,
)
_NAMES = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*", re.IGNORECASE)
_NOT_A_VALUE = re.compile(r"(?:whether|that|if|how|why|what|which|who)\b", re.IGNORECASE)
"""A topic that opens a clause ("agree on whether ...") asks about a finding, not a value: not compared here."""
MIN_TITLE_SHARE = 0.5
"""A name picks the paper whose title holds at least this share of its words (and more than any other title)."""


def _name_terms(name: str) -> set[str]:
    """A name's words that can be in a title (less "the ... papers", "study", ...)."""
    return query_terms(name) - genre_terms()


def agreement_parts(question: str) -> tuple[list[str], str] | None:
    """The names and the topic of "Do <names> agree on <topic>?" (two names at least), or None."""
    match = _AGREE.match(question)
    if match is None:
        return None
    topic = match.group("topic")
    if _NOT_A_VALUE.match(topic):
        return None
    names = [n for n in _NAMES.split(match.group("names")) if _name_terms(n)]
    return (names, topic) if len(names) >= 2 else None


def named_papers(names: Sequence[str], titles: Mapping[str, str]) -> list[str] | None:
    """The paper each name picks (see the module docstring), or None when a name picks none or two names one."""
    ids = list(titles)
    title_terms = [set(ts) for ts in terms([titles[p] for p in ids])]
    picked: list[str] = []
    for name in names:
        wanted = _name_terms(name)
        shares = [len(wanted & ts) / len(wanted) for ts in title_terms]
        best = max(shares, default=0.0)
        if best < MIN_TITLE_SHARE or shares.count(best) > 1:
            return None
        picked.append(ids[shares.index(best)])
    return picked if len(set(picked)) == len(picked) else None


def _numbers(answer: Answer) -> set[str]:
    """The numbers an answer's quotes state, as the claim check reads them (``0.440`` is ``0.44``)."""
    return numbers(" ".join(q for c in answer.citations for q in (c.quotes or [c.quote])))


def agreement_answer(
    question: str, titles: Mapping[str, str], paper_chunks: Mapping[str, Sequence[Chunk]]
) -> Answer | None:
    """ "Yes — ..." or "No — ..." with each named paper's answering quote, or None (see the module docstring)."""
    parts = agreement_parts(question)
    if parts is None:
        return None
    names, topic = parts
    papers = named_papers(names, titles)
    if papers is None:
        return None
    asked = f"How much is {topic}?"  # a quantity question: units stating a number are preferred
    answers = [extractive_answer(asked, list(paper_chunks.get(p, ())), compound=False) for p in papers]
    if not all(a.sufficient and a.citations for a in answers):
        return None
    numbers = [_numbers(a) for a in answers]
    if not all(numbers):
        return None
    option = "Yes" if set.intersection(*numbers) else "No"
    chunks = {c.id: c for p in papers for c in paper_chunks[p]}
    both = joined(question, answers, chunks)
    confidences = [a.confidence for a in answers if a.confidence is not None]
    update = {"text": f"{option}{OPTION_SEPARATOR}{both.text}", "option": option, "answers_question": True}
    return both.model_copy(update={**update, "confidence": min(confidences) if confidences else None})
