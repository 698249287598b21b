"""Trace replay: an offline run and a scripted-model run reproduced exactly from their traces; a changed output,
a changed prompt and changed settings are found and placed; the replay model itself."""

from __future__ import annotations

import copy
import json

import pytest
from langchain_core.messages import HumanMessage

from lit3r.app.replay import ReplayError, ReplayModel, prompt_difference, replay_trace
from lit3r.app.session import Session
from lit3r.app.traces import load_trace
from lit3r.llm.errors import LLMCallError
from lit3r.llm.wrapper import LLM

from fakes.corpus import QUESTION
from fakes.index import MemoryIndex
from fakes.scripted import llm_run_model


@pytest.fixture(scope="module")
def settings(memory_index: MemoryIndex):
    return memory_index.settings.model_copy(update={"reranker": "lexical"})


@pytest.fixture(scope="module")
def offline_trace(memory_index, settings) -> dict:
    with Session(settings, index=memory_index) as session:
        return load_trace(session.ask(QUESTION).trace_path)


@pytest.fixture(scope="module")
def scripted_trace(memory_index, settings) -> dict:
    with Session(settings, index=memory_index, chat_model=llm_run_model(memory_index)) as session:
        return load_trace(session.ask(QUESTION).trace_path)


def llm_calls(doc: dict) -> list[dict]:
    """The data of the trace's model calls (the dicts themselves: changing one changes the trace)."""
    return [e["data"] for e in doc["events"] if e["type"] == "llm"]


def call_names(doc: dict) -> list[str]:
    return [e["name"] for e in doc["events"] if e["type"] == "llm"]


def calls_named(doc: dict, name: str) -> list[dict]:
    return [e["data"] for e in doc["events"] if e["type"] == "llm" and e["name"] == name]


def test_an_offline_run_replays_to_the_same_answer_citations_and_rankings(memory_index, settings, offline_trace):
    report = replay_trace(settings, offline_trace, index=memory_index)
    assert report.reproduced and report.first_difference is None
    assert report.same_answer and report.same_citations and report.same_rankings
    assert report.model_calls_recorded == report.model_calls_replayed == 0
    replayed = load_trace(settings.home / "traces" / f"{report.replay_trace_id}.json")
    assert replayed["answer"]["text"] == offline_trace["answer"]["text"] and offline_trace["answer"]["citations"]
    assert replayed["answer"]["citations"] == offline_trace["answer"]["citations"]


def test_a_scripted_model_run_replays_exactly_without_calling_any_model(memory_index, settings, scripted_trace):
    recorded = llm_calls(scripted_trace)
    names = set(call_names(scripted_trace))
    assert {"decompose", "verify", "read.synthesize", "grounding.judge.structured"} <= names
    report = replay_trace(settings, scripted_trace, index=memory_index)
    assert report.reproduced and not report.mismatches, report.model_dump(exclude={"diff"})
    assert report.model_calls_replayed == report.model_calls_recorded == len(recorded)
    replayed = load_trace(settings.home / "traces" / f"{report.replay_trace_id}.json")
    assert replayed["answer"] == {**scripted_trace["answer"], "trace_path": replayed["answer"]["trace_path"]}
    assert sorted(c["output"] for c in llm_calls(replayed)) == sorted(c["output"] for c in recorded)
    assert {c["model"] for c in llm_calls(replayed)} == {"fake-tool-calling"}  # the recorded model's name


def test_a_changed_model_output_changes_the_answer_and_the_report_says_so(memory_index, settings, scripted_trace):
    doc = copy.deepcopy(scripted_trace)
    (synthesis,) = calls_named(doc, "read.synthesize")
    synthesis["output"] = synthesis["output"].replace("studies okapi lexical saturation", "studies okapi saturation")
    report = replay_trace(settings, doc, index=memory_index)
    assert not report.reproduced and not report.same_answer and report.same_rankings
    assert report.diff.first_difference == "answer"
    assert "studies okapi saturation" in report.diff.answer.b and report.diff.answer.a == doc["answer"]["text"]
    # the judge is then sent the changed sentence, which the recording never judged: the first call that parts
    mismatch = report.mismatches[0]
    assert {m.recorded for m in report.mismatches} <= {"grounding.judge", "grounding.judge.structured"}
    assert mismatch.recorded == "grounding.judge" and "'saturation." in mismatch.difference
    assert report.first_difference.startswith(f"model call {mismatch.position} (grounding.judge)")


def test_a_prompt_the_recording_lacks_is_named_with_its_call_and_where_it_differs(
    memory_index, settings, scripted_trace
):
    doc = copy.deepcopy(scripted_trace)
    verify = calls_named(doc, "verify")[0]
    verify["prompt"][-1]["content"] = verify["prompt"][-1]["content"].replace("Decide", "Judge", 1)
    report = replay_trace(settings, doc, index=memory_index)
    assert not report.reproduced and len(report.mismatches) == 1
    (mismatch,) = report.mismatches
    position = call_names(doc).index("verify") + 1
    assert (mismatch.position, mismatch.recorded) == (position, "verify")
    assert "message 2 (user) at character 1" in mismatch.difference and "'Decide" in mismatch.difference
    assert report.first_difference.startswith(f"model call {position} (verify)")
    assert report.same_answer  # the recorded output still answered it


def test_a_replay_under_other_settings_shows_where_the_rankings_part(memory_index, settings, offline_trace):
    other = settings.model_copy(update={"reranker": "bi-encoder"})
    report = replay_trace(other, offline_trace, index=memory_index, recorded_settings=False)
    assert not report.reproduced and not report.same_rankings
    assert report.first_difference.startswith("ranking reranker scores of subquery")


def test_a_run_with_other_settings_replays_from_the_trace_without_passing_them(memory_index, settings) -> None:
    shaped = settings.model_copy(
        update={"reranker": "bi-encoder", "retriever": settings.retriever.model_copy(update={"prf": True})}
    )
    with Session(shaped, index=memory_index, chat_model=llm_run_model(memory_index)) as session:
        doc = load_trace(session.ask(QUESTION).trace_path)
    assert doc["settings"]["reranker"] == "bi-encoder" and doc["settings"]["retriever"]["prf"] is True
    report = replay_trace(settings, doc, index=memory_index)  # today's settings: lexical, no prf
    assert report.reproduced, report.model_dump(exclude={"diff"})
    assert any("reranker='bi-encoder' (today 'lexical')" in n for n in report.notes)
    assert not replay_trace(settings, doc, index=memory_index, recorded_settings=False).reproduced


def test_the_replay_model_returns_recorded_logprobs_and_fails_beyond_the_recording() -> None:
    prompt = [{"role": "user", "content": "is it?"}]
    logprobs = {"content": [{"token": "yes", "logprob": -0.1, "top_logprobs": []}]}
    model = ReplayModel(recorded=[{"name": "judge", "prompt": prompt, "output": "yes", "logprobs": logprobs}])
    reply = LLM(model).invoke([HumanMessage("is it?")], name="judge")
    assert reply.text == "yes" and reply.response_metadata["logprobs"] == logprobs and model.unused == 0
    with pytest.raises(LLMCallError, match="beyond the recording") as caught:
        LLM(model).invoke([HumanMessage("again?")], name="judge")
    assert isinstance(caught.value.__cause__, ReplayError) and not caught.value.retryable


def test_prompt_difference_names_the_message_and_character() -> None:
    a = [{"role": "system", "content": "same"}, {"role": "user", "content": "abcdef"}]
    b = json.loads(json.dumps(a))
    assert prompt_difference(a, b) is None
    b[1]["content"] = "abcXef"
    assert prompt_difference(a, b) == "message 2 (user) at character 4: 'def\"', recorded 'Xef\"'"
    assert prompt_difference(a[:1], a) == "1 messages, recorded 2"
