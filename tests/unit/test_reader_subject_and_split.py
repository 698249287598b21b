"""The offline reader's paper-level priors: the paper about the question's subject first, and the data split asked
about (a development-set result does not answer a question about the test set)."""

from __future__ import annotations

import pytest

from lit3r.models import ABSTENTION, Chunk, Paper
from lit3r.reading import extractive_answer
from lit3r.reading.conditions import contradicts_split, splits_named
from lit3r.reading.extractive import kind_supplied
from lit3r.reading.reader import ExtractiveReader
from lit3r.reading.scoring import subject_factors

QUESTION = "How many questions does LocatorQA contain?"
PASSING = Chunk(
    id="verify::c0001", paper_id="verify", type="text",
    text="We evaluate on 1,000 questions of LocatorQA. Verification halves the error.",
)  # fmt: skip
SUBJECT = Chunk(
    id="bench::c0001", paper_id="bench", type="text",
    text="The benchmark contains 1,240 questions over 3,100 papers. Annotators wrote them.",
)  # fmt: skip
TITLES = {"verify": "Verifying Evidence Before Answering", "bench": "The LocatorQA Benchmark of Questions"}


def test_subject_factors_follow_the_share_of_question_terms_in_the_title() -> None:
    low, high, none = subject_factors(QUESTION, ["Verifying Evidence", "The LocatorQA Benchmark", ""])
    assert low == none == 1.0 and high > 1.0
    assert subject_factors("how many?", ["The LocatorQA Benchmark"]) == [1.0]  # no terms: nothing to match


def test_the_paper_whose_title_names_the_subject_answers_first() -> None:
    without = extractive_answer(QUESTION, [PASSING, SUBJECT])
    assert without.citations[0].paper_id == "verify"  # it repeats more of the question's words
    with_titles = extractive_answer(QUESTION, [PASSING, SUBJECT], titles=TITLES)
    assert with_titles.citations[0].paper_id == "bench"
    assert "1,240 questions" in with_titles.text


def test_within_one_paper_the_subject_factor_changes_nothing() -> None:
    one_paper = [PASSING, PASSING.model_copy(update={"id": "verify::c0002", "text": "LocatorQA has questions."})]
    assert extractive_answer(QUESTION, one_paper, titles={"verify": "LocatorQA questions"}) == extractive_answer(
        QUESTION, one_paper
    )


def test_the_reader_takes_titles_from_the_papers_it_is_given() -> None:
    papers = {p: Paper(id=p, title=t) for p, t in TITLES.items()}
    answer = ExtractiveReader(papers)(QUESTION, [PASSING, SUBJECT], None, sufficient=True)
    assert answer.citations[0].paper_id == "bench"
    assert ExtractiveReader()(QUESTION, [PASSING, SUBJECT], None, sufficient=True).citations[0].paper_id == "verify"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Recall at 10 on the LocatorQA development set.", {"dev"}),
        ("We report results on the test set.", {"test"}),
        ("the training, development and test splits", {"train", "dev", "test"}),
        ("validation questions", {"dev"}),
        ("We test our model after a long training time.", set()),  # a verb and another noun, not splits
    ],
)
def test_splits_are_named_as_noun_phrases(text: str, expected: set[str]) -> None:
    assert splits_named(text) == expected


def test_a_unit_on_another_split_does_not_answer() -> None:
    question = "What recall did the dense encoder reach on the test set?"
    assert contradicts_split(question, "Dense encoder | 0.55\nTable 1: Recall on the development set.")
    assert not contradicts_split(question, "Dense encoder reaches 0.55 on the development and test sets.")
    assert not contradicts_split(question, "Dense encoder reaches 0.55.")  # says no split: left alone
    assert not contradicts_split("What recall did the dense encoder reach?", "Recall on the development set.")


def test_the_reader_skips_results_on_another_split_and_abstains_when_only_those_remain() -> None:
    dev = Chunk(id="p::c0001", paper_id="p", type="text", text="On the dev set the encoder reaches 0.55 recall.")
    test = Chunk(id="p::c0002", paper_id="p", type="text", text="The encoder reaches 0.49 recall on the test set.")
    question = "What recall does the dense encoder reach on the test set?"
    assert "0.49" in extractive_answer(question, [dev, test]).text
    assert extractive_answer(question, [dev]).text == ABSTENTION
    assert "0.55" in extractive_answer("What recall does the dense encoder reach?", [dev]).text


def test_a_unit_naming_no_split_reports_on_the_split_its_chunk_section_or_paper_names() -> None:
    question = "What recall at 10 did the dense encoder reach on the test set?"
    unit = "The tuned system reaches 0.61 recall at 10."
    assert contradicts_split(question, unit, "", "Table 1 reports recall on the 240 development questions.")
    assert contradicts_split(question, unit, "", "", "We answer it on the development split of LocatorQA.")
    assert not contradicts_split(question, unit, "", "", "Development and test splits are both reported.")
    assert not contradicts_split(question, unit, "", "", "")  # no context names a split: left alone
    # the nearest context that names a split decides: the chunk's test set over the paper's development split
    assert not contradicts_split(question, unit, "On the test set:", "", "the development questions")


def test_the_reader_reads_the_split_of_a_result_from_its_paper_in_the_evidence() -> None:
    intro = Chunk(
        id="p::c0001", paper_id="p", type="text", text="We answer it on the development split of LocatorQA.",
        locator={"section": "1 Introduction"},
    )  # fmt: skip
    result = Chunk(
        id="p::c0005", paper_id="p", type="text", text="The dense encoder reaches 0.61 recall at 10.",
        locator={"section": "3 Results"},
    )  # fmt: skip
    other = Chunk(id="q::c0002", paper_id="q", type="text", text="The dense encoder reaches 0.49 recall at 10.")
    question = "What recall at 10 did the dense encoder reach on the test set?"
    assert extractive_answer(question, [result, intro]).text == ABSTENTION  # before: "... reaches 0.61 ..."
    assert "0.61" in extractive_answer("What recall at 10 did the dense encoder reach?", [result, intro]).text
    assert "0.49" in extractive_answer(question, [result, intro, other]).text  # paper q names no split


def test_a_quantity_in_words_supplies_a_quantity_question() -> None:
    chunk = Chunk(id="p::c0001", paper_id="p", type="text", text="Verification halves the rate of unsupported claims.")
    answer = extractive_answer("How much did verification reduce unsupported claims?", [chunk])
    assert answer.sufficient and kind_supplied("quantity", answer) and answer.answers_question
