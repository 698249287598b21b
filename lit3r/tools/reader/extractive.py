"""The offline default reader: answers made only of sentences quoted verbatim from the evidence.

No language model is involved and no word is invented. The evidence chunks are cut into units
(:mod:`lit3r.tools.reader.sentences`: sentences, table rows), every unit is scored against the
question (default :func:`lit3r.tools.reader.scoring.lexical_scores`, or any
``scorer(question, texts) -> scores`` such as a :class:`~lit3r.retrieval.rerankers.Reranker`'s
``score``), and the best few become the answer, each followed by the marker of its chunk.

A unit is eligible when its score is above ``min_score`` and, when the best score is positive,
at least ``relative_floor`` times the best score. Units containing a bracketed number (a paper's
own ``[12]`` reference) are never quoted, because they would read as this answer's citation
markers. Text inside chunks is data: it is scored like any other text and never changes what
the reader does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lit3r.models import Answer, Chunk, Citation
from lit3r.tools.reader.scoring import lexical_scores, query_terms, terms
from lit3r.tools.reader.sentences import Unit, chunk_units, split_sentences
from lit3r.tools.reader.validate import MARKER, insufficient_answer

Scorer = Callable[[str, list[str]], list[float]]
"""``scorer(question, texts) -> one score per text``, higher is better (e.g. ``Reranker.score``)."""

REDUNDANCY = 0.8
"""Two sentences whose term sets have at least this Jaccard similarity are redundant."""

OPTION_SEPARATOR = " — "
"""Between the chosen option and its supporting sentence in a multiple-choice answer."""


@dataclass(frozen=True)
class Candidate:
    """A unit of one evidence chunk, ready to score."""

    rank: int
    chunk: Chunk
    unit: Unit

    @property
    def text(self) -> str:
        """The verbatim unit text (what is quoted)."""
        return self.chunk.text[self.unit.start : self.unit.end]

    @property
    def scoring_text(self) -> str:
        """The unit with its context (a table row with caption and header), what the scorer sees."""
        return f"{self.text}\n{self.unit.context}" if self.unit.context else self.text


def candidates(evidence: Sequence[Chunk]) -> list[Candidate]:
    """Every quotable unit of the evidence, in evidence order then position."""
    found = [Candidate(rank, chunk, unit) for rank, chunk in enumerate(evidence) for unit in chunk_units(chunk)]
    return [c for c in found if not MARKER.search(c.text)]


def select(scored: list[tuple[Candidate, float]], k: int, min_score: float, relative_floor: float) -> list[Candidate]:
    """The best ``k`` eligible, non-redundant candidates, returned in evidence order then position."""
    if not scored or k <= 0:
        return []
    best = max(score for _, score in scored)
    floor = relative_floor * best if best > 0 else -math.inf
    eligible = [(c, s) for c, s in scored if s > min_score and s >= floor]
    eligible.sort(key=lambda cs: (-cs[1], cs[0].rank, cs[0].unit.start))
    chosen: list[Candidate] = []
    chosen_terms: list[set[str]] = []
    for (candidate, _), counts in zip(eligible, terms([c.text for c, _ in eligible]), strict=True):
        unit_terms = set(counts)
        if candidate.text in {c.text for c in chosen} or any(_redundant(unit_terms, t) for t in chosen_terms):
            continue
        chosen.append(candidate)
        chosen_terms.append(unit_terms)
        if len(chosen) == k:
            break
    return sorted(chosen, key=lambda c: (c.rank, c.unit.start))


def _redundant(a: set[str], b: set[str]) -> bool:
    """Whether two term sets overlap by at least :data:`REDUNDANCY` (Jaccard)."""
    return bool(a | b) and len(a & b) / len(a | b) >= REDUNDANCY


def render(question: str, chosen: list[Candidate], prefix: str = "") -> Answer:
    """The answer text ``"<sentence> [1] <sentence> [2]"`` and one citation per distinct chunk.

    A chosen unit of several sentences (a caption, a paragraph's closing lines) gets its marker after each
    of them, so every sentence of the answer is a claim that names its source. A chunk's quote runs from
    its first chosen unit to its last, so it is one verbatim slice.
    """
    numbers: dict[str, int] = {}
    spans: dict[str, tuple[Chunk, int, int]] = {}
    parts = []
    for candidate in chosen:
        chunk, unit = candidate.chunk, candidate.unit
        number = numbers.setdefault(chunk.id, len(numbers) + 1)
        _, start, end = spans.get(chunk.id, (chunk, unit.start, unit.end))
        spans[chunk.id] = (chunk, min(start, unit.start), max(end, unit.end))
        sentences = [candidate.text[s:e] for s, e in split_sentences(candidate.text)] or [candidate.text]
        parts.extend(f"{sentence} [{number}]" for sentence in sentences)
    citations = [
        Citation(number=numbers[cid], chunk_id=cid, paper_id=c.paper_id, locator=c.locator, quote=c.text[s:e])
        for cid, (c, s, e) in spans.items()
    ]
    return Answer(question=question, text=prefix + " ".join(parts), citations=citations, sufficient=True)


def _distinctive_terms(options: Sequence[str]) -> list[set[str]]:
    """Each option's terms minus those every option shares (all its terms when nothing is left)."""
    option_terms = [query_terms(o) for o in options]
    shared = set.intersection(*option_terms) if option_terms else set()
    return [(ts - shared) or ts for ts in option_terms]


def choose_option(
    question: str, options: Sequence[str], pool: list[Candidate], scorer: Scorer, min_score: float
) -> tuple[str, Candidate] | None:
    """The option best supported by a sentence that mentions it, and that sentence; ``None`` if none is.

    Each option is scored as ``question + option`` against every sentence; only sentences that
    contain one of the option's distinctive terms count as support. Ties go to the option given first.
    """
    texts = [c.scoring_text for c in pool]
    pool_terms = [set(counts) for counts in terms(texts)]
    best: tuple[float, str, Candidate] | None = None
    for option, distinctive in zip(options, _distinctive_terms(options), strict=True):
        scores = scorer(f"{question} {option}", texts)
        for candidate, score, unit_terms in zip(pool, scores, pool_terms, strict=True):
            if score > min_score and distinctive & unit_terms and (best is None or score > best[0]):
                best = (score, option, candidate)
    return None if best is None else (best[1], best[2])


def extractive_answer(
    question: str,
    evidence: Sequence[Chunk],
    *,
    options: Sequence[str] | None = None,
    max_sentences: int = 3,
    sufficient: bool = True,
    scorer: Scorer | None = None,
    min_score: float = 0.0,
    relative_floor: float = 0.5,
) -> Answer:
    """Answer ``question`` with sentences quoted verbatim from ``evidence`` (best first in ``evidence``).

    Args:
        question: The question.
        evidence: Chunks to answer from, best first; their order decides the order of the sentences.
        options: Multiple-choice options; the answer's ``option`` is then exactly one of them.
        max_sentences: At most this many sentences in a free-form answer.
        sufficient: ``False`` (e.g. from the verifier or the gate) abstains without reading.
        scorer: Sentence scorer, default :func:`~lit3r.tools.reader.scoring.lexical_scores`.
        min_score: A sentence must score above this to be used (lower it for scorers with negative scores).
        relative_floor: A sentence must score at least this fraction of the best score (when that is positive).

    Returns:
        A sufficient answer whose every sentence is a verbatim quote of a cited chunk, or the
        insufficient-evidence answer when ``sufficient`` is false or no sentence scores above ``min_score``.
    """
    pool = candidates(evidence) if sufficient else []
    if not pool:
        return insufficient_answer(question)
    scorer = scorer or lexical_scores
    if options:
        choice = choose_option(question, options, pool, scorer, min_score)
        if choice is None:
            return insufficient_answer(question)
        option, candidate = choice
        answer = render(question, [candidate], prefix=f"{option}{OPTION_SEPARATOR}")
        return answer.model_copy(update={"option": option})
    scores = scorer(question, [c.scoring_text for c in pool])
    chosen = select(list(zip(pool, scores, strict=True)), max_sentences, min_score, relative_floor)
    return render(question, chosen) if chosen else insufficient_answer(question)
