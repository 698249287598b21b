"""Split an answer into claims: its sentences, each with the citation numbers its markers name.

A claim is one sentence of :attr:`Answer.text` (cut by :func:`lit3r.answers.split_sentences`, so
``e.g.``, ``et al.`` and decimals do not end one) with its ``[n]`` markers stripped. Markers belong to the
sentence they close:

* ``The F1 is 27.6 [1].`` (LLM style, marker before the period) and ``The F1 is 27.6. [1]`` (extractive
  style, marker after it) both give the claim ``The F1 is 27.6.`` citing 1;
* a marker run followed by anything but a lower-case word or a parenthesis ends its claim even without a
  period, so the quoted table rows ``BERT | 84.2 [1] + pretraining | 85.0 [1]`` are two claims, while
  ``X is 5 [1], and Y is 6 [2].`` is one.

Each claim keeps its span in the answer text (markers and trailing punctuation included) so a verifier
can drop or mark it. An abstaining answer has no claims; a sentence without a marker is a claim citing
nothing (it cannot be supported). The ``"<option> — "`` prefix of an extractive multiple-choice answer
names the choice, not a finding: it is left out of the first claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lit3r.answers import MARKER, OPTION_SEPARATOR, split_sentences
from lit3r.answers.validate import marker_numbers
from lit3r.models import ABSTENTION, Answer

_RUN = re.compile(rf"{MARKER.pattern}(?:[ \t]*{MARKER.pattern})*[.,;:!?]*")
_LEADING_RUN = re.compile(rf"\s*{_RUN.pattern}")
_CLOSING_RUN = re.compile(rf"{_RUN.pattern}(?=\s+[^\sa-z(])")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([.,;:!?])")
_HAS_WORD = re.compile(r"\w")


@dataclass(frozen=True)
class Claim:
    """One sentence of an answer.

    Attributes:
        text: The sentence without its markers, white space normalised (what a judge sees).
        citations: The citation numbers its markers name, in order, without repeats.
        start: Offset of the sentence in the answer text.
        end: End offset (exclusive), after its markers and their punctuation.
    """

    text: str
    citations: tuple[int, ...]
    start: int
    end: int


def is_abstention(answer: Answer) -> bool:
    """True for an answer that abstains (``sufficient`` False or an insufficiency message)."""
    return not answer.sufficient or " ".join(answer.text.split()) == ABSTENTION


def claim_text(text: str) -> str:
    """``text`` without markers, white space collapsed and no space left before punctuation."""
    return _SPACE_BEFORE_PUNCTUATION.sub(r"\1", " ".join(MARKER.sub(" ", text).split()))


def _cut_after_closing_markers(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """``text[start:end]`` cut after every marker run that a new sentence follows."""
    spans, cursor = [], start
    for run in _CLOSING_RUN.finditer(text, start, end):
        spans.append((cursor, run.end()))
        cursor = run.end()
    spans.append((cursor, end))
    return spans


def _pieces(text: str) -> list[tuple[int, int]]:
    """Sentence spans with every leading marker run moved to the end of the sentence before it."""
    spans = [p for s, e in split_sentences(text) for p in _cut_after_closing_markers(text, s, e)]
    merged: list[list[int]] = []
    for start, end in spans:
        lead = _LEADING_RUN.match(text, start, end)
        if lead and merged:
            merged[-1][1] = lead.end()
            start = lead.end()
        while start < end and text[start].isspace():
            start += 1
        if start < end:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def split_claims(answer: Answer) -> list[Claim]:
    """The claims of ``answer`` in reading order; none when it abstains."""
    if is_abstention(answer):
        return []
    text = answer.text
    prefix = f"{answer.option}{OPTION_SEPARATOR}" if answer.option else None
    claims = []
    for start, end in _pieces(text):
        if prefix and not claims and text.startswith(prefix, start):
            start += len(prefix)
        sentence = claim_text(text[start:end])
        if _HAS_WORD.search(sentence):
            numbers = tuple(dict.fromkeys(marker_numbers(text[start:end])))
            claims.append(Claim(text=sentence, citations=numbers, start=start, end=end))
    return claims
