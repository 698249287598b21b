"""Answer validation against the corpus, and the deterministic citation repair."""

from __future__ import annotations

import pytest

from lit3r.answers import repair_citations, validate_answer
from lit3r.models import ABSTENTION, Answer, Chunk, Citation, Locator
from lit3r.reading import extractive_answer

A = Chunk(
    id="pa::c0001",
    paper_id="pa",
    type="text",
    text="BM25 reaches a recall at 10 of 0.44.\nThe dense encoder reaches 0.55.",
    locator=Locator(page=3, section="5 Baselines", paragraph=7),
)
B = Chunk(
    id="pb::c0002",
    paper_id="pb",
    type="table",
    text="Table 1: Recall.\nRRF | 0.63",
    locator=Locator(page=5, object_id="Table 1"),
)
LOOKUP = {c.id: c for c in (A, B)}.get


def cite(number: int, chunk: Chunk, quote: str, **changes: object) -> Citation:
    """A citation of ``chunk``, optionally with wrong fields."""
    fields = {"chunk_id": chunk.id, "paper_id": chunk.paper_id, "locator": chunk.locator, "quote": quote}
    return Citation(number=number, **(fields | changes))


def answer(text: str, citations: list[Citation], **fields: object) -> Answer:
    return Answer(
        question="What recall do the baselines reach?",
        text=text,
        citations=citations,
        **({"sufficient": True} | fields),
    )


VALID = answer(
    "BM25 reaches 0.44 [1] and RRF reaches 0.63 [2].",
    [cite(1, A, "BM25 reaches a recall at 10 of 0.44."), cite(2, B, "RRF | 0.63")],
)


def kinds(problems: list[str]) -> set[str]:
    """The kinds of the problems (the text before the first colon)."""
    return {p.split(":", 1)[0] for p in problems}


def test_valid_answer_has_no_problems() -> None:
    assert validate_answer(VALID, LOOKUP) == []
    whitespace = answer("BM25 [1].", [cite(1, A, "0.44.  The dense\n encoder")])
    assert validate_answer(whitespace, LOOKUP) == []
    grouped = answer("Both [1, 2].", VALID.citations)
    assert validate_answer(grouped, LOOKUP) == []


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        (cite(2, B, "RRF | 0.63", chunk_id="pb::c9999"), {"unknown-chunk"}),
        (cite(2, B, "RRF | 0.63", paper_id="pa"), {"paper-mismatch"}),
        (cite(2, B, "RRF | 0.63", locator=Locator(page=6, object_id="Table 1")), {"locator-mismatch"}),
        (cite(2, B, "RRF | 0.71"), {"quote-not-found"}),
        (cite(2, B, "   "), {"quote-not-found"}),
        (cite(2, B, "RRF | 0.63", chunk_id=A.id), {"paper-mismatch", "locator-mismatch", "quote-not-found"}),
    ],
)
def test_each_citation_problem(bad: Citation, expected: set[str]) -> None:
    problems = validate_answer(VALID.model_copy(update={"citations": [VALID.citations[0], bad]}), LOOKUP)
    assert kinds(problems) == expected
    assert all("[2]" in p for p in problems)


def test_marker_problems() -> None:
    dangling = VALID.model_copy(update={"text": VALID.text + " Also 0.55 [3]."})
    assert validate_answer(dangling, LOOKUP) == ["dangling-marker: marker [3] has no citation"]
    unused = VALID.model_copy(update={"text": "BM25 reaches 0.44 [1]."})
    assert validate_answer(unused, LOOKUP) == ["unused-citation: citation [2] is never referenced"]
    twice = VALID.model_copy(update={"citations": [*VALID.citations, cite(2, A, "0.55")]})
    assert kinds(validate_answer(twice, LOOKUP)) == {"duplicate-number"}


def test_option_problems() -> None:
    options = ["BM25", "RRF"]
    chosen = VALID.model_copy(update={"option": "RRF"})
    assert validate_answer(chosen, LOOKUP, options) == []
    for wrong, offered in [("rrf", options), ("RRF ", options), ("RRF", None)]:
        problems = validate_answer(VALID.model_copy(update={"option": wrong}), LOOKUP, offered)
        assert kinds(problems) == {"invalid-option"}
    assert kinds(validate_answer(VALID, LOOKUP, options)) == {"invalid-option"}  # none chosen
    abstained = answer(ABSTENTION, [], sufficient=False)
    assert validate_answer(abstained, LOOKUP, options) == []


def test_empty_or_uncited_sufficient_answers() -> None:
    assert kinds(validate_answer(answer("  [1] ", [VALID.citations[0]]), LOOKUP)) == {"empty-answer"}
    assert kinds(validate_answer(answer("", []), LOOKUP)) == {"empty-answer", "uncited-answer"}
    assert kinds(validate_answer(answer("BM25 is best.", []), LOOKUP)) == {"uncited-answer"}
    assert validate_answer(answer(ABSTENTION, [], sufficient=False), LOOKUP) == []


# --- repair -------------------------------------------------------------------------------------


def test_repair_drops_bad_citations_and_their_sentences_and_renumbers() -> None:
    broken = answer(
        "BM25 reaches 0.44 [1]. Something invented [2]. RRF reaches 0.63 [3].",
        [cite(1, A, "recall at 10 of 0.44"), cite(2, A, "invented text"), cite(3, B, "RRF | 0.63")],
        option="RRF",
        candidate_papers=["pb", "pa"],
    )
    repaired = repair_citations(broken, LOOKUP)
    assert repaired.text == "BM25 reaches 0.44 [1]. RRF reaches 0.63 [2]."
    assert [(c.number, c.chunk_id) for c in repaired.citations] == [(1, A.id), (2, B.id)]
    assert (repaired.option, repaired.candidate_papers, repaired.sufficient) == ("RRF", ["pb", "pa"], True)
    assert validate_answer(repaired, LOOKUP, ["BM25", "RRF"]) == []


def test_repair_renumbers_by_first_use_and_handles_groups_and_dangling_markers() -> None:
    broken = answer(
        "RRF reaches 0.63 [3][1]. Dense reaches 0.55 [7]. BM25 reaches 0.44 [1, 9].",
        [cite(1, A, "of 0.44."), cite(3, B, "RRF | 0.63"), cite(9, A, "not there")],
    )
    repaired = repair_citations(broken, LOOKUP)
    assert repaired.text == "RRF reaches 0.63 [1][2]. BM25 reaches 0.44 [2]."
    assert [(c.number, c.chunk_id) for c in repaired.citations] == [(1, B.id), (2, A.id)]
    assert validate_answer(repaired, LOOKUP) == []


def test_repair_takes_paper_locator_and_exact_quote_from_the_chunk() -> None:
    sloppy = answer(
        "Dense reaches 0.55 [1].", [cite(1, A, "0.44. The dense  encoder", paper_id="pb", locator=Locator())]
    )
    repaired = repair_citations(sloppy, LOOKUP)
    assert repaired.citations == [cite(1, A, "0.44.\nThe dense encoder")]
    assert validate_answer(repaired, LOOKUP) == []


def test_repair_drops_unused_citations() -> None:
    extra = VALID.model_copy(update={"text": "RRF reaches 0.63 [2]."})
    repaired = repair_citations(extra, LOOKUP)
    assert repaired.text == "RRF reaches 0.63 [1]."
    assert [(c.number, c.chunk_id) for c in repaired.citations] == [(1, B.id)]


@pytest.mark.parametrize(
    "broken",
    [
        answer("Invented [1]. Also invented [2].", [cite(1, A, "nope"), cite(2, B, "RRF", chunk_id="x::c1")]),
        answer("A claim with no citation at all.", []),
        answer("", []),
        answer("Uncited claim. Dangling [4].", [cite(1, A, "0.44")]),
        answer("Unsupported [1].", [cite(1, A, "nope")], sufficient=False),
        answer("Partly [1]. Unsupported [2].", [cite(1, A, "0.44"), cite(2, A, "nope")], sufficient=False),
    ],
)
def test_repair_with_nothing_valid_abstains(broken: Answer) -> None:
    broken = broken.model_copy(update={"option": "RRF", "candidate_papers": ["pa"], "rounds": 2})
    repaired = repair_citations(broken, LOOKUP)
    assert (repaired.text, repaired.citations, repaired.sufficient, repaired.option) == (
        ABSTENTION,
        [],
        False,
        None,
    )
    assert (repaired.question, repaired.candidate_papers, repaired.rounds) == (broken.question, ["pa"], 2)
    assert validate_answer(repaired, LOOKUP) == []


def test_repair_leaves_valid_answers_alone() -> None:
    assert repair_citations(VALID, LOOKUP) is VALID
    abstained = answer("Insufficient evidence: no paper reports test-set recall.", [], sufficient=False)
    assert repair_citations(abstained, LOOKUP) is abstained
    extracted = extractive_answer("What recall at 10 does the dense encoder reach?", [A, B])
    assert extracted.sufficient and repair_citations(extracted, LOOKUP) is extracted
