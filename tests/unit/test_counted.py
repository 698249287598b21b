"""A "how many N" question's evidence is completed with the chunks of the papers read that count N, and the
abstract's count competes with the body's sentences (lit3r.reading.counted, extractive.body_first)."""

from __future__ import annotations

from lit3r.models import Chunk, Locator
from lit3r.reading import extractive_answer
from lit3r.reading.counted import PER_PAPER, counting_chunks

ABSTRACT = Chunk(
    id="bench::c0000", paper_id="bench", type="title_abstract",
    text="We introduce LocatorQA, a benchmark of 1,240 questions over 3,100 papers.",
)  # fmt: skip
DATASET = Chunk(
    id="bench::c0002", paper_id="bench", type="text",
    text="Questions belong to four families. Unanswerable questions resemble the others.",
    locator=Locator(section="2 The Dataset"),
)  # fmt: skip
TABLE = Chunk(
    id="bench::c0003", paper_id="bench", type="table",
    text="Table 1: Number of questions per family and split.\nFamily | Test | Total\nLookup | 880 | 1,091",
    locator=Locator(section="2 The Dataset", object_id="Table 1"),
)  # fmt: skip
ANNOTATION = Chunk(
    id="bench::c0004", paper_id="bench", type="text",
    text="Six annotators with graduate training wrote the questions.", locator=Locator(section="3 Annotation"),
)  # fmt: skip
SPLIT = Chunk(
    id="verify::c0003", paper_id="verify", type="text",
    text="We evaluate on the 1,000 test questions of LocatorQA, of which 120 are unanswerable.",
    locator=Locator(section="3 Results"),
)  # fmt: skip
PAPERS = {"bench": [ABSTRACT, DATASET, TABLE, ANNOTATION], "verify": [SPLIT]}
QUESTION = "How many questions does LocatorQA contain?"


def test_the_papers_counts_of_what_is_asked_join_evidence_that_counts_only_a_split() -> None:
    evidence = [SPLIT, DATASET, ANNOTATION]  # "1,000 test questions" counts one split, not the benchmark
    completed = counting_chunks(evidence, PAPERS, QUESTION)
    assert [c.id for c in completed] == [SPLIT.id, DATASET.id, ANNOTATION.id, ABSTRACT.id, TABLE.id]
    more = Chunk(id="bench::c0009", paper_id="bench", type="text", text="A pilot used 40 questions.")
    many = {**PAPERS, "bench": [*PAPERS["bench"], more]}
    added = counting_chunks(evidence, many, QUESTION)[len(evidence) :]
    assert [c.id for c in added] == [ABSTRACT.id, TABLE.id][:PER_PAPER]  # a paper's first ones, in reading order


def test_nothing_is_added_when_the_evidence_counts_it_or_the_question_counts_nothing() -> None:
    assert counting_chunks([TABLE, DATASET], PAPERS, QUESTION) == [TABLE, DATASET]
    assert counting_chunks([SPLIT, DATASET], PAPERS, "Which families do the questions belong to?") == [SPLIT, DATASET]
    # a question naming the split is answered by the split's count: nothing is missing
    assert counting_chunks([SPLIT], PAPERS, "How many test questions does LocatorQA contain?") == [SPLIT]


def test_the_abstracts_count_answers_when_the_body_states_none() -> None:
    evidence = counting_chunks([SPLIT, DATASET, ANNOTATION], PAPERS, QUESTION)
    answer = extractive_answer(QUESTION, evidence, titles={"bench": "The LocatorQA Benchmark", "verify": "Checks"})
    assert answer.text == "We introduce LocatorQA, a benchmark of 1,240 questions over 3,100 papers. [1]", answer.text
    assert answer.citations[0].chunk_id == ABSTRACT.id
    # a question that counts nothing still reads the body before the abstract
    body = extractive_answer("Who wrote the questions of LocatorQA?", [ANNOTATION, ABSTRACT, DATASET])
    assert body.citations[0].chunk_id == ANNOTATION.id, body.text


def test_a_which_paper_question_reads_the_abstracts_of_the_papers_read() -> None:
    from lit3r.reading.abstracts import with_abstracts

    papers = {"bench": [ABSTRACT, DATASET, TABLE, ANNOTATION], "verify": [SPLIT]}
    question = "Which paper introduced LocatorQA?"
    completed = with_abstracts([DATASET, SPLIT], papers, question)
    assert [c.id for c in completed] == [DATASET.id, SPLIT.id, ABSTRACT.id]  # "verify" has no abstract chunk
    assert with_abstracts([ABSTRACT, DATASET], papers, question) == [ABSTRACT, DATASET]  # there already: once
    assert with_abstracts([DATASET], papers, "What do the questions resemble?") == [DATASET]  # another question
    answer = extractive_answer(question, completed)
    assert answer.sufficient and answer.citations[0].chunk_id == ABSTRACT.id
