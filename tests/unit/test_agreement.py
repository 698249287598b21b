"""Whether the papers a question names agree on a value: each named paper read on its own, the numbers of their
answering quotes compared (lit3r.reading.agreement)."""

from __future__ import annotations

from lit3r.answers import validate_answer
from lit3r.models import Chunk, Locator
from lit3r.reading.agreement import agreement_answer, agreement_parts, named_papers

TITLES = {
    "sparse": "Sparse Retrieval Revisited for Scientific Text",
    "fusion": "Reciprocal Rank Fusion for Hybrid Paper Search",
    "dense": "Dense Retrieval With Small Encoders",
}


def table(paper: str, rows: str) -> Chunk:
    return Chunk(
        id=f"{paper}::c0006", paper_id=paper, type="table",
        text=f"Table 1: Paper-level recall at 10 on the development set.\nSystem | Recall@10\n{rows}",
        locator=Locator(section="3 Results", object_id="Table 1"),
    )  # fmt: skip


def prose(paper: str, text: str) -> Chunk:
    return Chunk(id=f"{paper}::c0001", paper_id=paper, type="text", text=text, locator=Locator(section="1 Intro"))


QUESTION = "Do the sparse retrieval and rank fusion papers agree on the recall at 10 of tuned BM25?"


def papers(fusion_bm25: str) -> dict[str, list[Chunk]]:
    return {
        "sparse": [
            prose("sparse", "Tuning the two parameters of BM25 matters more than any other choice we studied."),
            table("sparse", "BM25, defaults | 0.39\nBM25, tuned | 0.44"),
        ],
        "fusion": [prose("fusion", "We fuse rankings."), table("fusion", f"BM25 | {fusion_bm25}\nDense | 0.55")],
        "dense": [prose("dense", "Small encoders are cheap.")],
    }


def test_the_question_names_its_papers_by_their_titles() -> None:
    assert agreement_parts(QUESTION) == (
        ["the sparse retrieval", "rank fusion papers"],
        "the recall at 10 of tuned BM25",
    )
    assert named_papers(["the sparse retrieval", "rank fusion papers"], TITLES) == ["sparse", "fusion"]
    assert named_papers(["the retrieval", "rank fusion"], TITLES) is None  # two titles say "retrieval"
    assert agreement_parts("Does BM25 agree?") is None and agreement_parts("Which papers agree on k?") is None
    assert agreement_parts("Do the sparse and fusion papers agree on whether tuning helps?") is None  # a finding


def test_papers_stating_the_same_value_agree_with_both_quotes() -> None:
    chunks = papers("0.44")
    answer = agreement_answer(QUESTION, TITLES, chunks)
    assert answer is not None and answer.option == "Yes"
    assert answer.text == "Yes — BM25, tuned | 0.44 [1] BM25 | 0.44 [2]", answer.text
    assert [c.paper_id for c in answer.citations] == ["sparse", "fusion"]
    assert validate_answer(answer, {c.id: c for cs in chunks.values() for c in cs}.get) == []


def test_papers_stating_other_values_disagree() -> None:
    answer = agreement_answer(QUESTION, TITLES, papers("0.47"))
    assert answer is not None and answer.option == "No"
    assert answer.text == "No — BM25, tuned | 0.44 [1] BM25 | 0.47 [2]", answer.text


def test_a_paper_without_the_value_leaves_the_question_to_the_reader() -> None:
    chunks = papers("0.44")
    chunks["fusion"] = [prose("fusion", "We fuse rankings.")]
    assert agreement_answer(QUESTION, TITLES, chunks) is None
    assert agreement_answer("Do the sparse and dense papers agree on BM25?", TITLES, papers("0.44")) is None
