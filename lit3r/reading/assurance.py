"""How sure an answer is, apart from "quotes checked": whether it supplies what the question asks, and how much of
the question its evidence covers.

Every reader states it the same way (``Answer.answers_question`` and ``Answer.confidence``): the offline reader
from the units it scored, the LLM readers from the chunks they were shown and the quotes they cited
(:func:`assessed`). A chosen verdict's probability, where a verdict model gives one, replaces the coverage as the
confidence (:func:`lit3r.reading.extractive.verdict_answer`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lit3r.answers.question import MEASURES, AnswerForm, answer_form, asked_measure, asked_qualifier, asks_time
from lit3r.answers.sentences import Unit, chunk_units
from lit3r.answers.validate import MARKER
from lit3r.index.bm25 import idf
from lit3r.models import Answer, Chunk
from lit3r.reading.languages import asks_languages, language_spans
from lit3r.reading.scoring import counted_noun, counts, names_split, partitive, query_terms, states_quantity, terms

if TYPE_CHECKING:
    from lit3r.index.corpus_index import CorpusIndex
    from lit3r.reading.quotes import Candidate

_MEASURE_NAMES = {measure: re.compile(rf"\b(?:{names})(?!\w)", re.IGNORECASE) for measure, names in MEASURES.items()}
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_TIME = re.compile(
    rf"(?<![\w.,])(?:1[5-9]|20)[0-9]{{2}}s?(?![\w%]|[.,]\d)|\b(?:{_MONTHS})\b|\bcentur(?:y|ies)\b"
    r"|\b\d{1,2}[/-]\d{1,2}[/-]\d{2,4}\b"
)

MIN_COVERAGE = 0.25
"""A free-form answer needs its best unit to hold at least this share of what the question is about (its terms,
weighted by idf over the evidence units, a term the evidence never mentions weighing most); below it the
evidence does not supply what is asked and the reader abstains. No calibration run is needed, so a fresh home
abstains on a question its corpus is silent about. The level was measured on QASPER in paper
(benchmarks/bench_reader_rules.py, "abstain on low coverage" and "the papers' coverage"; docs/BENCHMARKS.md): 0.25
is the lowest level measured, which abstains on a fifth of the questions, at a precision above the base rate of
unanswerable ones; 0.1 (with :data:`MIN_PAPER_COVERAGE`) abstains less and more precisely on QASPER, but answers
the demo's question about a test-set recall no demo paper reports."""

MIN_PAPER_COVERAGE = 0.2
"""The papers an answer is read from must hold, between them, at least this share of the question's terms (less
:data:`GENRE_WORDS`), each weighted by its idf over every chunk of the corpus (:func:`papers_coverage`); below it the
question is about something the library does not discuss ("What is the boiling point of liquid nitrogen?" over
papers on retrieval) and no reader reads it: the offline reader and the language-model readers alike, which the
unit floor (:data:`MIN_COVERAGE`, the offline reader's own) does not guard. Measured on QASPER in paper and on
off-topic questions in the demo home (docs/BENCHMARKS.md): alone it makes 17 of the demo's 20 off-topic questions
abstain and none of its answerable ones."""

GENRE_WORDS = (
    "paper",
    "papers",
    "study",
    "studies",
    "studied",
    "work",
    "works",
    "article",
    "articles",
    "author",
    "authors",
    "research",
    "propose",
    "proposed",
    "proposes",
)
"""Words that name the kind of document asked about ("which paper studies ..."), not what it says: left out of
:func:`coverage`, where a word no unit holds weighs most."""


@functools.cache
def genre_terms() -> frozenset[str]:
    """:data:`GENRE_WORDS` as the index's terms (stemmed once)."""
    return frozenset(terms([" ".join(GENRE_WORDS)])[0])


def covered_share(question: str, texts: Sequence[str], best: int) -> float:
    """The share of the question's terms (less :data:`GENRE_WORDS`), weighted by BM25 idf over ``texts``, that
    ``texts[best]`` holds (1.0 for a question without terms; 0.0 without texts)."""
    query = query_terms(question) - genre_terms()
    if not query:
        return 1.0
    if not texts:
        return 0.0
    unit_terms = [set(ts) & query for ts in terms(list(texts))]
    n = len(texts)
    df = {t: sum(t in ts for ts in unit_terms) for t in query}
    weight = {t: idf(df[t], n) for t in query}
    return sum(w for t, w in weight.items() if t in unit_terms[best]) / sum(weight.values())


def coverage(question: str, scored: list[tuple[Candidate, float]]) -> float:
    """:func:`covered_share` of the best-scoring unit among the scored units (1.0 for a question without terms;
    0.0 without units)."""
    if not scored:
        return covered_share(question, [], 0)
    best = max(range(len(scored)), key=lambda i: (scored[i][1], -i))
    return covered_share(question, [c.scoring_text for c, _ in scored], best)


def papers_coverage(question: str, index: CorpusIndex, paper_ids: Sequence[str]) -> float:
    """The share of the question's terms (less :data:`GENRE_WORDS`) that some chunk of the papers ``paper_ids``
    holds, each term weighted by its BM25 idf over every chunk of ``index`` (a term the corpus never uses weighs
    most); 1.0 for a question without terms. The terms are the reader's (:func:`~lit3r.reading.scoring.query_terms`:
    the question's words less question words, stemmed as the chunk BM25 index stems them); which chunks hold one is
    read from that index (:meth:`~lit3r.index.bm25.BM25Index.held`; a sharded index asks its shards)."""
    bm25 = index.bm25_chunks
    query = query_terms(question) - genre_terms()
    if not query:
        return 1.0
    wanted = {c.id for p in paper_ids for c in index.chunks_by_paper.get(p, ())}
    total = held = 0.0
    for frequency, holds in bm25.held(sorted(query), wanted):
        weight = idf(frequency, len(bm25))
        total += weight
        held += weight if holds else 0.0
    return held / total


def kind_supplied(kind: AnswerForm, answer: Answer, context: str = "", passage: str = "") -> bool:
    """Whether the answer has what its form asks for: a verdict for a yes/no question; for a quantity question a
    quantity (in digits or in words: "halves the rate"), when the question is "how many N" a count of N, and when it
    asks for a measure's value that measure named (:func:`supplies_quantity`), in the answer or the sentences it
    quotes (a number's sentence says what it counts); for a "when" question a time (:func:`supplies_time`); for a
    question asking which languages a language's name (:mod:`lit3r.reading.languages`).
    ``context`` is text read with the answer's (a quoted table row's caption and header); ``passage`` the text of
    the chunks it quotes, where a measure may be named once for the paragraph's numbers."""
    if kind == "boolean":
        return answer.option is not None
    if kind != "quantity" and asks_languages(answer.question):  # "Which languages ...?": a language named
        return bool(language_spans(MARKER.sub(" ", answer.text)))
    if kind == "quantity" or asks_time(answer.question):
        quoted = " ".join(q for c in answer.citations for q in c.quotes or [c.quote])
        said = f"{MARKER.sub(' ', answer.text)} {quoted} {context}"
        return supplies_quantity(answer.question, said, passage) if kind == "quantity" else supplies_time(said)
    return True


def supplies_quantity(question: str, text: str, passage: str = "") -> bool:
    """Whether ``text`` supplies the quantity ``question`` asks for: it states a quantity; for a "how many N"
    question it counts N ("How many GPUs ...?" is not answered by "... several hours to finish one epoch", nor
    "How many annotators ...?" by "46 000 audio samples"; :func:`lit3r.reading.scoring.counts`); for the value of an
    evaluation measure it, or the ``passage`` it is quoted from, names that measure ("What recall did the encoder
    reach on the test set?" is not answered by "We evaluate on the 1,000 test questions"), and likewise the word
    that says which quantity is asked ("What learning rate ...?": learning)."""
    if not states_quantity(text):
        return False
    measure = asked_measure(question)
    if measure is not None and not _MEASURE_NAMES[measure].search(f"{text} {passage}"):
        return False
    qualifier = asked_qualifier(question)
    if qualifier is not None and not set(terms([qualifier])[0]) <= set(terms([f"{text} {passage}"])[0]):
        return False  # "What learning rate ...?" is not answered by a passage that names no learning
    noun = counted_noun(question)
    return noun is None or counts(text, noun, names_split(question), partitive(question))


def supplies_time(text: str) -> bool:
    """Whether ``text`` states a time, as a question asking "when" needs: a year ("in 2016", "the 1990s"), a month,
    a century or a date."""
    return bool(_TIME.search(text))


def quoted_text(quote: str, chunk: Chunk | None, units: Sequence[Unit] = ()) -> str:
    """A quote with what scores it in the offline reader too: the context of the chunk's ``units`` it overlaps (a
    table row's caption and header)."""
    start = chunk.text.find(quote) if chunk is not None else -1
    if start < 0:
        return quote
    end = start + len(quote)
    return " ".join([quote, *sorted({u.context for u in units if u.context and u.start < end and start < u.end})])


def assessed(question: str, answer: Answer, chunks: Sequence[Chunk]) -> Answer:
    """``answer`` with how sure it is, for a reader that does not weigh units itself (the LLM readers):
    ``confidence`` is the share of the question its cited quotes cover (with a table row's caption and header),
    idf-weighted over the units of ``chunks`` (what the reader was shown; sentences and table rows with their
    context, as the offline reader weighs them) and the quotes; ``answers_question`` is whether it supplies what
    the question's form asks for (:func:`kind_supplied`) with the quotes covering at least :data:`MIN_COVERAGE`.
    An abstention answers nothing. Values the reader set already are kept."""
    if not answer.sufficient or not answer.citations:
        return answer.model_copy(update={"answers_question": False})
    by_id = {chunk.id: chunk for chunk in chunks}
    units = {chunk_id: chunk_units(chunk) for chunk_id, chunk in by_id.items()}
    quoted = " ".join(quoted_text(c.quote, by_id.get(c.chunk_id), units.get(c.chunk_id, ())) for c in answer.citations)
    evidence = [f"{by_id[i].text[u.start : u.end]} {u.context}" for i, found in units.items() for u in found]
    covered = covered_share(question, [*evidence, quoted], len(evidence))
    passage = " ".join(dict.fromkeys(by_id[c.chunk_id].text for c in answer.citations if c.chunk_id in by_id))
    supplies = kind_supplied(answer_form(question), answer, quoted, passage) and covered >= MIN_COVERAGE
    return answer.model_copy(
        update={
            "confidence": answer.confidence if answer.confidence is not None else round(covered, 4),
            "answers_question": answer.answers_question if answer.answers_question is not None else supplies,
        }
    )
