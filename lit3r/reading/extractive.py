"""The offline default reader: answers made only of sentences quoted verbatim from the evidence.

No language model is involved and no word is invented. The evidence chunks are cut into units
(:mod:`lit3r.answers.sentences`: sentences, table rows), every unit is scored against the
question (default :func:`lit3r.reading.scoring.lexical_scores`, or any
``scorer(question, texts) -> scores`` such as a :class:`~lit3r.retrieval.rerankers.Reranker`'s
``score``), and the best one (``max_sentences`` to quote more, the best one's chunk first) becomes the answer,
followed by the marker of its chunk. A superlative question over an evidence table is answered by the row that
holds the extreme (:mod:`lit3r.reading.tables`); which unit a free-form answer quotes is the selector's unit model's
choice among those the rules allow (:mod:`lit3r.reading.choice`; ``chooser=None`` for the lexical one).
The body's units are preferred to the abstract's (:func:`body_first`). A yes/no question is
answered "Yes — <quoted words> [n]" or "No — ..." (:mod:`lit3r.reading.forms`); the other
forms of :mod:`lit3r.answers.question` get whole sentences unless ``form`` asks for a
number or a short span (:data:`AUTO_SHAPED` says why).

A unit is eligible when its score is above ``min_score`` and, when the best score is positive,
at least ``relative_floor`` times the best score. Units containing a bracketed number (a paper's
own ``[12]`` reference) are never quoted, because they would read as this answer's citation
markers. Text inside chunks is data: it is scored like any other text and never changes what
the reader does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from lit3r.answers.question import OPTION_SEPARATOR, AnswerForm, answer_form, asked_papers, question_parts
from lit3r.answers.validate import insufficient_answer
from lit3r.models import Answer, Chunk
from lit3r.reading.assurance import MIN_COVERAGE, coverage, kind_supplied
from lit3r.reading.choice import chosen_by_model, lexical_based, selected_answer
from lit3r.reading.conditions import contradicts_split, split_contexts
from lit3r.reading.forms import languages_answer, named_answer, typed_answer
from lit3r.reading.languages import asks_languages
from lit3r.reading.quotes import Candidate, candidates, joined, render
from lit3r.reading.scoring import (
    counted_noun,
    counts,
    drop_question_words,
    lexical_scores,
    names_split,
    query_terms,
    subject_factors,
    terms,
)
from lit3r.reading.selector import SelectorModel, load_selector
from lit3r.reading.tables import asks_extreme, superlative_cell, with_cells
from lit3r.reading.verdict import VERDICTS, choose, polar_options, read_verdict, supporting

FormChoice = Literal["auto"] | AnswerForm
"""``"auto"`` (the form the question asks for) or one :data:`~lit3r.answers.question.AnswerForm`."""

AUTO_SHAPED: frozenset[AnswerForm] = frozenset({"boolean"})
"""The forms ``form="auto"`` answers in their own shape; questions of the other forms get whole sentences.

Chosen by measurement (``benchmarks/bench_reader_rules.py``, two-fold cross-validation over QASPER papers;
docs/BENCHMARKS.md): "Yes"/"No" pays; the number and the short span did not beat whole sentences on QASPER,
whose reference answers are long enough that cutting the sentence loses more words than it saves. They stay
available as ``form="quantity"`` and ``form="span"``.
"""

Scorer = Callable[[str, list[str]], list[float]]
"""``scorer(question, texts) -> one score per text``, higher is better (e.g. ``Reranker.score``)."""

_OF_THEM = re.compile(r"\b(how many) of them\b", re.IGNORECASE)
"""A second ask counting what the first counted ("..., and how many of them are unanswerable?")."""

_IT = re.compile(r"\b(?:it|they|this|these|them)\b", re.IGNORECASE)
"""A pronoun in a second ask that stands for what the first ask is about."""

REDUNDANCY = 0.8
"""Two sentences whose term sets have at least this Jaccard similarity are redundant."""

__all__ = [
    "OPTION_SEPARATOR",
    "Candidate",
    "Scorer",
    "candidates",
    "extractive_answer",
    "render",
    "select",
    "table_answer",
]


def select(scored: list[tuple[Candidate, float]], k: int, min_score: float, relative_floor: float) -> list[Candidate]:
    """The best ``k`` eligible, non-redundant candidates: the chunk of the best one first, then the chunks of the
    others in score order; within a chunk in reading order (the answer leads with what answers, and a chunk's
    sentences read as the paper wrote them)."""
    if not scored or k <= 0:
        return []
    best = max(score for _, score in scored)
    floor = relative_floor * best if best > 0 else -math.inf
    eligible = [(c, s) for c, s in scored if s > min_score and s >= floor]
    eligible.sort(key=lambda cs: (-cs[1], cs[0].rank, cs[0].unit.start))
    chosen: list[Candidate] = []
    chosen_terms: list[set[str]] = []
    for (candidate, _), term_counts in zip(eligible, terms([c.text for c, _ in eligible]), strict=True):
        unit_terms = set(term_counts)
        if candidate.text in {c.text for c in chosen} or any(_redundant(unit_terms, t) for t in chosen_terms):
            continue
        chosen.append(candidate)
        chosen_terms.append(unit_terms)
        if len(chosen) == k:
            break
    chunk_order = {id(c.chunk): i for i, c in reversed(list(enumerate(chosen)))}
    return sorted(chosen, key=lambda c: (chunk_order[id(c.chunk)], c.unit.start))


MAX_PAPERS = 5
"""At most this many papers in the answer to a question asking which papers say something."""


def per_paper(
    scored: list[tuple[Candidate, float]], k: int, min_score: float, relative_floor: float
) -> list[Candidate]:
    """The best unit of each of the ``k`` best papers whose best unit is eligible (above ``min_score`` and at least
    ``relative_floor`` of the best score), best paper first: the answer to "Which papers ...?" quotes each paper
    that says it once."""
    best: dict[str, tuple[Candidate, float]] = {}
    for candidate, score in scored:
        paper = candidate.chunk.paper_id
        if paper not in best or score > best[paper][1]:
            best[paper] = (candidate, score)
    ranked = sorted(best.values(), key=lambda cs: (-cs[1], cs[0].rank, cs[0].unit.start))
    top = ranked[0][1] if ranked else 0.0
    floor = relative_floor * top if top > 0 else -math.inf
    return [c for c, s in ranked if s > min_score and s >= floor][:k]


def body_first(
    scored: list[tuple[Candidate, float]], min_score: float, question: str | None = None
) -> list[tuple[Candidate, float]]:
    """The scored units without the title-abstract ones, unless only those score above ``min_score``.

    An abstract summarises the paper in the words a question about it is likely to use, so its sentences
    match a question as well as or better than the body's, while the details the question asks for (the
    dataset's name, the number, the condition) are stated in the body. The body's best match is
    quoted when there is one; the abstract answers when nothing else does. A "how many N" ``question`` keeps
    the abstract's units that count N (:func:`~lit3r.reading.scoring.counts`) beside the body's: a count is the
    detail asked for, and a paper may state it only there ("a benchmark of 1,240 questions").
    """
    body = [(c, s) for c, s in scored if c.chunk.type != "title_abstract"]
    if not any(s > min_score for _, s in body):
        return scored
    noun = counted_noun(question) if question else None
    if noun is None:
        return body
    splits = names_split(question)
    return [(c, s) for c, s in scored if c.chunk.type != "title_abstract" or counts(c.scoring_text, noun, splits)]


def about_subject(
    question: str, pool: Sequence[Candidate], scores: list[float], titles: Mapping[str, str]
) -> list[float]:
    """``scores`` of the units with each paper's subject factor (:func:`~lit3r.reading.scoring.subject_factors`):
    the units of the paper whose title names what the question asks about score higher (unchanged without titles)."""
    papers = list(dict.fromkeys(c.chunk.paper_id for c in pool if c.chunk.paper_id in titles))
    if len(papers) < 2:  # one paper (or none titled): the same factor for every unit changes nothing
        return scores
    factor = dict(zip(papers, subject_factors(question, [titles[p] for p in papers]), strict=True))
    return [s * factor.get(c.chunk.paper_id, 1.0) for c, s in zip(pool, scores, strict=True)]


def _redundant(a: set[str], b: set[str]) -> bool:
    """Whether two term sets overlap by at least :data:`REDUNDANCY` (Jaccard)."""
    return bool(a | b) and len(a & b) / len(a | b) >= REDUNDANCY


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


def verdict_answer(
    question: str, named: dict[str, str], pool: list[Candidate], scores: list[float], min_score: float
) -> Answer | None:
    """The option naming the evidence's verdict (:mod:`lit3r.reading.verdict`), quoted with the sentence that
    shows it: "Maybe — <sentence> [1]". ``None`` when no unit matches the question at all (nothing to judge)."""
    if not any(s > min_score for s in scores):
        return None
    reading = read_verdict(question, pool, scores)
    allowed = [v for v in VERDICTS if v in named.values()]
    verdict = choose(reading.probabilities, allowed)
    option = next(o for o, v in named.items() if v == verdict)
    candidate = supporting(pool, scores, verdict)
    answer = render(question, [candidate], prefix=f"{option}{OPTION_SEPARATOR}")
    confidence = reading.probabilities[verdict] / sum(reading.probabilities[v] for v in allowed)
    return answer.model_copy(update={"option": option, "confidence": round(confidence, 4), "answers_question": True})


def question_scores(
    question: str, pool: list[Candidate], scorer: Scorer, titles: Mapping[str, str] | None
) -> list[float]:
    """Each unit's score against ``question``: ``scorer``'s, times the subject factor of its paper
    (:func:`about_subject`), except for a question asking which papers say something, where each paper that says it
    counts, not only the one whose title is about it."""
    raw = scorer(question, [c.scoring_text for c in pool])
    return raw if asked_papers(question) == "many" else about_subject(question, pool, raw, titles or {})


def readable(
    question: str,
    evidence: Sequence[Chunk],
    pool: list[Candidate],
    scores: list[float],
    min_score: float,
    prefer_body: bool,
) -> list[tuple[Candidate, float]]:
    """The units a free-form answer may quote, with their scores: the body's before the abstract's
    (:func:`body_first`, when ``prefer_body``), none stating a result of another data split than the one asked
    about (:func:`~lit3r.reading.conditions.contradicts_split`)."""
    scored = list(zip(pool, scores, strict=True))
    if prefer_body:
        scored = body_first(scored, min_score, question)
    contexts = split_contexts(evidence)
    return [(c, s) for c, s in scored if not contradicts_split(question, c.scoring_text, *contexts(c.chunk))]


def extreme_answer(question: str, scored: list[tuple[Candidate, float]], min_score: float) -> Answer | None:
    """The row of an evidence table, among the chunks with a unit scoring above ``min_score``, that holds the
    extreme a superlative question asks for, quoted with the cell read (:func:`~lit3r.reading.tables.superlative_cell`:
    the table's header names what is asked); ``None`` when no table holds it. Computed, not read: "Which BM25
    configuration was best?" is the row with the highest recall."""
    matched = {c.chunk.id for c, s in scored if s > min_score}
    found = superlative_cell(question, [c for c, _ in scored if c.chunk.id in matched])
    if found is None:
        return None
    row, column = found
    answer = with_cells(render(question, [row]), [row], column)
    return answer.model_copy(update={"confidence": round(coverage(question, scored), 4), "answers_question": True})


def table_answer(question: str, evidence: Sequence[Chunk], titles: Mapping[str, str] | None = None) -> Answer | None:
    """The answer a table of the evidence computes for a superlative question, as the offline reader finds it
    (:func:`extreme_answer` over the units it would read, scored as it scores them); ``None`` for any other question
    or when no table holds the extreme, or a question asking two things (:func:`compound_answer` answers each). The
    agent answers with it whichever reader is configured: a language model asked which row is best reads a table
    less reliably than its numbers compare."""
    if not asks_extreme(question) or len(question_parts(question)) > 1:
        return None
    pool = candidates(evidence)
    if not pool:
        return None
    lexical = question_scores(question, pool, lexical_scores, titles)
    return extreme_answer(
        question, readable(question, evidence, pool, lexical, 0.0, asked_papers(question) is None), 0.0
    )


def holding(wanted: set[str], scorer: Scorer) -> Scorer:
    """``scorer`` with every sentence that holds none of the ``wanted`` terms scored 0 (``__wrapped__``: ``scorer``)."""

    def scores(question: str, sentences: list[str]) -> list[float]:
        held = terms(sentences)
        return [s if wanted & ts.keys() else 0.0 for s, ts in zip(scorer(question, sentences), held, strict=True)]

    scores.__wrapped__ = scorer  # type: ignore[attr-defined]
    return scores


def compound_answer(
    question: str,
    parts: Sequence[str],
    evidence: Sequence[Chunk],
    answer: Callable[[str, Sequence[Chunk], set[str]], Answer],
) -> Answer:
    """The answer to a question that asks two things (:func:`~lit3r.answers.question.question_parts`): the first
    ask answered from the evidence in its own words (the whole question's words mix both asks: "How many
    questions does LocatorQA contain, and how many of them are unanswerable?" as one is answered by the count of
    the unanswerable ones), then the second ask from the papers that answered it (the same subject: "..., and what
    does it cost?"; "how many of them" counts what the first ask counted; "it" stands for what the first ask is
    about, and the second answer must hold a word of the second ask's own), added unless it abstains or quotes what
    the first answer quoted. ``answer(ask, chunks, wanted)`` answers one ask from sentences holding a ``wanted``
    term (any sentence when empty)."""
    first = answer(parts[0], evidence, set())
    if not first.sufficient:
        return first
    papers = {c.paper_id for c in first.citations}
    noun = counted_noun(parts[0])
    second_ask = _OF_THEM.sub(rf"\1 of the {noun}", parts[1]) if noun else parts[1]
    wanted: set[str] = set()
    if second_ask == parts[1] and _IT.search(second_ask):  # "..., and what does it cost?": it is what the first asked
        second_ask = _IT.sub(f"({drop_question_words(parts[0]).strip(' ?')})", second_ask, count=1)
        wanted = query_terms(parts[1]) - query_terms(parts[0])
    second = answer(second_ask, [c for c in evidence if c.paper_id in papers], wanted)
    quoted = {(c.chunk_id, q) for c in first.citations for q in c.quotes or [c.quote]}
    if not second.sufficient or {(c.chunk_id, q) for c in second.citations for q in c.quotes or [c.quote]} <= quoted:
        return first.model_copy(update={"question": question})
    both = joined(question, [first, second], {c.id: c for c in evidence})
    confidences = [a.confidence for a in (first, second) if a.confidence is not None]
    return both.model_copy(
        update={
            "confidence": min(confidences) if confidences else None,
            "answers_question": bool(first.answers_question and second.answers_question),
        }
    )


PACKAGED_SELECTOR = "packaged"
"""``selector=`` value meaning the selector model shipped with the package."""


def extractive_answer(
    question: str,
    evidence: Sequence[Chunk],
    *,
    options: Sequence[str] | None = None,
    max_sentences: int = 1,
    sufficient: bool = True,
    scorer: Scorer | None = None,
    min_score: float = 0.0,
    relative_floor: float = 0.5,
    form: FormChoice = "auto",
    prefer_body: bool = True,
    min_coverage: float = MIN_COVERAGE,
    selector: SelectorModel | Literal["packaged"] | None = None,
    titles: Mapping[str, str] | None = None,
    compound: bool = True,
    quantity_required: bool = True,
    chooser: SelectorModel | Literal["packaged"] | None = PACKAGED_SELECTOR,
) -> Answer:
    """Answer ``question`` with sentences quoted verbatim from ``evidence`` (best first in ``evidence``).

    Args:
        question: The question.
        evidence: Chunks to answer from, best first; their order decides the order of the sentences.
        options: Multiple-choice options; the answer's ``option`` is then exactly one of them.
        max_sentences: At most this many sentences in a free-form answer.
        sufficient: ``False`` (e.g. from the verifier or the gate) abstains without reading.
        scorer: Sentence scorer, default :func:`~lit3r.reading.scoring.lexical_scores`.
        min_score: A sentence must score above this to be used (lower it for scorers with negative scores).
        relative_floor: A sentence must score at least this fraction of the best score (when that is positive).
        form: The answer's form (:mod:`lit3r.answers.question`): ``"auto"`` reads it from the question
            and shapes the forms in :data:`AUTO_SHAPED`; ``"sentence"`` quotes whole sentences whatever the
            question; ``"boolean"``, ``"quantity"``, ``"span"`` force that shape.
        prefer_body: Quote the abstract only when no body unit scores above ``min_score`` (:func:`body_first`).
        min_coverage: Abstain when the best unit's :func:`coverage` of the question is below this (0: never);
            only on the rule path (a ``scorer`` given, or ``selector=None``).
        selector: The learned sentence selector for free-form questions with the default scorer
            (:func:`selected_answer`): ``"packaged"`` (the model shipped with lit3r), a model, or ``None`` for
            the lexical rules (the best-scoring sentences, the coverage floor).
        titles: The papers' titles by paper id: a unit of a paper whose title names the question's subject scores
            higher (:func:`about_subject`); without them every paper is alike.
        compound: Answer a question that asks two things (and has no options) part by part
            (:func:`compound_answer`); ``False`` answers it as one question.
        quantity_required: Abstain when a quantity question's answer states no quantity, a "how many N"
            question's counts no N, a measure's value names no such measure
            (:func:`~lit3r.reading.assurance.supplies_quantity`), or a "when" question's states no time
            (:func:`~lit3r.reading.assurance.supplies_time`): the evidence does not supply what is asked. ``False``
            quotes the best sentence anyway (``answers_question`` false).
        chooser: On the rule path with the lexical scorer, which eligible unit a free-form answer quotes:
            the one the selector's unit model ranks first (:func:`chosen_by_model`; ``"packaged"``, the default,
            or a model), or ``None`` for the one the lexical scorer ranks first. The rules still decide whether to
            answer and from which units (the body before the abstract, a table's extreme, the coverage floor,
            a quantity stated).

    Returns:
        A sufficient answer whose every sentence is a verbatim quote of a cited chunk, or the
        insufficient-evidence answer when ``sufficient`` is false or no sentence scores above ``min_score``.
    """
    parts = question_parts(question) if compound and not options and form == "auto" and sufficient else [question]
    if len(parts) > 1:

        def answer_part(part: str, chunks: Sequence[Chunk], wanted: set[str]) -> Answer:
            return extractive_answer(
                part, chunks, max_sentences=max_sentences, min_score=min_score,
                scorer=holding(wanted, scorer or lexical_scores) if wanted else scorer,
                relative_floor=relative_floor, prefer_body=prefer_body, min_coverage=min_coverage,
                selector=selector, titles=titles, compound=False, quantity_required=quantity_required,
                chooser=chooser,
            )  # fmt: skip

        return compound_answer(question, parts, evidence, answer_part)
    pool = candidates(evidence) if sufficient else []
    if not pool:
        return insufficient_answer(question)
    scorer = scorer or lexical_scores
    if options and (named := polar_options(options)):
        scores = about_subject(question, pool, scorer(question, [c.scoring_text for c in pool]), titles or {})
        return verdict_answer(question, named, pool, scores, min_score) or insufficient_answer(question)
    if options:
        choice = choose_option(question, options, pool, scorer, min_score)
        if choice is None:
            return insufficient_answer(question)
        option, candidate = choice
        answer = render(question, [candidate], prefix=f"{option}{OPTION_SEPARATOR}")
        return answer.model_copy(update={"option": option})
    papers_asked = asked_papers(question)
    lexical = question_scores(question, pool, scorer, titles)
    kind = form if form != "auto" else answer_form(question)
    if selector is not None and scorer is lexical_scores and form == "auto" and kind != "boolean":
        model = load_selector() if isinstance(selector, str) else selector
        return selected_answer(question, pool, lexical, model, min_coverage)
    scored = readable(question, evidence, pool, lexical, min_score, prefer_body and papers_asked is None)
    kind = kind if form != "auto" or kind in AUTO_SHAPED else "sentence"
    covered = coverage(question, scored)
    computed = extreme_answer(question, scored, min_score)
    if computed is not None:  # a table whose header names what is asked holds the extreme: that row answers
        return computed
    if covered < min_coverage and answer_form(question) != "boolean":  # measured: yes/no questions lose by it
        return insufficient_answer(question)
    if asks_languages(question) and form == "auto" and answer_form(question) != "boolean" and papers_asked is None:
        named = languages_answer(question, scored, min_score, relative_floor)
        if named is not None or quantity_required:
            answer = named or insufficient_answer(question)
            return answer.model_copy(update={"confidence": round(covered, 4), "answers_question": named is not None})
    count = 1 if kind != "sentence" else max_sentences
    by_model = None
    if chooser is not None and kind == "sentence" and lexical_based(scorer) and papers_asked is None:
        model = load_selector() if isinstance(chooser, str) else chooser
        by_model = chosen_by_model(question, pool, lexical, scored, model, min_score)
    if papers_asked == "many":
        chosen = per_paper(scored, MAX_PAPERS, min_score, relative_floor)
    elif by_model is not None:
        chosen = select(by_model, count, 0.0, relative_floor)
    else:
        chosen = select(scored, count, min_score, relative_floor)
    if not chosen:
        return insufficient_answer(question)
    answer = typed_answer(question, kind, chosen[0]) or (
        named_answer(question, kind, chosen) if form == "auto" else None
    )
    answer = answer or with_cells(render(question, chosen), chosen)
    asked = answer_form(question)
    context = " ".join(c.unit.context for c in chosen if c.unit.context)
    supplied = kind_supplied(asked, answer, context, " ".join(dict.fromkeys(c.chunk.text for c in chosen)))
    if asked != "boolean" and not supplied and quantity_required:  # a quantity (or a time) asked, none stated
        return insufficient_answer(question).model_copy(update={"confidence": round(covered, 4)})
    return answer.model_copy(update={"confidence": round(covered, 4), "answers_question": supplied})
