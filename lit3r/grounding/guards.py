"""Checks every claim passes before any judge sees it: its quotes stand in its chunks, and its words come from them.

Whatever judge runs after (exact, NLI, or the very model that wrote the answer), a claim is unsupported when

1. **a quote is not in its chunk**: each citation the claim names carries a quote, and the quote, normalised
   for spacing, case, quote marks, dashes and line-end hyphenation, must occur in the cited chunk's text;
2. **a number is not in its evidence**: every number the claim states must occur in the text of the chunks it
   cites (thousands separators ignored): a model that writes "9999 queries" citing a chunk that says 1,200
   fails here;
3. **its content words are not its evidence's**: at least ``min_overlap`` of the claim's content words (stemmed,
   stop words dropped: the BM25 tokeniser) must occur in the cited text. A sentence paraphrasing its source
   keeps most of the source's terms; an instruction a paper smuggled in ("run curl ... | sh") or an invented
   claim does not.

The cited text the checks (and the judges) read is the chunk with its instruction-like sentences left out
(:func:`lit3r.prompts.safety.defuse`): the models never saw those sentences, so no claim may rest on them.
These checks are deterministic and independent of any model, so the model that wrote an answer is never its only
judge.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from lit3r.grounding.judge import Judgement
from lit3r.grounding.judges.exact import normalise
from lit3r.index.bm25 import tokenize
from lit3r.models import Citation
from lit3r.prompts.safety import defuse
from lit3r.settings import BM25Settings

_HYPHEN_BREAK = re.compile(r"(?<=[^\W\d_])-\s+(?=[^\W\d_])")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+$")
_TERMS = BM25Settings()
_VERDICT_WORDS = re.compile(r"\b(?:yes|no|true|false)\b", re.IGNORECASE)
"""A yes/no answer's verdict is the reader's judgement, not words it took from the evidence."""


def loose(text: str) -> str:
    """``text`` for containment checks: :func:`~lit3r.grounding.judges.exact.normalise`d, hyphenation undone."""
    return normalise(_HYPHEN_BREAK.sub("", text.replace("\u00ad", "")))


def numbers(text: str) -> set[str]:
    """The numbers ``text`` states, thousands separators removed ('1,200' -> '1200'; '0.61' stays)."""
    found = set()
    for match in _NUMBER.finditer(text):
        number = match.group()
        found.add(number.replace(",", "") if _THOUSANDS.match(number) else number)
    return found


def quote_problem(citations: Sequence[Citation], chunk_text: Mapping[str, str]) -> str | None:
    """Why a claim's quotes fail (the first citation whose quote is missing or not in its chunk, instruction-like
    sentences left out), or None."""
    for citation in citations:
        text = chunk_text.get(citation.chunk_id)
        if text is None:
            return f"citation [{citation.number}] names a chunk that is not in the corpus"
        quote = loose(citation.quote)
        if not quote:
            return f"citation [{citation.number}] quotes nothing from its chunk"
        if quote not in loose(defuse(text)):
            return f"the quote of citation [{citation.number}] is not in its chunk"
    return None


def support_problem(claim: str, evidence: str, min_overlap: float) -> str | None:
    """Why the claim's words are not its evidence's (a number not stated there, too few content words), or None."""
    missing = sorted(numbers(claim) - numbers(evidence))
    if missing:
        return f"number {', '.join(missing[:3])} is not in the cited text"
    [claim_terms] = tokenize([_VERDICT_WORDS.sub(" ", claim)], _TERMS)
    terms = {term for term in claim_terms if not term.isdigit()}  # numbers were checked above, whole
    if not terms or min_overlap <= 0:
        return None
    [evidence_terms] = tokenize([_HYPHEN_BREAK.sub("", evidence)], _TERMS)
    found = terms & set(evidence_terms)
    if len(found) / len(terms) < min_overlap:
        return f"{len(found)} of its {len(terms)} content words are in the cited text (needs {min_overlap:.0%})"
    return None


def guard(
    claim: str,
    citations: Sequence[Citation],
    chunk_text: Mapping[str, str],
    evidence: str,
    min_overlap: float,
) -> Judgement | None:
    """The failing verdict of the first check a claim fails (quotes, numbers, content words), or None."""
    problem = quote_problem(citations, chunk_text) or support_problem(claim, evidence, min_overlap)
    return None if problem is None else Judgement(False, 0.0, problem)
