"""A question that asks two things gets both answered: the first ask in its own words, the second from the paper
that answered it; one answer with one marker per chunk."""

from __future__ import annotations

import pytest

from lit3r.answers import validate_answer
from lit3r.answers.question import question_parts
from lit3r.models import Chunk, Locator
from lit3r.reading import extractive_answer

TABLE = Chunk(
    id="sparse::c0006", paper_id="sparse", type="table",
    text="Table 1: Recall at 10 of BM25 configurations.\nConfiguration | Recall@10\nDefaults | 0.39\n"
    "+ stemming | 0.47\n+ section-title field | 0.52",
    locator=Locator(section="3 Results", object_id="Table 1"),
)  # fmt: skip
TEXT = Chunk(
    id="sparse::c0005", paper_id="sparse", type="text",
    text="Tuning adds five points. Stemming adds three more, and the section-title field four, for a total of 0.52.",
    locator=Locator(section="3 Results"),
)  # fmt: skip
OTHER = Chunk(
    id="fusion::c0001", paper_id="fusion", type="text",
    text="A section-title field adds little to dense retrieval.", locator=Locator(section="4 Discussion"),
)  # fmt: skip
EVIDENCE = [TABLE, TEXT, OTHER]
QUESTION = "Which BM25 configuration reached the highest recall at 10, and what did the section-title field add?"


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            QUESTION,
            ["Which BM25 configuration reached the highest recall at 10?", "What did the section-title field add?"],
        ),
        ("How large is it and why?", ["How large is it and why?"]),  # a one-word second ask stays with the first
        ("What countries and languages are covered?", ["What countries and languages are covered?"]),
        ("Do they use BERT and what do they compare?", ["Do they use BERT and what do they compare?"]),  # polar
    ],
)
def test_a_question_is_cut_where_and_opens_a_second_ask(question: str, parts: list[str]) -> None:
    assert question_parts(question) == parts


def test_both_asks_are_answered_from_the_paper_that_answered_the_first() -> None:
    answer = extractive_answer(QUESTION, EVIDENCE)
    assert answer.text.startswith("+ section-title field | 0.52 [1]")
    assert "the section-title field four, for a total of 0.52. [2]" in answer.text
    assert [c.chunk_id for c in answer.citations] == [TABLE.id, TEXT.id]  # not the other paper's field sentence
    assert validate_answer(answer, {c.id: c for c in EVIDENCE}.get) == []
    assert answer.citations[0].cell is not None and answer.citations[0].cell.row == 3


def test_without_compound_the_question_is_answered_as_one() -> None:
    assert extractive_answer(QUESTION, EVIDENCE, compound=False).text == "+ section-title field | 0.52 [1]"


def test_a_second_ask_that_quotes_the_same_sentence_adds_nothing() -> None:
    chunk = Chunk(
        id="b::c0001", paper_id="b", type="text", text="It holds 1,240 questions, of which 149 are unanswerable."
    )
    answer = extractive_answer("How many questions does it hold, and how many of them are unanswerable?", [chunk])
    assert answer.text == "It holds 1,240 questions, of which 149 are unanswerable. [1]"


def test_one_chunk_cited_by_both_asks_keeps_one_number_and_both_quotes() -> None:
    chunk = Chunk(
        id="c::c0001", paper_id="c", type="text",
        text="We recommend a budget of 100 candidates. Scoring them takes 0.97 seconds per question.",
    )  # fmt: skip
    answer = extractive_answer(
        "What budget is recommended for the candidates, and how long does scoring take?", [chunk]
    )
    assert (
        answer.text == "We recommend a budget of 100 candidates. [1] Scoring them takes 0.97 seconds per question. [1]"
    )
    (citation,) = answer.citations
    assert citation.quotes == [
        "We recommend a budget of 100 candidates.",
        "Scoring them takes 0.97 seconds per question.",
    ]
    assert citation.quote == chunk.text
    assert validate_answer(answer, {chunk.id: chunk}.get) == []


def test_each_ask_is_answered_in_its_own_words_and_them_counts_what_the_first_counted() -> None:
    abstract = Chunk(
        id="bench::c0000", paper_id="bench", type="title_abstract",
        text="We introduce LocatorQA, a benchmark of 1,240 questions. Twelve percent are unanswerable.",
    )  # fmt: skip
    table = Chunk(
        id="bench::c0003", paper_id="bench", type="table",
        text="Table 1: Number of questions per family and split.\nFamily | Development | Test | Total\n"
        "Lookup | 211 | 880 | 1,091\nUnanswerable | 29 | 120 | 149",
        locator=Locator(section="2 The Dataset", object_id="Table 1"),
    )  # fmt: skip
    body = Chunk(
        id="bench::c0004", paper_id="bench", type="text",
        text="For unanswerable questions, two annotators confirmed that no paper reports the requested fact.",
    )  # fmt: skip
    question = "How many questions does LocatorQA contain, and how many of them are unanswerable?"
    answer = extractive_answer(question, [body, table, abstract])
    # The first ask alone is answered by the abstract's count of all the questions (the whole question's words
    # favour the unanswerable row); "them" makes the second ask a count of questions, so the row counting them
    # beats the sentence counting annotators.
    assert answer.text == (
        "We introduce LocatorQA, a benchmark of 1,240 questions. [1] Unanswerable | 29 | 120 | 149 [2]"
    ), answer.text


def test_it_in_the_second_ask_is_what_the_first_asked_about_and_a_latency_answers_a_cost() -> None:
    results = Chunk(
        id="rerank::c0008", paper_id="rerank", type="text",
        text="Reranking 100 candidates raises nDCG at 10 from 0.41 to 0.56 at half the latency of 200 candidates. "
        "We therefore recommend a budget of 100 candidates for interactive use.",
        locator=Locator(section="4 Results"),
    )  # fmt: skip
    limits = Chunk(
        id="rerank::c0011", paper_id="rerank", type="text",
        text="Latency was measured on a CPU, and a GPU would make larger budgets affordable.",
        locator=Locator(section="6 Limitations"),
    )  # fmt: skip
    question = "What candidate budget is recommended for cross-encoder reranking, and what does it cost?"
    answer = extractive_answer(question, [results, limits])
    # "it" is the recommended budget: the second ask reads the first's words too, and must hold its own ("cost",
    # which a sentence naming a latency holds), so the recommendation is not quoted twice and the CPU caveat
    # (a latency, but not of the budget) does not win
    assert answer.text == (
        "We therefore recommend a budget of 100 candidates for interactive use. [1] Reranking 100 candidates "
        "raises nDCG at 10 from 0.41 to 0.56 at half the latency of 200 candidates. [1]"
    ), answer.text
    assert validate_answer(answer, {c.id: c for c in (results, limits)}.get) == []
