"""Answers shaped by the question's form, from the one unit that answers it best.

* ``boolean``: "Yes — <sentence> [1]" or "No — <sentence> [1]" (:func:`~lit3r.tools.reader.polarity.yes_or_no`);
  the answer's ``option`` is "Yes" or "No", so the claim check reads the quoted sentence alone, as it does
  for a multiple-choice answer.
* ``quantity``: the number with what it counts, "1,240 questions [1]"
  (:func:`~lit3r.tools.reader.spans.number_span`), else as ``span``;
* ``span``: the shortest span that carries the answer (:func:`~lit3r.tools.reader.spans.answer_span`).

A span answer quotes a slice of one sentence, and its citation quotes that whole sentence. When no span is
found, or a span would read as more than one sentence, there is no typed answer and the caller quotes the
sentence.
"""

from __future__ import annotations

from lit3r.models import Answer
from lit3r.tools.reader.polarity import yes_or_no
from lit3r.tools.reader.question import AnswerForm
from lit3r.tools.reader.quotes import OPTION_SEPARATOR, Candidate, render, render_span
from lit3r.tools.reader.scoring import query_terms, terms
from lit3r.tools.reader.sentences import Span, split_sentences
from lit3r.tools.reader.spans import answer_span, number_span


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


def typed_answer(question: str, form: AnswerForm, candidate: Candidate) -> Answer | None:
    """The answer of the given form from ``candidate``; ``None`` for the ``sentence`` form or when no span is found."""
    if form == "boolean":
        option = yes_or_no(question, candidate.text)
        answer = render(question, [candidate], prefix=f"{option}{OPTION_SEPARATOR}")
        return answer.model_copy(update={"option": option})
    if form not in ("quantity", "span"):
        return None
    found = short_span(question, form, candidate)
    if found is None:
        return None
    span, sentence = found
    return render_span(question, candidate.chunk, span, sentence)
