"""Decomposition and verification of the retrieval rounds, and their model-free versions.

The seed (§2.1.2) uses an LLM for both steps. This module fixes their interfaces
(:class:`Decomposer`, :class:`Verifier`, :class:`HydeWriter`) and provides deterministic
implementations that need no model:

* :func:`deterministic_subqueries` / :class:`KeywordDecomposer`: the question itself plus up
  to three keyword subqueries (rule in :func:`deterministic_subqueries`); later rounds ask
  nothing new, since without a model there is nothing to learn from the missing note.
* :func:`gate_verifier` / :class:`GateVerifier`: the evidence is sufficient iff the best raw
  reranker score clears the calibrated relevance gate (:func:`lit3r.retrieval.gate.passes`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from lit3r.index.corpus_index import CorpusIndex
from lit3r.models import EvidenceChunk, PaperEvidence
from lit3r.retrieval import fusion
from lit3r.retrieval.gate import GateThreshold, passes
from lit3r.settings.retrieval import RetrieverSettings
from lit3r.textutil import fold_key, fold_space


class Verdict(BaseModel):
    """The verifier's report at the end of a round."""

    sufficient: bool = Field(description="Whether the pool holds enough evidence to answer the question.")
    papers_with_evidence: list[str] = Field(
        default_factory=list, description="Papers that contain evidence; they become Ranking B seeds."
    )
    missing: str = Field(default="", description="What is still missing; drives the next decomposition.")


@runtime_checkable
class Decomposer(Protocol):
    """Turns the question (and, after round 1, what was asked and what is missing) into subqueries."""

    name: str

    def decompose(self, question: str, previous: Sequence[str], missing: str, limit: int) -> list[str]:
        """Up to ``limit`` subqueries; ``previous`` is empty and ``missing`` is "" in round 1."""
        ...


@runtime_checkable
class Verifier(Protocol):
    """Judges whether the pool's top papers hold enough evidence."""

    name: str

    def verify(self, question: str, evidence: Sequence[PaperEvidence], best_score: float | None) -> Verdict:
        """The verdict on ``evidence``; ``best_score`` is the best raw reranker score so far (None unreranked)."""
        ...


@runtime_checkable
class HydeWriter(Protocol):
    """Writes a hypothetical passage answering a short query (HyDE); the passage becomes the dense query."""

    name: str

    def write(self, query: str) -> str:
        """A passage that would answer ``query``."""
        ...


STOP_WORDS = frozenset(
    """a about above across after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing done during each either for from further had has
    have having he her here hers him his how however i if in into is it its itself just many may me might more
    most much must my no nor not of off on once only or other our ours out over own per same she should so
    some such than that the their theirs them then there these they this those through to too under until
    up upon very via was we were what when where whether which while who whom whose why will with within
    without would yet you your paper papers work works study studies propose proposed approach report
    reported reports describe described show shown shows use used uses using according compared versus vs
    give given find found name named mention mentioned compare compares""".split()
)
"""Function words and question boilerplate that never make a keyword."""

_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”")
_WORD = re.compile(r"[A-Za-z0-9]+(?:[-_./'][A-Za-z0-9]+)*")


def _is_named(token: str, first: bool) -> bool:
    """A named term: an acronym or mixed-case name (BERT, SQuAD, ELMo), a letters+digits code (GPT-4, F1),
    or a capitalised word that is not the question's first word."""
    has_digit = any(ch.isdigit() for ch in token)
    has_alpha = any(ch.isalpha() for ch in token)
    if any(ch.isupper() for ch in token[1:]) or (has_digit and has_alpha):
        return True
    return token[0].isupper() and not first and token.lower() not in STOP_WORDS


def _anchors_and_words(question: str) -> tuple[list[str], list[str]]:
    """Quoted phrases and named terms (runs of adjacent named tokens joined), then the other content words."""
    anchors = [next(g for g in m.groups() if g).strip() for m in _QUOTED.finditer(question)]
    rest = _QUOTED.sub(" ", question)
    words: list[str] = []
    run: list[str] = []
    for position, match in enumerate(_WORD.finditer(rest)):
        token = match.group()
        if _is_named(token, first=position == 0 and not anchors):
            run.append(token)
            continue
        if run:
            anchors.append(" ".join(run))
            run = []
        if len(token) >= 3 and token.lower() not in STOP_WORDS and not token.isdigit():
            words.append(token.lower())
    if run:
        anchors.append(" ".join(run))
    return list(dict.fromkeys(anchors)), list(dict.fromkeys(words))


def named_terms(text: str) -> list[str]:
    """The quoted phrases and named terms of ``text`` (acronyms, mixed-case names, letter-digit codes, capitalised
    words after the first), adjacent named words joined: what names a subject of its own."""
    return _anchors_and_words(text)[0]


def _top_words(words: Sequence[str], n: int) -> list[str]:
    """The ``n`` longest words (longer words are rarer: a cheap IDF proxy), kept in question order."""
    chosen = set(sorted(words, key=lambda w: -len(w))[:n])  # stable: ties keep question order
    return [w for w in words if w in chosen]


def deterministic_subqueries(question: str, limit: int = 4) -> list[str]:
    """The question plus up to ``limit - 1`` keyword subqueries, without a model.

    Rule:

    1. *Anchors*: quoted phrases, then named terms in question order: acronyms and mixed-case
       names (BERT, SQuAD, ELMo), letter-digit codes (GPT-4, F1) and capitalised words other
       than the first word; adjacent named tokens form one term ("Penn Treebank").
    2. *Content words*: the remaining words of 3+ characters that are not stop words or
       question boilerplate (:data:`STOP_WORDS`); the four longest are kept, in question order.
    3. Two or more anchors: one subquery per anchor, ``"<anchor> <content words>"`` (a question
       naming several things is decomposed into one query per thing). Otherwise one keyword
       subquery: the anchor (if any) and the content words.

    Subqueries equal to the question or to an earlier subquery (case and spacing ignored) are
    dropped, so the list may be shorter than ``limit``; an empty question gives ``[]``.
    """
    question = " ".join(question.split())
    if not question or limit < 1:
        return []
    anchors, words = _anchors_and_words(question)
    context = " ".join(_top_words(words, 4))
    if len(anchors) >= 2:
        candidates = [f"{anchor} {context}".strip() for anchor in anchors]
    else:
        candidates = [" ".join([*anchors, context]).strip()]
    out = [question]
    seen = {fold_key(question)}
    for candidate in candidates:
        if candidate and fold_key(candidate) not in seen:
            seen.add(fold_key(candidate))
            out.append(candidate)
    return out[:limit]


def new_subqueries(proposed: Sequence[str], previous: Sequence[str], limit: int) -> list[str]:
    """Proposed subqueries not asked before (case and spacing ignored, :func:`lit3r.textutil.fold_key`), their
    spacing folded, empties and repeats dropped, at most ``limit``: the one dedupe rule of every round."""
    seen = {fold_key(q) for q in previous}
    out: list[str] = []
    for query in (fold_space(q) for q in proposed):
        if query and fold_key(query) not in seen:
            seen.add(fold_key(query))
            out.append(query)
    return out[: max(limit, 0)]


class KeywordDecomposer:
    """Model-free :class:`Decomposer`: round 1 gives :func:`deterministic_subqueries`; later rounds
    give nothing (no model to read the missing note), which ends the rounds."""

    name = "keywords"

    def decompose(self, question: str, previous: Sequence[str], missing: str, limit: int) -> list[str]:
        """Keyword subqueries in round 1 (``previous`` empty), ``[]`` afterwards."""
        return [] if previous else deterministic_subqueries(question, limit)


def gate_verifier(best_score: float | None, threshold: GateThreshold | float | None) -> Verdict:
    """Model-free verdict: sufficient iff ``best_score`` passes the gate (:func:`lit3r.retrieval.gate.passes`).

    No threshold (uncalibrated gate) is always sufficient; no score with a threshold never is.
    It cannot tell papers apart, so ``papers_with_evidence`` is empty (seeds are then the top
    paper of Ranking A alone).
    """
    if isinstance(threshold, int | float):
        threshold = GateThreshold.fixed(threshold)
    if passes(best_score, threshold):
        return Verdict(sufficient=True)
    if best_score is None:
        missing = "no reranker score: nothing was reranked"
    else:
        missing = f"no passage cleared the relevance gate (best score {best_score:.4g} < {threshold.value:.4g})"
    return Verdict(sufficient=False, missing=missing)


class GateVerifier:
    """Model-free :class:`Verifier` wrapping :func:`gate_verifier` with a fixed threshold."""

    name = "gate"

    def __init__(self, threshold: GateThreshold | float | None = None) -> None:
        self.threshold = threshold

    def verify(self, question: str, evidence: Sequence[PaperEvidence], best_score: float | None) -> Verdict:
        """The gate's verdict; ``question`` and ``evidence`` are not read."""
        return gate_verifier(best_score, self.threshold)


def verification_evidence(
    index: CorpusIndex, pool: Mapping[str, float], settings: RetrieverSettings
) -> list[PaperEvidence]:
    """The verifier's view: the top ``verify_papers`` pool papers, each with its best
    ``verify_chunks_per_paper`` chunks cut to ``verify_chunk_chars`` characters."""
    paper_of = {chunk: index.chunk_by_id[chunk].paper_id for chunk in pool}
    top = fusion.top_chunks_per_paper(
        pool, paper_of, papers=settings.verify_papers, per_paper=settings.verify_chunks_per_paper
    )
    out = []
    for paper_id, chunk_ids in top:
        chunks = [
            EvidenceChunk(chunk_id=c, score=pool[c], text=index.chunk_by_id[c].text[: settings.verify_chunk_chars])
            for c in chunk_ids
        ]
        paper = index.papers.get(paper_id)
        out.append(PaperEvidence(paper_id=paper_id, title=paper.title if paper else "", chunks=chunks))
    return out
