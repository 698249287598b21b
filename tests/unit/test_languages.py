"""A question asking which languages is answered with the language names its evidence states
(lit3r.reading.languages, lit3r.reading.extractive.languages_answer)."""

from __future__ import annotations

import pytest

from lit3r.models import Chunk, Locator
from lit3r.reading.assurance import kind_supplied
from lit3r.reading.extractive import extractive_answer
from lit3r.reading.languages import asks_languages, is_language, language_spans, names_span, naming_chunks


def chunk(cid: str, text: str, section: str = "4 Experiments") -> Chunk:
    return Chunk(id=cid, paper_id="toy", type="text", text=text, locator=Locator(section=section, paragraph=1))


@pytest.mark.parametrize(
    "question",
    [
        "What languages do they experiment with?",
        "Which languages are explored?",
        "What language is the data in?",
        "In what language are the captions written in?",
        "What language pairs are explored?",
        "Which natural language(s) is/are studied?",
    ],
)
def test_a_question_asking_which_natural_languages(question: str) -> None:
    assert asks_languages(question)


@pytest.mark.parametrize(
    "question",
    [
        "What language model is trained?",
        "Which pre-trained language models are used?",
        "What is the sign language recognition task investigated?",
        "What programming language is the toolkit written in?",
        "How many languages do they cover?",
        "Do they report results only on English data?",
    ],
)
def test_a_question_about_something_else(question: str) -> None:
    assert not asks_languages(question)


@pytest.mark.parametrize("word", ["English", "Tibetan", "Bengali", "Farsi", "Mandarin", "Cantonese", "Urdu", "Thai"])
def test_a_language_name(word: str) -> None:
    assert is_language(word)


@pytest.mark.parametrize("word", ["Germany", "Thailand", "Wu", "Yue", "Even", "Label", "Mono", "Twitter", "english"])
def test_not_a_language_name(word: str) -> None:
    """Countries the names data maps to their language, short surnames, small languages named by English words,
    other names, and a word not capitalised."""
    assert not is_language(word)


def test_a_pair_is_read_as_its_two_languages_and_the_span_runs_from_the_first_to_the_last() -> None:
    text = "We translate English-German and Chinese-English news."
    assert [text[a:b] for a, b in language_spans(text)] == ["English", "German", "Chinese", "English"]
    assert text[slice(*names_span(text, (0, len(text))))] == "English-German and Chinese-English"
    assert names_span("No language is named here.", (0, 26)) is None


EXPERIMENTS = chunk(
    "toy::c1",
    "We perform NER experiments in four languages: the CoNLL data in Dutch, Spanish, English and German. "
    "Our tagger reads a BiLSTM encoder over characters.",
)
UNRELATED = chunk("toy::c2", "Tagging accuracy improves with character features in every language we experiment with.")


def test_the_answer_is_the_stretch_of_language_names_quoted_from_its_sentence() -> None:
    answer = extractive_answer("What languages do they experiment with?", [UNRELATED, EXPERIMENTS])
    assert answer.sufficient and answer.text == "Dutch, Spanish, English and German [1]"
    (citation,) = answer.citations
    assert citation.chunk_id == "toy::c1" and citation.quote.startswith("We perform NER experiments")
    assert answer.answers_question is True and kind_supplied("span", answer)


def test_evidence_naming_no_language_does_not_answer_which_languages() -> None:
    answer = extractive_answer("What languages do they experiment with?", [UNRELATED])
    assert not answer.sufficient and answer.answers_question is False
    quoted = extractive_answer("What languages do they experiment with?", [UNRELATED], quantity_required=False)
    assert quoted.sufficient and quoted.answers_question is False  # asked to quote anyway: it says it may not answer


def test_a_unit_sharing_no_word_with_the_question_answers_with_the_language_it_names() -> None:
    source = chunk("toy::c3", "The corpus holds sentence pairs from English Wikipedia and its simple edition.")
    answer = extractive_answer("What language was the data in?", [UNRELATED, source])
    assert answer.sufficient and answer.text == "English [1]" and answer.citations[0].chunk_id == "toy::c3"


def test_evidence_naming_no_language_gets_the_papers_chunks_that_do() -> None:
    question = "What languages do they experiment with?"
    paper = [UNRELATED, chunk("toy::c4", "No language here."), EXPERIMENTS, chunk("toy::c5", "Also in Czech.")]
    completed = naming_chunks([UNRELATED], {"toy": paper}, question)
    assert [c.id for c in completed] == ["toy::c2", "toy::c1", "toy::c5"]  # the first two naming one, in order
    assert naming_chunks([EXPERIMENTS], {"toy": paper}, question) == [EXPERIMENTS]  # it names languages already
    assert naming_chunks([UNRELATED], {"toy": paper}, "How many tags are there?") == [UNRELATED]  # not asked
