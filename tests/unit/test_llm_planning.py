"""LLM decomposer, verifier, HyDE writer and two-stage reader against scripted fake chat models (no network)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from langchain_core.exceptions import ModelAuthenticationError
from langchain_core.messages import BaseMessage

from lit3r.llm.trace import TraceRecorder
from lit3r.llm.wrapper import LLM
from lit3r.models import ABSTENTION, Answer, Chunk, EvidenceChunk, Locator, Paper, PaperEvidence
from lit3r.prompts.common import AnswerSpec
from lit3r.prompts.retrieval import MISSING_FILLER
from lit3r.reading.llm_reader import (
    LLMReader,
    SynthesisError,
    choose_option,
    locate_quote,
    parse_synthesis,
    verbatim_quote,
)
from lit3r.retrieval.llm_planning import LLMDecomposer, LLMHyde, LLMVerifier, Subqueries
from lit3r.retrieval.planning import Decomposer, HydeWriter, Verifier
from lit3r.settings.llm import LLMSettings

from fakes.chat import FakeToolCallingModel, tool_call

BAD_KEY = ModelAuthenticationError("bad key")  # not transient: fails at once


def make_llm(script: list) -> tuple[LLM, FakeToolCallingModel]:
    """An LLM over a scripted fake that never sleeps."""
    model = FakeToolCallingModel(script=script)
    return LLM(model, LLMSettings(max_attempts=2), sleep=lambda _: None), model


def prompt_of(model: FakeToolCallingModel, call: int = -1) -> str:
    """The user message of one recorded call."""
    return model.calls[call]["messages"][-1].text


def subqueries(*queries: str) -> dict:
    return tool_call("Subqueries", subqueries=list(queries))


# ---------------------------------------------------------------- decomposer


def test_llm_planners_implement_the_protocols():
    llm, _ = make_llm([])
    assert isinstance(LLMDecomposer(llm), Decomposer)
    assert isinstance(LLMVerifier(llm), Verifier)
    assert isinstance(LLMHyde(llm), HydeWriter)


def test_first_round_returns_at_most_limit_subqueries_without_repeats():
    llm, model = make_llm([subqueries("a b", "A  B", "c", "d", "e", "f")])
    out = LLMDecomposer(llm).decompose("What is X?", [], "", 4)
    assert out == ["a b", "c", "d", "e"]
    assert "exactly 4 subqueries" in prompt_of(model)
    assert model.calls[0]["messages"][0].type == "system" and len(model.calls[0]["messages"]) == 2


def test_later_round_sees_previous_subqueries_and_the_missing_note():
    llm, model = make_llm([subqueries("old query", "new query")])
    out = LLMDecomposer(llm).decompose("What is X?", ["old query"], "the F1 on NaturalQ", 4)
    assert out == ["new query"]  # a repeat of an earlier subquery is dropped
    prompt = prompt_of(model)
    assert "- old query" in prompt and "the F1 on NaturalQ" in prompt and MISSING_FILLER not in prompt


def test_later_round_with_an_empty_missing_note_gets_the_filler_and_may_stop():
    llm, model = make_llm([subqueries()])
    assert LLMDecomposer(llm).decompose("What is X?", ["q1"], "", 4) == []
    assert MISSING_FILLER in prompt_of(model)


def test_first_round_never_returns_nothing():
    llm, _ = make_llm([subqueries("  ")])
    assert LLMDecomposer(llm).decompose("What is X?", [], "", 4) == ["What is X?"]


def test_venue_tag_is_put_in_front_of_every_subquery():
    llm, model = make_llm([subqueries("[NAACL 2025] MCTS method figure", "tree search reasoning")])
    out = LLMDecomposer(llm).decompose("Which NAACL 2025 papers use MCTS?", [], "", 4)
    assert out == ["[NAACL 2025] MCTS method figure", "[NAACL 2025] tree search reasoning"]
    assert "begin every subquery with the tag [NAACL 2025]" in prompt_of(model)


@pytest.mark.parametrize("failure", [[BAD_KEY], ["not json", "still not json"]])
def test_decomposition_failure_falls_back_to_the_question_and_is_recorded(failure, caplog):
    llm, _ = make_llm(failure)
    notes = TraceRecorder()
    out = LLMDecomposer(llm, recorder=notes).decompose("What is X?", [], "", 4)
    assert out == ["What is X?"]
    assert [(e.type, e.name) for e in notes.events] == [("fallback", "decompose.fallback")]
    assert notes.events[0].data["subqueries"] == ["What is X?"]
    (fallback,) = notes.fallbacks()
    assert fallback.stage == "decompose" and fallback.instead == "the question itself was searched"
    assert "decompose fell back" in caplog.text


def test_limit_zero_asks_nothing():
    llm, model = make_llm([])
    assert LLMDecomposer(llm).decompose("Q?", [], "", 0) == [] and not model.calls


def test_the_subquery_schema_is_what_the_model_is_asked_for():
    llm, model = make_llm([subqueries("x")])
    LLMDecomposer(llm).decompose("Q?", [], "", 4)
    assert model.calls[0]["kwargs"]["tool_choice"] == "Subqueries"
    assert Subqueries.model_json_schema()["required"] == ["subqueries"]


# ---------------------------------------------------------------- verifier

PAPERS = {
    "p1": Paper(id="p1", title="500x Compressor", venue="ACL", year=2025),
    "p2": Paper(id="p2", title="ICAE", venue="ICLR", year=2024),
}
CHUNKS = {
    "p1::c0001": Chunk(
        id="p1::c0001",
        paper_id="p1",
        type="table",
        text="Table 4: F1 on NaturalQ. 500xCompressor reaches 27.60 F1. ICAE reaches 12.90 F1.",
        locator=Locator(page=6, section="4.2 Results", object_id="Table 4"),
    ),
    "p1::c0002": Chunk(id="p1::c0002", paper_id="p1", type="text", text="We compress prompts 500 to 1."),
    "p2::c0001": Chunk(id="p2::c0001", paper_id="p2", type="title_abstract", text="ICAE: in-context autoencoder."),
}


def pool_evidence() -> list[PaperEvidence]:
    by_paper: dict[str, list[EvidenceChunk]] = {}
    for chunk in CHUNKS.values():
        by_paper.setdefault(chunk.paper_id, []).append(EvidenceChunk(chunk_id=chunk.id, score=1.0, text=chunk.text))
    return [PaperEvidence(paper_id=p, title=PAPERS[p].title, chunks=c) for p, c in by_paper.items()]


def test_verifier_verdict_is_parsed_and_unknown_papers_dropped():
    reply = tool_call(
        "EvidenceVerdict", papers_with_evidence=["p1", "ghost", "p1"], sufficient=False, missing="ICAE F1"
    )
    llm, model = make_llm([reply])
    verdict = LLMVerifier(llm, papers=PAPERS, chunks=CHUNKS).verify("How much better?", pool_evidence(), 0.7)
    assert verdict.sufficient is False and verdict.papers_with_evidence == ["p1"] and verdict.missing == "ICAE F1"
    prompt = prompt_of(model)
    assert 'venue="ACL"' in prompt and 'year="2025"' in prompt and 'object="Table 4"' in prompt
    assert "<evidence>" in prompt and "Answer types: free-form text." in prompt


def test_verifier_sufficient_verdict_clears_the_missing_note_and_shows_the_answer_spec():
    reply = json.dumps({"papers_with_evidence": ["p1", "p2"], "sufficient": True, "missing": "nothing"})
    llm, model = make_llm([reply])
    spec = AnswerSpec(types=["multiple_choice"], options={"A": "14.70"})
    verdict = LLMVerifier(llm, papers=PAPERS, spec=spec).verify("Q?", pool_evidence(), None)
    assert verdict.sufficient and verdict.papers_with_evidence == ["p1", "p2"] and verdict.missing == ""
    assert "A. 14.70" in prompt_of(model)


@pytest.mark.parametrize("failure", [[BAD_KEY], ["{}", "{}"]])
def test_verifier_failure_is_an_insufficient_verdict_with_a_note(failure):
    llm, _ = make_llm(failure)
    notes = TraceRecorder()
    verdict = LLMVerifier(llm, recorder=notes).verify("Q?", pool_evidence(), 0.9)
    assert verdict.sufficient is False and verdict.missing.startswith("verifier failed")
    assert verdict.papers_with_evidence == [] and notes.events[0].name == "verify.fallback"


def test_verifier_without_evidence_calls_nothing():
    llm, model = make_llm([])
    assert LLMVerifier(llm).verify("Q?", [], None).sufficient is False and not model.calls


# ---------------------------------------------------------------- HyDE


def test_hyde_writes_a_passage_and_falls_back_to_the_query():
    llm, model = make_llm([tool_call("HydePassage", passage="We  compress prompts.\n"), BAD_KEY])
    hyde = LLMHyde(llm)
    assert hyde.write("prompt compression") == "We compress prompts."
    assert "<query>\nprompt compression\n</query>" in prompt_of(model, 0)
    assert hyde.write("prompt compression") == "prompt compression"


# ---------------------------------------------------------------- reader

READER_PAPERS = [PAPERS["p1"], PAPERS["p2"], Paper(id="p3", title="No chunks here")]
SPEC_MC = AnswerSpec(types=["freeform", "multiple_choice"], options={"A": "1.60", "B": "14.70"})


def judgement(relevant: bool, ids: Sequence[str] = (), reason: str = "") -> str:
    return json.dumps(
        {"relevant": relevant, "sufficient": relevant, "supporting_chunk_ids": list(ids), "reason": reason}
    )


def fact(chunk: str, quote: str, value: str = "") -> dict:
    return {"value": value or quote, "unit": "", "paper_id": chunk.split("::")[0], "chunk_id": chunk, "quote": quote}


def final(
    answer: str,
    *,
    option: str | None = None,
    table: list | None = None,
    chunk: str = "p1::c0001",
    more: tuple[dict, ...] = (),
) -> str:
    """A stage-2 reply: reasoning, then the final block (a fact quoting ``chunk``, and the ``more`` facts)."""
    body = {
        "sufficient": True,
        "facts": [{"value": "27.60", "unit": "F1", "paper_id": "p1", "chunk_id": chunk, "quote": "reaches 27.60 F1"}]
        + list(more),
        "calculations": [{"description": "difference", "expression": "27.60 - 12.90", "result": "14.70"}],
        "answer": answer,
        "option": option,
        "table": table,
    }
    return f"Reasoning: the table says 27.60 and 12.90.\n<final_answer>\n{json.dumps(body)}\n</final_answer>"


class Router:
    """Answers stage-1 prompts by paper id (the calls run in parallel, so order is not fixed) and stage-2
    prompts from a list of replies in order."""

    def __init__(self, judgements: dict[str, str], stage2: Sequence[str | BaseException]) -> None:
        self.judgements = judgements
        self.stage2 = list(stage2)
        self.stage2_prompts: list[list[BaseMessage]] = []

    def __call__(self, messages: list[BaseMessage]) -> str | BaseException:
        text = messages[1].text
        if text.startswith("Stage 1"):
            return next(reply for paper, reply in self.judgements.items() if f'<paper id="{paper}"' in text)
        self.stage2_prompts.append(messages)
        return self.stage2.pop(0)

    def script(self) -> list:
        return [self] * (len(self.judgements) + len(self.stage2))


class FallbackSpy:
    """A stand-in for the extractive reader."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str], AnswerSpec]] = []

    def __call__(self, question: str, chunks: Sequence[Chunk], spec: AnswerSpec) -> Answer:
        self.calls.append((question, [c.id for c in chunks], spec))
        return Answer(question=question, text="extractive", sufficient=True)


def make_reader(router: Router, **kwargs) -> tuple[LLMReader, FakeToolCallingModel, FallbackSpy, TraceRecorder]:
    llm, model = make_llm(router.script())
    spy, notes = FallbackSpy(), TraceRecorder()
    return LLMReader(llm, spy, recorder=notes, **kwargs), model, spy, notes


def stage1_default() -> dict[str, str]:
    return {"p1": judgement(True, ["p1::c0001", "ghost::c0009"], "Table 4 has F1."), "p2": judgement(False)}


def test_reader_stage1_then_stage2_builds_a_cited_answer():
    router = Router(stage1_default(), [final("It gains 14.70 F1 [p1::c0001].", option="(B)")])
    reader, model, spy, notes = make_reader(router)
    result = reader.run("How much better on NaturalQ?", READER_PAPERS, list(CHUNKS.values()), SPEC_MC)
    answer = result.answer
    assert answer.text == "It gains 14.70 F1 [1]." and answer.option == "14.70" and answer.sufficient
    [citation] = answer.citations
    assert (citation.number, citation.chunk_id, citation.paper_id) == (1, "p1::c0001", "p1")
    assert citation.quote == "reaches 27.60 F1" and citation.locator.object_id == "Table 4"
    assert answer.candidate_papers == ["p1", "p2", "p3"]
    assert [v.paper_id for v in result.verdicts] == ["p1", "p2"]  # p3 has no chunks: not judged
    assert result.verdicts[0].dropped_ids == ["ghost::c0009"] and not result.verdicts[1].accepted
    stage2 = router.stage2_prompts[0][1].text
    assert '<chunk id="p1::c0001"' in stage2 and "p1::c0002" not in stage2 and "p2::c0001" not in stage2
    assert "Table 4 has F1." in stage2  # the stage-1 note is shown
    assert len(model.calls) == 3 and not spy.calls and not result.repaired
    assert notes.events[0].name == "read.stage1"


def test_chain_of_thought_outside_the_final_block_is_ignored():
    reply = (
        "Let me think. Maybe [ghost::c0001] says 99.\n<final_answer>{not the last block}</final_answer>\n"
        "More reasoning.\n" + final("14.70 [p1::c0001]") + "\nTrailing chatter [ghost::c0002]."
    )
    router = Router(stage1_default(), [reply])
    reader, _, spy, _ = make_reader(router)
    answer = reader.read("Q?", READER_PAPERS, list(CHUNKS.values()))
    assert answer.text == "14.70 [1]" and "Reasoning" not in answer.text and not spy.calls


def test_invalid_citation_id_gets_a_repair_prompt_then_the_fallback():
    bad = final("14.70 [p1::c0404].")
    router = Router(stage1_default(), [bad, bad])
    reader, model, spy, notes = make_reader(router)
    result = reader.run("Q?", READER_PAPERS, list(CHUNKS.values()))
    assert (
        result.answer.text == "extractive"
        and result.fallback
        and "unknown chunk id 'p1::c0404'" in result.fallback.reason
    )
    repair = router.stage2_prompts[1]
    assert [m.type for m in repair] == ["system", "human", "ai", "human"]
    assert "unknown chunk id 'p1::c0404'" in repair[-1].text and "<final_answer>" in repair[-1].text
    assert spy.calls == [("Q?", list(CHUNKS), AnswerSpec())]
    assert notes.events[-1].name == "read.fallback" and len(model.calls) == 4


def test_a_valid_repair_is_accepted():
    router = Router(stage1_default(), [final("14.70 [p1::c0404]."), final("14.70 [p1::c0001].")])
    reader, _, spy, _ = make_reader(router)
    result = reader.run("Q?", READER_PAPERS, list(CHUNKS.values()))
    assert result.repaired and result.answer.text == "14.70 [1]." and not spy.calls


def test_option_not_among_the_options_gets_a_repair():
    router = Router(stage1_default(), [final("14.70 [p1::c0001]", option="E"), final("14.70 [p1::c0001]", option="b")])
    reader, _, _, _ = make_reader(router)
    result = reader.run("Q?", READER_PAPERS, list(CHUNKS.values()), SPEC_MC)
    assert "'E' is not one of the options A, B" in router.stage2_prompts[1][-1].text
    assert result.answer.option == "14.70" and result.repaired  # the option's text, as the extractive reader


def test_missing_final_block_and_uncited_answer_are_repaired():
    uncited = final("14.70")
    router = Router(stage1_default(), ["Just prose, no block.", uncited])
    reader, _, spy, _ = make_reader(router)
    result = reader.run("Q?", READER_PAPERS, list(CHUNKS.values()))
    assert "no final_answer block" in router.stage2_prompts[1][-1].text
    assert result.fallback and "cites no chunk" in result.fallback.reason and spy.calls


def test_table_answer_needs_the_requested_columns():
    spec = AnswerSpec(types=["freeform", "table"], columns=["Method", "F1"])
    rows_bad = [{"Method": "500xCompressor"}]
    rows_ok = [{"method": "500xCompressor", "F1": 27.6, "extra": "x"}, {"Method": "ICAE [p1::c0001]", "F1": "12.90"}]
    router = Router(
        stage1_default(), [final("Table [p1::c0001]", table=rows_bad), final("Table [p1::c0001]", table=rows_ok)]
    )
    reader, _, _, _ = make_reader(router)
    answer = reader.read("Q?", READER_PAPERS, list(CHUNKS.values()), spec)
    assert "table row 1 does not have exactly the columns Method, F1" in router.stage2_prompts[1][-1].text
    assert answer.table == [{"Method": "500xCompressor", "F1": "27.6"}, {"Method": "ICAE", "F1": "12.90"}]


def test_stage2_call_failure_goes_to_the_fallback():
    router = Router(stage1_default(), [BAD_KEY])
    reader, _, spy, _ = make_reader(router)
    result = reader.run("Q?", READER_PAPERS, list(CHUNKS.values()))
    assert result.answer.text == "extractive" and result.fallback.reason.startswith("stage 2 call failed") and spy.calls


def test_no_accepted_paper_abstains_without_stage2():
    router = Router({"p1": judgement(False), "p2": judgement(False)}, [])
    reader, model, spy, _ = make_reader(router)
    answer = reader.read("Q?", READER_PAPERS, list(CHUNKS.values()))
    assert answer.text == ABSTENTION and not answer.sufficient and len(model.calls) == 2 and not spy.calls


def test_stage1_failing_everywhere_goes_to_the_fallback():
    router = Router({"p1": BAD_KEY, "p2": BAD_KEY}, [])
    reader, _, spy, notes = make_reader(router)
    result = reader.run("Q?", READER_PAPERS, list(CHUNKS.values()))
    assert result.fallback.reason == "stage 1 failed for every paper" and spy.calls
    assert {e.name for e in notes.events} >= {"read.paper.failed", "read.fallback"}


def test_model_judged_insufficient_abstains():
    reply = '<final_answer>{"sufficient": false, "answer": "not found"}</final_answer>'
    router = Router(stage1_default(), [reply])
    reader, _, spy, _ = make_reader(router)
    answer = reader.read("Q?", READER_PAPERS, list(CHUNKS.values()), SPEC_MC)
    assert answer.text == ABSTENTION and not answer.sufficient and answer.citations == [] and not spy.calls


def test_several_citations_are_numbered_in_order_of_first_use():
    router = Router(
        {"p1": judgement(True, ["p1::c0001", "p1::c0002"]), "p2": judgement(True, ["p2::c0001"])},
        [
            final(
                "A [p2::c0001]; B [p1::c0001, p2::c0001]; C [p1::c0002].",
                more=(fact("p2::c0001", "in-context  AUTOENCODER"), fact("p1::c0002", "compress prompts 500 to 1")),
            )
        ],
    )
    reader, _, _, _ = make_reader(router)
    answer = reader.read("Q?", READER_PAPERS, list(CHUNKS.values()))
    assert answer.text == "A [1]; B [2][1]; C [3]."
    assert [c.chunk_id for c in answer.citations] == ["p2::c0001", "p1::c0001", "p1::c0002"]
    assert answer.citations[0].quote == "in-context autoencoder"  # the chunk's own slice: case and spacing repaired
    assert [c.quote for c in answer.citations[1:]] == ["reaches 27.60 F1", "compress prompts 500 to 1"]


def test_a_quote_not_in_its_chunk_or_a_cited_chunk_without_a_quote_is_sent_back_then_falls_back():
    made_up = final("The benchmark contains 9999 queries [p1::c0001].", more=(fact("p1::c0001", "9999 queries"),))
    unquoted = final("It compresses prompts [p1::c0002].")  # p1::c0002 is cited, but no fact quotes it
    router = Router(
        {"p1": judgement(True, ["p1::c0001", "p1::c0002"]), "p2": judgement(False, [])}, [made_up, unquoted]
    )
    reader, _, _, _ = make_reader(router)
    result = reader.run("Q?", READER_PAPERS, list(CHUNKS.values()))
    repair = router.stage2_prompts[1][-1].text
    assert "its quote '9999 queries' is not in chunk 'p1::c0001'" in repair
    assert result.fallback and "'p1::c0002' but no fact quotes it" in result.fallback.reason
    assert result.answer.text == "extractive"  # the deterministic reader answered instead


def test_parsing_and_validation_helpers():
    assert parse_synthesis('x <final_answer>```json\n{"answer": "a"}\n```</final_answer>').answer == "a"
    assert parse_synthesis('<final_answer>{"answer": "unclosed"}').answer == "unclosed"
    assert choose_option("Option C", {"A": "1", "C": "3"}) == "C"
    assert choose_option("3", {"A": "1", "C": "3"}) == "C"  # the option's text
    assert choose_option("D", {"A": "1", "C": "3"}) is None and choose_option(None, {"A": "1"}) is None
    text = "Setup.  The model reaches\n27.60 F1 on Natu-\nralQ. Other text."
    assert verbatim_quote(text, "reaches 27.60 f1") == "reaches\n27.60 F1"  # the chunk's own slice
    assert verbatim_quote(text, "F1 on NaturalQ") == "F1 on Natu-\nralQ"  # a word broken at a line end
    assert locate_quote("made up quote", text) is None
    with pytest.raises(SynthesisError):
        verbatim_quote(text, "made up quote")
