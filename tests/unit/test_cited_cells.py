"""A citation that quotes one table row names the table, the row and, for a one-cell quote, the column, whichever
reader wrote it (the offline reader names its cells itself; an LLM reader's citations get them in the read step)."""

from __future__ import annotations

from types import SimpleNamespace

from lit3r.llm.trace import TraceRecorder
from lit3r.models import Answer, Chunk, Citation, Locator, TableCell
from lit3r.reading.tables import cited_cells, quote_cell
from lit3r.retrieval.planning import GateVerifier
from lit3r.settings import Settings
from lit3r.tools.context import ToolContext
from lit3r.tools.synthesize_answer import synthesize_answer

TABLE = Chunk(
    id="p::c0006",
    paper_id="p",
    type="table",
    text="Table 1: Paper-level recall at 10.\nMethod | Recall@10 | Latency (ms)\nBM25 | 0.44 | 12\n"
    "Dense encoder | 0.55 | 40\nReciprocal rank fusion (k = 60) | 0.63 | 40",
    locator=Locator(section="3 Results", object_id="Table 1"),
)
TEXT = Chunk(id="p::c0005", paper_id="p", type="text", text="Fusion is best.", locator=Locator(section="3 Results"))


def test_a_quoted_row_names_its_row_and_a_quote_cell_its_column() -> None:
    assert quote_cell(TABLE, "Dense encoder | 0.55 | 40") == TableCell(
        table="Table 1", row=2, row_label="Dense encoder"
    )
    assert quote_cell(TABLE, "0.63") == TableCell(
        table="Table 1", row=3, row_label="Reciprocal rank fusion (k = 60)", column="Recall@10", value="0.63"
    )


def test_no_cell_for_a_caption_a_header_a_repeated_value_or_a_text_chunk() -> None:
    assert quote_cell(TABLE, "Paper-level recall at 10.") is None
    assert quote_cell(TABLE, "Method | Recall@10") is None
    assert quote_cell(TABLE, "40") is None  # two rows hold it: which one is meant is not known
    assert quote_cell(TEXT, "Fusion is best.") is None


def _cited(quote: str, chunk: Chunk = TABLE, cell: TableCell | None = None) -> Answer:
    citation = Citation(number=1, chunk_id=chunk.id, paper_id="p", locator=chunk.locator, quote=quote, cell=cell)
    return Answer(question="q", text=f"{quote} [1]", citations=[citation], sufficient=True)


def test_cited_cells_fills_only_citations_without_a_cell() -> None:
    lookup = {TABLE.id: TABLE, TEXT.id: TEXT}.get
    assert cited_cells(_cited("BM25 | 0.44 | 12"), lookup).citations[0].cell == TableCell(
        table="Table 1", row=1, row_label="BM25"
    )
    named = TableCell(table="Table 1", row=1, row_label="BM25", column="Latency (ms)", value="12")
    assert cited_cells(_cited("BM25 | 0.44 | 12", cell=named), lookup).citations[0].cell == named
    assert cited_cells(_cited("Fusion is best.", TEXT), lookup).citations[0].cell is None


class RowQuotingReader:
    """A reader (as an LLM reader answers) that quotes the second row of the table it is given, naming no cell."""

    name = "llm_reader"

    def __call__(self, question, evidence, options, sufficient) -> Answer:
        table = next(c for c in evidence if c.type == "table")
        return _cited("Dense encoder | 0.55 | 40", table).model_copy(update={"question": question})


def test_the_read_step_names_the_cell_an_llm_readers_citation_quotes() -> None:
    index = SimpleNamespace(
        chunk_by_id={TEXT.id: TEXT, TABLE.id: TABLE}, chunks_by_paper={"p": [TEXT, TABLE]}, papers={}
    )
    tools = ToolContext(index, Settings(), GateVerifier(None), RowQuotingReader(), recorder=TraceRecorder())  # type: ignore[arg-type]
    answer = synthesize_answer(
        tools, "Which recall did the dense encoder reach?", {TEXT.id: 1.0, TABLE.id: 0.9}, None, 1.0
    )
    assert answer.citations[0].cell == TableCell(table="Table 1", row=2, row_label="Dense encoder")
