"""The one Reader protocol: the offline reader and either LLM reader behind it, as synthesize_answer calls them."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass

from lit3r.models import ABSTENTION, Answer, Chunk, Citation, Fallback, Locator, Paper
from lit3r.prompts.common import AnswerSpec
from lit3r.reading.compact_reader import CompactReader
from lit3r.reading.llm_reader import LLMReader
from lit3r.reading.reader import ExtractiveReader, ModelReader, PaperReader, Reader

CHUNKS = [
    Chunk(id="p2::c0001", paper_id="p2", type="text", text="BM25 saturates term frequency.", locator=Locator(page=2)),
    Chunk(id="p1::c0001", paper_id="p1", type="text", text="Dense retrieval wins on recall.", locator=Locator(page=1)),
]
PAPERS = {p: Paper(id=p, title=f"Paper {p}") for p in ("p1", "p2", "p3")}


@dataclass
class Result:
    answer: Answer
    fallback: Fallback | None = None


class ScriptedPaperReader:
    """A PaperReader that records what it was asked and answers with option letter B (or falls back)."""

    def __init__(self, fallback: Fallback | None = None) -> None:
        self.calls: list[tuple[str, list[str], list[str], AnswerSpec]] = []
        self.fallback = fallback

    def run(self, question: str, papers: Sequence[Paper], chunks: Sequence[Chunk], spec: AnswerSpec) -> Result:
        self.calls.append((question, [p.id for p in papers], [c.id for c in chunks], spec))
        chunk = chunks[0]
        cite = Citation(number=1, chunk_id=chunk.id, paper_id=chunk.paper_id, locator=chunk.locator, quote=chunk.text)
        answer = Answer(question=question, text=f"{chunk.text} [1]", citations=[cite], sufficient=True, option="B")
        return Result(answer, self.fallback)


def test_every_reader_is_a_reader_and_both_llm_readers_share_one_run() -> None:
    assert isinstance(ExtractiveReader(), Reader) and isinstance(ModelReader(ScriptedPaperReader(), PAPERS), Reader)
    wanted = list(inspect.signature(PaperReader.run).parameters)
    for reader in (LLMReader, CompactReader):
        assert list(inspect.signature(reader.run).parameters) == wanted, reader


def test_the_model_reader_letters_the_options_reads_the_evidence_papers_in_order_and_names_the_option() -> None:
    inner = ScriptedPaperReader()
    answer = ModelReader(inner, PAPERS)("Which wins?", CHUNKS, ["BM25", "dense retrieval"], sufficient=True)
    (question, papers, chunks, spec) = inner.calls[0]
    assert (question, papers, chunks) == ("Which wins?", ["p2", "p1"], ["p2::c0001", "p1::c0001"])
    assert spec.options == {"A": "BM25", "B": "dense retrieval"}
    assert answer.option == "dense retrieval" and answer.fallback_steps == []


def test_below_the_gate_the_model_is_not_asked_and_a_fallback_travels_as_a_record() -> None:
    inner = ScriptedPaperReader(Fallback(stage="read", reason="stage 2 call failed: timeout"))
    abstained = ModelReader(inner, PAPERS)("Which wins?", CHUNKS, None, sufficient=False)
    assert abstained.text == ABSTENTION and not abstained.sufficient and inner.calls == []
    answer = ModelReader(inner, PAPERS)("Which wins?", CHUNKS, None, sufficient=True)
    assert [f.stage for f in answer.fallback_steps] == ["read"] and answer.option == "B"  # no options: as written
    assert answer.fallback_steps[0].describe() == "read: stage 2 call failed: timeout; the extractive reader answered"


def test_the_extractive_reader_quotes_the_evidence_or_abstains() -> None:
    answer = ExtractiveReader()("What does BM25 saturate?", CHUNKS, None, sufficient=True)
    assert answer.sufficient and answer.citations[0].chunk_id == "p2::c0001" and "saturates" in answer.text
    assert ExtractiveReader()("What does BM25 saturate?", CHUNKS, None, sufficient=False).text == ABSTENTION
