"""Answers shaped by the question's form, from the one unit that answers it best.

* ``boolean``: "Yes — <words> [1]" or "No — <words> [1]". The clause of the deciding sentence that holds the
  question's terms decides the polarity (:func:`~lit3r.reading.polarity.yes_or_no`); the quoted words are
  that clause (:data:`POLAR_QUOTE`), and the citation quotes the whole sentence. The answer's
  ``option`` is "Yes" or "No", so the claim check reads the quoted words alone, as it does for a
  multiple-choice answer.
* ``quantity``: the number with what it counts, "1,240 questions [1]"
  (:func:`~lit3r.reading.spans.number_span`), else as ``span``;
* ``span``: the shortest span that carries the answer (:func:`~lit3r.reading.spans.answer_span`).
* a question asking which languages: the language names of the evidence (:func:`languages_answer`); which
  datasets, baselines, models, tools or metrics: the stretch of the chosen sentence that names them
  (:func:`named_answer`). The extractive reader shapes these two whatever its ``form`` default.

A span answer quotes a slice of one sentence, and its citation quotes that whole sentence. When no span is
found, or a span would read as more than one sentence, there is no typed answer and the caller quotes the
sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from lit3r.answers.question import OPTION_SEPARATOR, AnswerForm
from lit3r.answers.sentences import Span, split_sentences
from lit3r.models import Answer
from lit3r.reading.languages import language_spans, names_span
from lit3r.reading.named import asks_names, names_stretch
from lit3r.reading.polarity import cue_spans, yes_or_no
from lit3r.reading.quotes import Candidate, render_span
from lit3r.reading.scoring import query_terms, terms
from lit3r.reading.spans import answer_span, best_clause, covering_span, number_span

PolarQuote = Literal["window", "clause", "sentence"]

POLAR_QUOTE: PolarQuote = "clause"
"""What a yes/no answer quotes after its "Yes — ": the deciding clause (``clause``), the covering stretch of it that
holds the question's terms (``window``), or the sentence. The words are what a reader checks the Yes against. The
window was the default while QASPER scored the whole answer text (it doubled the yes/no Answer F1 over the clause);
since the score reads the verdict alone (:func:`lit3r.evals.answers.answer_text`), the clause is the default: a
window ends mid-phrase ("Yes — In-batch training adds five points, and hard negatives [1]") where the clause reads
alone ("... and hard negatives add four more. [1]"). Measured in docs/BENCHMARKS.md (session 17): same Answer F1."""


def best_sentence(candidate: Candidate, question_terms: set[str]) -> Span:
    """The sentence of the unit sharing the most distinct terms with the question (the first on ties)."""
    spans = candidate.sentences()
    text = candidate.chunk.text
    overlap = [len(set(counts) & question_terms) for counts in terms([text[s:e] for s, e in spans])]
    return spans[overlap.index(max(overlap))]


def _one_sentence(text: str, span: Span) -> bool:
    """Whether ``text[span]`` reads as a single sentence (so its one marker closes the one claim it makes)."""
    return len(split_sentences(text, *span)) == 1


def short_span(question: str, form: AnswerForm, candidate: Candidate) -> tuple[Span, Span] | None:
    """The answer span and the sentence holding it, as spans of the chunk's text; ``None`` when there is none."""
    question_terms = query_terms(question)
    sentence = best_sentence(candidate, question_terms)
    text = candidate.chunk.text
    span = number_span(text, sentence, question, question_terms) if form == "quantity" else None
    span = span or answer_span(text, sentence, question_terms)
    if span is None or not _one_sentence(text, span):
        return None
    return span, sentence


def polar_answer(question: str, candidate: Candidate) -> Answer:
    """The answer "Yes — <clause> [1]" or "No — <clause> [1]", the clause holding the question's terms decides.

    Negation scopes over its clause, so the polarity is read from the clause that says what the question asks
    about ("We use BERT, but not for French" answers "Do they use BERT?" with "Yes — use BERT").
    """
    question_terms = query_terms(question)
    text = candidate.chunk.text
    sentence = best_sentence(candidate, question_terms)
    clause = best_clause(text, sentence, question_terms)
    option = yes_or_no(question, text[slice(*clause)])
    if POLAR_QUOTE == "window":
        window = covering_span(text, clause, question_terms, keep=cue_spans(text, *clause))
        clause = window if window and _one_sentence(text, window) else clause
    elif POLAR_QUOTE == "sentence":
        clause = sentence
    answer = render_span(question, candidate.chunk, clause, sentence, prefix=f"{option}{OPTION_SEPARATOR}")
    return answer.model_copy(update={"option": option})


def typed_answer(question: str, form: AnswerForm, candidate: Candidate) -> Answer | None:
    """The answer of the given form from ``candidate``; ``None`` for the ``sentence`` form or when no span is found."""
    if form == "boolean":
        return polar_answer(question, candidate)
    if form not in ("quantity", "span"):
        return None
    found = short_span(question, form, candidate)
    if found is None:
        return None
    span, sentence = found
    return render_span(question, candidate.chunk, span, sentence)


def languages_answer(
    question: str, scored: list[tuple[Candidate, float]], min_score: float, relative_floor: float
) -> Answer | None:
    """The answer to a question asking which languages (:func:`lit3r.reading.languages.asks_languages`): among the units
    of ``scored`` that name a language and score at least ``relative_floor`` of the best of them, the one naming the
    most languages, quoted from the first name to the last in its sentence naming the most ("Dutch, Spanish, English
    and German [1]", citing the sentence); ``None`` when no unit scoring at least ``min_score`` names one. A unit
    sharing no word with the question may name the language asked for ("what language was the data in?" is answered
    by "... sentence pairs from English Wikipedia"): the names are what is asked, not the question's words."""

    def languages(c: Candidate) -> set[str]:
        return {c.chunk.text[a:b] for a, b in language_spans(c.chunk.text, c.unit.start, c.unit.end)}

    named = [(c, s, len(found)) for c, s in scored if s >= min_score and (found := languages(c))]
    if not named:
        return None
    top = max(s for _c, s, _n in named)
    best = max(((c, n) for c, s, n in named if s >= relative_floor * top), key=lambda pair: pair[1])[0]
    text = best.chunk.text
    sentence = max(best.sentences(), key=lambda span: len({text[a:b] for a, b in language_spans(text, *span)}))
    span = names_span(text, sentence)
    return render_span(question, best.chunk, span, sentence) if span else None


def named_answer(question: str, kind: AnswerForm, chosen: Sequence[Candidate]) -> Answer | None:
    """For a question asking which named things (:func:`lit3r.reading.named.asks_names`) answered by one sentence
    unit, the stretch of it from its first name to its last, citing the unit; ``None`` otherwise (a table row, a
    unit naming nothing, or any other question)."""
    if kind != "sentence" or len(chosen) != 1 or chosen[0].unit.context or not asks_names(question):
        return None
    unit = (chosen[0].unit.start, chosen[0].unit.end)
    stretch = names_stretch(chosen[0].chunk.text, unit, question)
    return render_span(question, chosen[0].chunk, stretch, unit) if stretch else None
