"""Whether the papers read hold a question's words (the check before any reader reads)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from lit3r.index.bm25 import BM25Index
from lit3r.models import Chunk
from lit3r.reading.assurance import MIN_PAPER_COVERAGE, papers_coverage
from lit3r.settings import BM25Settings

TEXTS = {
    "sparse::c0000": "Tuning the saturation parameter k1 of BM25 raises recall at 10 on scientific questions.",
    "sparse::c0001": "Section titles added as a field help the sparse ranking.",
    "dense::c0000": "A small dense encoder with hard negatives matches a large one on recall.",
    "dense::c0001": "Encoding passages is eight times faster with the small encoder.",
}


@pytest.fixture(scope="module")
def index() -> SimpleNamespace:
    chunks = [Chunk(id=i, paper_id=i.split("::")[0], type="text", text=t) for i, t in TEXTS.items()]
    by_paper: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_paper.setdefault(chunk.paper_id, []).append(chunk)
    bm25 = BM25Index.build(list(TEXTS), list(TEXTS.values()), BM25Settings())
    return SimpleNamespace(bm25_chunks=bm25, chunk_by_id={c.id: c for c in chunks}, chunks_by_paper=by_paper)


def test_the_rows_holding_a_token_are_the_documents_that_hold_it(index) -> None:
    bm25 = index.bm25_chunks
    assert [bm25.ids[r] for r in bm25.holding("recal")] == ["sparse::c0000", "dense::c0000"]
    assert len(bm25.holding("nitrogen")) == 0
    assert sorted(bm25.rows({"dense::c0001", "unknown"}).tolist()) == [3]
    assert bm25.held(["recal", "encod", "nitrogen"], {"dense::c0001"}) == [(2, False), (2, True), (0, False)]


@pytest.mark.parametrize("method", ["robertson", "lucene", "atire", "bm25l", "bm25+"])
def test_every_bm25_method_finds_every_document_holding_a_token(method) -> None:
    # "recall" is in two of four documents (Robertson's idf is 0 there) and "the" in none (a stop word); a token in
    # every document (ATIRE's idf 0) is added
    texts = [f"{t} shared" for t in TEXTS.values()]
    bm25 = BM25Index.build(list(TEXTS), texts, BM25Settings(method=method))
    assert bm25.holding("recal").tolist() == [0, 2]
    assert bm25.holding("share").tolist() == [0, 1, 2, 3]


def test_the_papers_hold_a_question_about_them_and_not_one_about_something_else(index) -> None:
    about_sparse = "Does tuning the BM25 saturation parameter raise recall?"
    assert papers_coverage(about_sparse, index, ["sparse"]) == pytest.approx(1.0)
    # "recall" is in the dense paper too; "tuning", "BM25", "saturation", "parameter" are not, and weigh more
    assert 0.0 < papers_coverage(about_sparse, index, ["dense"]) < 0.3
    off_topic = "What is the boiling point of liquid nitrogen in Kelvin?"
    assert papers_coverage(off_topic, index, ["sparse", "dense"]) == 0.0 < MIN_PAPER_COVERAGE
    assert papers_coverage("Which paper is it?", index, ["dense"]) == 1.0  # no terms beyond genre words: no test
