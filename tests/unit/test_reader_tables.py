"""Superlative questions answered from the table row that holds the extreme, and tables a sentence names."""

from __future__ import annotations

from lit3r.models import Chunk, Locator, TableCell
from lit3r.prompts.common import AnswerSpec
from lit3r.reading import extractive_answer
from lit3r.reading.llm_reader import Fact, Synthesis, to_answer
from lit3r.reading.quotes import candidates
from lit3r.reading.tables import asked_term, quote_cell, referenced_tables, superlative_row, wanted_extreme

TABLE = Chunk(
    id="p::c0006",
    paper_id="p",
    type="table",
    text="Table 1: Paper-level recall at 10 of single retrievers and fusion methods.\n"
    "Method | Recall@10 | Latency (ms)\nBM25 | 0.44 | 12\nDense encoder | 0.55 | 40\n"
    "Reciprocal rank fusion (k = 60) | 0.63 | 55",
    locator=Locator(section="3 Results", object_id="Table 1"),
)
POINTER = Chunk(
    id="p::c0005",
    paper_id="p",
    type="text",
    text="Table 1 gives paper-level recall at 10 on the development questions.",
    locator=Locator(section="3 Results"),
)
FIGURE = Chunk(
    id="p::c0008",
    paper_id="p",
    type="figure",
    text="Figure 1: Recall by budget.",
    locator=Locator(object_id="Figure 1"),
)


def test_the_row_with_the_asked_extreme_of_the_named_column() -> None:
    pool = candidates([TABLE])
    assert superlative_row("Which method reached the highest recall at 10?", pool).text.startswith("Reciprocal")
    assert superlative_row("Which method has the lowest latency?", pool).text.startswith("BM25")
    # "best" reads the column's direction: lower latency is better
    assert superlative_row("Which method had the best latency?", pool).text.startswith("BM25")
    assert superlative_row("Which method had the best recall?", pool).text.startswith("Reciprocal")


def test_no_row_without_an_extreme_or_a_named_column() -> None:
    pool = candidates([TABLE])
    assert superlative_row("What recall at 10 does BM25 reach?", pool) is None  # no extreme asked
    assert superlative_row("Which method is the best?", pool) is None  # two numeric columns, neither named
    assert wanted_extreme("Which is the worst?", "Error rate") == "max"


def test_the_reader_quotes_the_row_of_a_table_it_is_given() -> None:
    question = "Which fusion method reached the highest paper-level recall at 10?"
    answer = extractive_answer(question, [POINTER, TABLE])
    assert answer.text == "Reciprocal rank fusion (k = 60) | 0.63 | 55 [1]"
    assert answer.citations[0].chunk_id == TABLE.id and answer.answers_question


def test_a_table_a_sentence_names_joins_the_evidence_after_it_figures_do_not() -> None:
    pointer = POINTER.model_copy(update={"text": POINTER.text + " Figure 1 plots it."})
    papers = {"p": [pointer, TABLE, FIGURE]}
    assert [c.id for c in referenced_tables([pointer], papers)] == [pointer.id, TABLE.id]
    assert [c.id for c in referenced_tables([TABLE, pointer], papers)] == [TABLE.id, pointer.id]  # once
    other = pointer.model_copy(update={"paper_id": "q", "id": "q::c0001"})
    assert [c.id for c in referenced_tables([other], papers)] == [other.id]  # only its own paper's tables


def test_a_superlative_question_reads_every_table_of_the_papers_read() -> None:
    other = POINTER.model_copy(update={"id": "p::c0001", "text": "We compare retrievers on LocatorQA."})
    papers = {"p": [other, TABLE, FIGURE]}
    assert [c.id for c in referenced_tables([other], papers)] == [other.id]  # no table named, no extreme asked
    asked = "Which retriever reached the highest recall at 10?"
    assert [c.id for c in referenced_tables([other], papers, asked)] == [other.id, TABLE.id]


def test_an_extreme_the_table_does_not_measure_is_not_answered_from_it() -> None:
    question = "What is the highest mountain on Earth?"
    assert superlative_row(question, candidates([TABLE])) is None
    assert not extractive_answer(question, [POINTER, TABLE]).sufficient


def test_a_table_that_does_not_name_what_is_asked_for_does_not_say_which_was_best() -> None:
    rankings = TABLE.model_copy(
        update={"text": "Table 2: Recall at 50 of each ranking.\nRanking | Recall@50\nFused | 0.71\n+ both | 0.79"}
    )
    assert asked_term("Which lambda was best for blending the ranks?") == "lambda"
    assert asked_term("What is the best method?") is None and asked_term("In which split is recall highest?") == "split"
    assert superlative_row("Which lambda was best for blending the ranks?", candidates([rankings])) is None
    assert superlative_row("Which ranking was best?", candidates([rankings])).text.startswith("+ both")


def test_a_quoted_row_names_its_table_row_and_the_column_read() -> None:
    from lit3r.answers import repair_citations
    from lit3r.models import TableCell

    answer = extractive_answer("Which fusion method reached the highest paper-level recall at 10?", [POINTER, TABLE])
    cell = TableCell(
        table="Table 1", row=3, row_label="Reciprocal rank fusion (k = 60)", column="Recall@10", value="0.63"
    )
    assert answer.citations[0].cell == cell
    assert cell.describe() == "Table 1 · row 3 (Reciprocal rank fusion (k = 60)) · Recall@10 = 0.63"
    lookup = {c.id: c for c in (POINTER, TABLE)}.get
    assert repair_citations(answer, lookup).citations[0].cell == cell  # the agent's repair keeps it
    # a row quoted for another question names its row only; a sentence names no cell
    row = extractive_answer("What does BM25 reach?", [TABLE], form="sentence")
    assert row.citations[0].cell == TableCell(table="Table 1", row=1, row_label="BM25")
    assert extractive_answer("What does Table 1 give?", [POINTER]).citations[0].cell is None


def test_the_answer_document_carries_the_cell() -> None:
    from lit3r.app.documents import answer_document

    answer = extractive_answer("Which fusion method reached the highest paper-level recall at 10?", [POINTER, TABLE])
    document = answer_document(answer, {})
    assert document.model_dump(mode="json")["citations"][0]["cell"]["column"] == "Recall@10"


def test_a_quote_from_one_row_names_its_row_and_a_quoted_value_its_column() -> None:
    row = "Dense encoder | 0.55 | 40"
    assert quote_cell(TABLE, row) == TableCell(table="Table 1", row=2, row_label="Dense encoder")
    assert quote_cell(TABLE, " 0.63 ") == TableCell(
        table="Table 1", row=3, row_label="Reciprocal rank fusion (k = 60)", column="Recall@10", value="0.63"
    )
    assert quote_cell(TABLE, "Dense encoder") == TableCell(table="Table 1", row=2, row_label="Dense encoder")
    assert quote_cell(TABLE, "0.44 | 12\nDense encoder") is None  # two rows
    assert quote_cell(TABLE, "Paper-level recall at 10") is None  # the caption
    assert quote_cell(TABLE, "Method | Recall@10") is None  # the header
    assert quote_cell(POINTER, "paper-level recall") is None  # not a table


def test_the_model_readers_citation_of_a_table_row_names_the_cell() -> None:
    synthesis = Synthesis(
        facts=[Fact(value="0.55", chunk_id=TABLE.id, quote="Dense encoder | 0.55 | 40")],
        answer=f"The dense encoder reaches 0.55 [{TABLE.id}].",
    )
    answer = to_answer("What recall does the dense encoder reach?", synthesis, {TABLE.id: TABLE}, AnswerSpec(), [])
    assert answer.citations[0].cell == TableCell(table="Table 1", row=2, row_label="Dense encoder")
    # how sure: the quoted row covers the question (a quantity question answered with a number)
    assert answer.answers_question is True and answer.confidence is not None and answer.confidence > 0.25


def test_the_model_readers_abstention_answers_nothing() -> None:
    synthesis = Synthesis(facts=[], answer="", sufficient=False)
    answer = to_answer("What recall does the dense encoder reach?", synthesis, {TABLE.id: TABLE}, AnswerSpec(), [])
    assert not answer.sufficient and answer.answers_question is False and answer.confidence is None
