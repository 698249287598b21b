"""The compact reader against a scripted model: every answer kind, the deterministic repairs, the repair call,
the fallback, the passages it shows, and a whole question through the session (no network, no model)."""

from __future__ import annotations

import pytest
from langchain_core.exceptions import ModelAuthenticationError

from lit3r.grounding.claims import split_claims
from lit3r.grounding.guards import quote_problem, support_problem
from lit3r.llm.trace import TraceRecorder
from lit3r.llm.wrapper import LLM
from lit3r.models import ABSTENTION, Answer, Chunk, Locator, Paper
from lit3r.prompts.common import AnswerSpec
from lit3r.reading.compact_reader import CompactReader, CompactReply
from lit3r.reading.passages import select_passages, windows
from lit3r.settings import GroundingSettings
from lit3r.settings.llm import LLMSettings

from fakes.chat import FakeToolCallingModel, tool_call

METHOD = (
    "We evaluate grammatical correctness with human judges. Three annotators rated every sentence on a "
    "five-point scale. The agreement was 0.71 in Cohen's kappa."
)
DATA = "The corpus has 1,200 dialogues collected from forums. We do not use any pretrained embeddings."
OTHER = "Related work on summarisation is reviewed at length. Earlier systems used templates."
PAPER = Paper(id="p1", title="A paper")
CHUNKS = [
    Chunk(id="p1::c0001", paper_id="p1", type="text", text=METHOD, locator=Locator(section="Evaluation", paragraph=3)),
    Chunk(id="p1::c0002", paper_id="p1", type="text", text=DATA, locator=Locator(section="Data", paragraph=1)),
    Chunk(id="p1::c0003", paper_id="p1", type="text", text=OTHER, locator=Locator(section="Related", paragraph=0)),
]


def fallback(question, chunks, spec) -> Answer:
    return Answer(question=question, text="extractive fallback", sufficient=True)


def reply(kind: str, answer: str = "", *support: tuple[object, str]) -> dict:
    return tool_call("CompactReply", kind=kind, answer=answer, support=[{"passage": n, "quote": q} for n, q in support])


def reader(script: list, **options) -> tuple[CompactReader, FakeToolCallingModel, TraceRecorder]:
    model = FakeToolCallingModel(script=script)
    recorder = TraceRecorder()
    llm = LLM(model, LLMSettings(max_attempts=1), recorder=recorder, sleep=lambda _: None)
    return CompactReader(llm, fallback, recorder=recorder, **options), model, recorder


def passage_of(result, text: str) -> int:
    """The number the reader gave the passage holding ``text``."""
    return next(p.number for p in result.passages if text in p.text)


def run(script: list, question: str, spec: AnswerSpec | None = None):
    compact, model, recorder = reader(script)
    return compact.run(question, [PAPER], CHUNKS, spec), model, recorder


def numbered(question: str) -> dict[str, int]:
    """What the reader numbers each chunk's passages for ``question`` (first passage per chunk)."""
    numbers: dict[str, int] = {}
    for p in select_passages(question, CHUNKS, count=6, chars=600):
        numbers.setdefault(p.chunk.id, p.number)
    return numbers


QUESTION = "How did they measure grammatical correctness?"


def test_a_sentence_answer_cites_the_passage_it_quotes_with_the_chunks_own_words():
    n = numbered(QUESTION)["p1::c0001"]
    script = [reply("sentence", "Human judges rated correctness.", (n, "evaluate   GRAMMATICAL correctness"))]
    result, model, recorder = run(script, QUESTION)
    answer = result.answer
    assert answer.sufficient and answer.text == "Human judges rated correctness [1]."
    [citation] = answer.citations
    assert citation.chunk_id == "p1::c0001" and citation.quote == "evaluate grammatical correctness"
    assert citation.quote in METHOD and citation.locator.section == "Evaluation"
    assert "passage 1: quote taken verbatim from the passage" in result.repairs or n != 1
    assert len(model.calls) == 1 and not result.repaired and result.fallback is None
    prompt = model.calls[0]["messages"][-1].text
    assert prompt.rstrip().endswith(f"Question: {QUESTION}") and "p1::c0001" not in prompt  # numbers, not ids
    assert "CompactReply" in str(model.calls[0]["kwargs"]["tool_choice"])  # a forced call: grammar-constrained
    assert [e.name for e in recorder.of_type("note")] == ["read.passages", "read.compact.accepted"]
    assert quote_problem(answer.citations, {c.id: c.text for c in CHUNKS}) is None


def test_a_span_answer_is_the_copied_phrase():
    question = "How many dialogues does the corpus have?"
    n = numbered(question)["p1::c0002"]
    result, _, _ = run([reply("span", "1,200 dialogues", (n, "The corpus has 1,200 dialogues"))], question)
    assert result.answer.text == "1,200 dialogues [1]" and result.answer.citations[0].chunk_id == "p1::c0002"


@pytest.mark.parametrize(("kind", "option"), [("yes", "Yes"), ("no", "No")])
def test_yes_no_answers_carry_the_option_and_the_quoted_words(kind: str, option: str):
    question = "Do they use pretrained embeddings?"
    n = numbered(question)["p1::c0002"]
    result, _, _ = run([reply(kind, "", (n, "We do not use any pretrained embeddings."))], question)
    answer = result.answer
    # the words after the verdict: the stretch of the quote covering the question's terms and its negation
    assert answer.option == option and answer.text == f"{option} — not use any pretrained embeddings [1]"
    assert answer.citations[0].quote == "We do not use any pretrained embeddings"  # the citation keeps the quote
    [claim] = split_claims(answer)
    assert claim.text == "not use any pretrained embeddings" and claim.citations == (1,)


def test_unanswerable_abstains_without_citations():
    result, model, _ = run(
        [reply("unanswerable", "", (3, "Earlier systems used templates"))], "Which GPU did they train on?"
    )
    assert not result.answer.sufficient and result.answer.text == ABSTENTION and result.answer.citations == []
    assert len(model.calls) == 1 and result.fallback is None


def test_an_answer_saying_unanswerable_is_read_as_such():
    result, _, _ = run([reply("sentence", "Not mentioned.", (1, "Earlier systems used templates"))], "Which GPU?")
    assert not result.answer.sufficient and "read as unanswerable" in result.repairs[0]


def test_a_span_answering_yes_is_read_as_a_yes():
    question = "Do they use human judges?"
    n = numbered(question)["p1::c0001"]
    result, _, _ = run([reply("span", "Yes.", (n, "with human judges"))], question)
    assert result.answer.option == "Yes" and result.answer.text == "Yes — with human judges [1]"


def test_a_quote_under_the_wrong_number_moves_to_the_passage_that_holds_it():
    numbers = numbered(QUESTION)
    wrong = numbers["p1::c0003"]
    script = [reply("sentence", "Annotators rated sentences.", (wrong, "Three annotators rated"))]
    result, model, _ = run(script, QUESTION)
    assert result.answer.citations[0].chunk_id == "p1::c0001" and len(model.calls) == 1
    assert any("found in passage" in r for r in result.repairs)


def test_a_passage_number_written_as_text_is_still_that_number():
    assert (
        CompactReply.model_validate({"kind": "Span", "answer": "x", "support": [{"passage": "[2]", "quote": "q"}]})
        .support[0]
        .passage
        == 2
    )
    assert (
        CompactReply.model_validate({"kind": "no", "answer": "", "support": [{"passage": "P3", "quote": "q"}]}).kind
        == "no"
    )


def test_the_schema_makes_a_grammar_write_every_field_and_a_quote():
    schema = CompactReply.model_json_schema()
    assert set(schema["required"]) == {"support", "kind", "answer"} and schema["properties"]["support"]["minItems"] == 1


def test_a_span_without_a_quote_found_is_cited_where_the_span_stands():
    question = "How many dialogues does the corpus have?"
    result, model, _ = run([reply("span", "1,200 dialogues", (9, "made-up words"))], question)
    assert result.answer.citations[0].chunk_id == "p1::c0002" and result.answer.citations[0].quote == "1,200 dialogues"
    assert len(model.calls) == 1


def test_an_ungrounded_answer_is_replaced_by_its_quote():
    n = numbered(QUESTION)["p1::c0001"]
    script = [reply("sentence", "They used 9999 crowd workers on Mechanical Turk.", (n, "Three annotators rated"))]
    result, _, _ = run(script, QUESTION)
    text = result.answer.text
    assert text == "Three annotators rated [1]" and any("not grounded" in r for r in result.repairs)
    assert support_problem("They used 9999 crowd workers.", METHOD, 0.5) is not None  # why it was replaced


def test_a_long_answer_is_cut_to_two_sentences():
    n = numbered(QUESTION)["p1::c0001"]
    long = "Human judges evaluate. Three annotators rated every sentence. The agreement was 0.71."
    result, _, _ = run([reply("sentence", long, (n, "Three annotators rated every sentence"))], QUESTION)
    assert result.answer.text == "Human judges evaluate [1]. Three annotators rated every sentence [1]."  # each cites


def test_a_reply_with_no_quote_found_costs_one_repair_call_that_can_succeed():
    n = numbered(QUESTION)["p1::c0001"]
    script = [
        reply("sentence", "Judges rated it.", (n, "words that are nowhere")),
        reply("sentence", "Human judges rated it.", (n, "with human judges")),
    ]
    result, model, _ = run(script, QUESTION)
    assert result.repaired and result.answer.citations[0].quote == "with human judges" and len(model.calls) == 2
    repair = model.calls[1]["messages"][-1].text
    assert "words that are nowhere" in repair and "not in any passage" in repair
    assert model.calls[1]["messages"][0].text == model.calls[0]["messages"][0].text  # same prefix: cached


def test_two_unusable_replies_hand_the_question_to_the_fallback():
    script = [reply("sentence", "Judges.", (1, "nowhere one")), reply("sentence", "Judges.", (1, "nowhere two"))]
    result, model, recorder = run(script, QUESTION)
    assert (
        result.answer.text == "extractive fallback"
        and "after repair" in result.fallback.reason
        and len(model.calls) == 2
    )
    assert [f.stage for f in recorder.fallbacks()] == ["read"]


def test_a_failed_call_hands_the_question_to_the_fallback_at_once():
    result, model, _ = run([ModelAuthenticationError("bad key")], QUESTION)
    assert result.answer.text == "extractive fallback" and "read.compact failed" in result.fallback.reason
    assert len(model.calls) == 1


def test_multiple_choice_names_the_option_and_a_wrong_letter_is_repaired_by_a_call():
    spec = AnswerSpec(types=["multiple_choice"], options={"A": "human judges", "B": "BLEU"})
    n = numbered(QUESTION)["p1::c0001"]
    script = [reply("span", "C", (n, "human judges")), reply("span", "(A)", (n, "human judges"))]
    result, model, _ = run(script, QUESTION, spec)
    assert result.answer.option == "human judges" and result.answer.text == "human judges — human judges [1]"
    assert "A. human judges; B. BLEU" in model.calls[0]["messages"][-1].text and result.repaired


def test_no_evidence_abstains_without_a_call():
    compact, model, _ = reader([])
    result = compact.run(QUESTION, [PAPER], [])
    assert not result.answer.sufficient and model.calls == []


def test_passages_are_the_best_stretches_numbered_best_first_and_mapped_to_their_chunks():
    passages = select_passages(QUESTION, CHUNKS, count=2, chars=120)
    assert [p.number for p in passages] == [1, 2] and passages[0].chunk.id == "p1::c0001"
    assert "grammatical correctness" in passages[0].text and all(len(p.text) <= 120 for p in passages)
    for p in passages:
        assert p.chunk.text[p.start : p.end] == p.text
    spans = windows(CHUNKS[0], 10_000)
    assert spans[0] == (0, len(METHOD))  # one window can hold the whole chunk


def test_passages_reporting_on_another_split_than_the_one_asked_are_not_shown():
    intro = Chunk(id="p::c0001", paper_id="p", type="text", text="We answer it on the development split of LocatorQA.")
    result = Chunk(id="p::c0002", paper_id="p", type="text", text="The dense encoder reaches 0.61 recall at 10.")
    other = Chunk(id="q::c0001", paper_id="q", type="text", text="The dense encoder reaches 0.49 recall at 10.")
    asked = "What recall at 10 did the dense encoder reach on the test set?"
    shown = select_passages(asked, [result, intro, other], count=6, chars=600)
    assert [p.chunk.id for p in shown] == ["q::c0001"]  # paper p reports on the development split only
    unsplit = select_passages(
        "What recall at 10 did the dense encoder reach?", [result, intro, other], count=6, chars=600
    )
    assert {p.chunk.id for p in unsplit} == {"p::c0001", "p::c0002", "q::c0001"}


def test_the_session_answers_through_the_compact_reader_with_offline_planning(memory_index):
    from lit3r.app.session import Session
    from lit3r.reading.reader import ModelReader
    from lit3r.retrieval.planning import GateVerifier, KeywordDecomposer

    from fakes.corpus import QUESTION as CORPUS_QUESTION

    def copy_passage_one(messages) -> dict:
        real = messages[-1].text.rsplit("<evidence>", 1)[1]  # the worked example's passages come first
        words = real.split('<passage n="1"', 1)[1].split(">", 1)[1].split()[:8]
        return reply("span", " ".join(words), (1, " ".join(words)))

    llm = LLMSettings(provider="openai", reader="compact", planning="offline")
    settings = memory_index.settings.model_copy(update={"llm": llm, "grounding": GroundingSettings(judge="exact")})
    model = FakeToolCallingModel(script=[copy_passage_one])
    with Session(settings, index=memory_index, chat_model=model, reranker=None, gate=None) as session:
        context = session.context()
        answer = session.ask(CORPUS_QUESTION)
    assert isinstance(context.tools.reader, ModelReader)
    assert isinstance(context.tools.reader.reader, CompactReader)
    assert isinstance(context.tools.verifier, GateVerifier) and isinstance(context.decomposer, KeywordDecomposer)
    assert context.tools.hyde is None
    assert len(model.calls) == 1  # the read is the only model call of the question
    assert answer.sufficient and answer.citations and answer.fallbacks == []
    chunk = memory_index.chunk_by_id[answer.citations[0].chunk_id]
    assert answer.citations[0].quote in chunk.text


LEXICAL = "What lexical features are extracted?"
LEXICAL_CHUNK = Chunk(
    id="p2::c0001", paper_id="p2", type="text", text="We extract lexical features: word n-grams and POS tags."
)


def test_an_answer_naming_nothing_costs_the_repair_call_and_the_repaired_answer_names_the_things():
    generic = reply("span", "various lexical features", (1, "We extract lexical features"))
    named = reply("span", "word n-grams and POS tags", (1, "word n-grams and POS tags"))
    compact, model, _ = reader([generic, named])
    result = compact.run(LEXICAL, [Paper(id="p2", title="P")], [LEXICAL_CHUNK])
    assert result.repaired and len(model.calls) == 2
    repair = model.calls[1]["messages"][-1].text
    assert "only repeats the question" in repair and "'various lexical features'" in repair
    assert result.answer.text == "word n-grams and POS tags [1]" and result.fallback is None


def test_a_repair_naming_nothing_either_keeps_the_first_reply_answered_by_its_quote():
    first = reply("span", "lexical features", (1, "word n-grams and POS tags"))
    again = reply("span", "all the lexical features", (1, "We extract lexical features"))
    compact, model, _ = reader([first, again])
    result = compact.run(LEXICAL, [Paper(id="p2", title="P")], [LEXICAL_CHUNK])
    assert len(model.calls) == 2 and not result.repaired and result.fallback is None
    assert result.answer.text == "word n-grams and POS tags [1]" and any(
        "repeats the question" in r for r in result.repairs
    )


def test_a_failed_repair_call_keeps_the_usable_first_reply():
    first = reply("span", "lexical features", (1, "word n-grams and POS tags"))
    compact, model, _ = reader([first, ModelAuthenticationError("no key")])
    result = compact.run(LEXICAL, [Paper(id="p2", title="P")], [LEXICAL_CHUNK])
    assert len(model.calls) == 2 and result.fallback is None
    assert result.answer.text == "word n-grams and POS tags [1]"


def test_a_yes_no_answer_too_short_to_state_anything_quotes_its_clause():
    question = "Is their data open sourced?"
    text = "All code and data are available at the project page."
    chunk = Chunk(id="p3::c0001", paper_id="p3", type="text", text=text)
    compact, _, _ = reader([reply("yes", "", (1, "All code and data are available at the project page."))])
    answer = compact.run(question, [Paper(id="p3", title="P")], [chunk]).answer
    assert answer.option == "Yes" and len(answer.text.split("—", 1)[1].split()) >= 4


def test_yes_or_no_to_a_question_not_asked_as_yes_no_is_answered_by_the_quote():
    n = numbered(QUESTION)["p1::c0001"]
    result, _, _ = run([reply("yes", "", (n, "Three annotators rated every sentence"))], QUESTION)
    assert result.answer.option is None and result.answer.text == "Three annotators rated every sentence [1]"


def test_verbatim_answers_are_the_passages_own_words_or_the_quote():
    n = numbered(QUESTION)["p1::c0001"]
    copied, _, _ = reader([reply("span", "HUMAN  judges", (n, "with human judges"))], verbatim=True)
    assert copied.run(QUESTION, [PAPER], CHUNKS).answer.text == "human judges [1]"
    own, _, _ = reader(
        [reply("sentence", "Judges who are human rated grammar.", (n, "with human judges"))], verbatim=True
    )
    result = own.run(QUESTION, [PAPER], CHUNKS)
    assert result.answer.text == "with human judges [1]" and any("verbatim answers" in r for r in result.repairs)
    free, _, _ = reader([reply("sentence", "Judges who are human rated grammar.", (n, "with human judges"))])
    assert free.run(QUESTION, [PAPER], CHUNKS).answer.text == "Judges who are human rated grammar [1]."


def test_the_schema_bounds_quotes_answers_and_supports_for_the_grammar_without_refusing_longer_replies():
    """llama.cpp's grammar honours maxLength/maxItems, so a small model cannot run a quote past ``max_tokens``
    into broken JSON; a hosted model's longer reply is still read (and its quote cut), not refused."""
    schema = CompactReply.model_json_schema()
    support = schema["$defs"]["Support"]["properties"]
    assert support["quote"]["maxLength"] == 300 and schema["properties"]["support"]["maxItems"] == 3
    assert schema["properties"]["answer"]["maxLength"] == 400
    long = CompactReply.model_validate(
        {"support": [{"passage": 1, "quote": "word " * 100}] * 4, "kind": "span", "answer": "x" * 500}
    )
    assert len(long.support) == 4 and len(long.answer) == 500


def test_a_quote_copied_from_the_worked_example_is_no_quote_of_the_passages():
    """The example's passages are in the prompt, never among the numbered passages a quote is matched to."""
    from lit3r.prompts.compact import EXAMPLE_PASSAGES

    example = EXAMPLE_PASSAGES[0][1].split(".")[0]
    copied = reply("span", "TrecQA and InsuranceQA", (1, example))
    compact, model, _ = reader([copied, copied])
    result = compact.run(QUESTION, [PAPER], CHUNKS)
    assert len(model.calls) == 2 and result.fallback and "not in any passage" in result.fallback.reason
    assert result.answer.text == "extractive fallback"
    assert example in model.calls[0]["messages"][-1].text  # the example was shown


def test_a_repair_naming_nothing_after_a_reply_without_a_quote_is_the_answer_by_its_quote():
    unplaced = reply("span", "character trigrams", (1, "features that appear nowhere"))
    generic = reply("span", "lexical features", (1, "word n-grams and POS tags"))
    compact, model, _ = reader([unplaced, generic])
    result = compact.run(LEXICAL, [Paper(id="p2", title="P")], [LEXICAL_CHUNK])
    assert len(model.calls) == 2 and result.repaired and result.fallback is None
    assert result.answer.text == "word n-grams and POS tags [1]"


def test_a_quote_from_a_table_row_names_the_cell():
    table = Chunk(
        id="p1::c0004",
        paper_id="p1",
        type="table",
        text="Table 2: Agreement of the judges.\nMeasure | Value\nCohen's kappa | 0.71\nFleiss' kappa | 0.64",
        locator=Locator(section="Evaluation", object_id="Table 2"),
    )
    question = "What was the Fleiss' kappa of the judges?"
    n = next(p.number for p in select_passages(question, [*CHUNKS, table], count=6, chars=600) if p.chunk is table)
    compact, _, _ = reader([reply("span", "0.64", (n, "Fleiss' kappa | 0.64"))])
    [citation] = compact.run(question, [PAPER], [*CHUNKS, table]).answer.citations
    assert citation.chunk_id == table.id and citation.cell is not None
    assert (citation.cell.table, citation.cell.row, citation.cell.row_label) == ("Table 2", 2, "Fleiss' kappa")


def test_the_local_answer_says_how_sure_it_is_as_the_offline_reader_does():
    question = "How many dialogues does the corpus have?"
    n = numbered(question)["p1::c0002"]
    answered, _, _ = run([reply("span", "1,200 dialogues", (n, "The corpus has 1,200 dialogues"))], question)
    assert answered.answer.answers_question is True  # a number for a quantity question, the question covered
    assert 0.5 < answered.answer.confidence <= 1.0
    worded = run([reply("sentence", "Three annotators rated every sentence.", (1, "Three annotators rated"))], question)
    assert worded[0].answer.answers_question is False  # no quantity, and quotes about something else
    assert worded[0].answer.confidence < answered.answer.confidence
    abstained, _, _ = run([reply("unanswerable", "", (3, "Earlier systems used templates"))], "Which GPU?")
    assert abstained.answer.answers_question is False and abstained.answer.confidence is None
