"""Answers shaped by the question's form, from the one unit that answers it best.

* ``boolean``: "Yes — <words> [1]" or "No — <words> [1]". The clause of the deciding sentence that holds the
  question's terms decides the polarity (:func:`~lit3r.reading.polarity.yes_or_no`); the quoted words are
  that clause (:data:`POLAR_QUOTE`), and the citation quotes the whole sentence. The answer's
  ``option`` is "Yes" or "No", so the claim check reads the quoted words alone, as it does for a
  multiple-choice answer.
* ``quantity``: the number with what it counts, "1,240 questions [1]"
  (:func:`~lit3r.reading.spans.number_span`), else as ``span``;
* ``span``: the shortest span that carries the answer (:func:`~lit3r.reading.spans.answer_span`).

A span answer quotes a slice of one sentence, and its citation quotes that whole sentence. When no span is
found, or a span would read as more than one sentence, there is no typed answer and the caller quotes the
sentence.
"""

from __future__ import annotations

from typing import Literal

from lit3r.answers.question import OPTION_SEPARATOR, AnswerForm
from lit3r.answers.sentences import Span, split_sentences
from lit3r.models import Answer
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
