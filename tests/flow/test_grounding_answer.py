"""Claim verification in the answer path: the agent graph with a scripted LLM reader that writes a sentence the
scripted LLM judge rejects and one the model-free guards refuse before any judge; a session's ``ask`` offline with
the exact judge; the CLI's printers."""

from __future__ import annotations

import json
import math
import re

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from lit3r.app.ask import ask
from lit3r.app.documents import answer_document
from lit3r.app.session import Session, _extractive_fallback
from lit3r.app.traces import load_trace
from lit3r.cli.agent import print_answer
from lit3r.grounding.judges import ExactJudge
from lit3r.grounding.judges.llm import LLMJudge
from lit3r.grounding.verify import UNSUPPORTED_MARK
from lit3r.llm.budget import Budget
from lit3r.llm.trace import TraceRecorder
from lit3r.llm.wrapper import LLM
from lit3r.models import Answer
from lit3r.prompts.grounding import JUDGE_SYSTEM
from lit3r.reading.llm_reader import LLMReader
from lit3r.reading.reader import ModelReader
from lit3r.settings import GroundingSettings

from fakes.agent import make_context, run_agent
from fakes.chat import FakeToolCallingModel, tool_call
from fakes.corpus import QUESTION
from fakes.index import MemoryIndex

SUPPORTED = "The sparse paper reports okapi gains in its okapi analysis"
WRONG = "Ablating okapi changes the okapi results"
"""Its words are the chunk's (it passes the guards); the scripted judge says no."""
UNSUPPORTED = "Okapi saturation also cures cancer in mice"
"""Most of its words are not the chunk's: the guards refuse it."""


@pytest.fixture(scope="module")
def index(memory_index: MemoryIndex) -> MemoryIndex:
    return memory_index


def logprobs(yes: float) -> dict:
    """First-token log-probabilities with P(yes) = ``yes``."""
    top = [{"token": "yes", "logprob": math.log(yes)}, {"token": "no", "logprob": math.log(1 - yes)}]
    return {"content": [{"token": "yes" if yes >= 0.5 else "no", "logprob": 0.0, "top_logprobs": top}]}


def scripted_model(index: MemoryIndex) -> FakeToolCallingModel:
    """Reader stage 1 accepts the 'sparse' paper, stage 2 cites its first chunk for two sentences (one made up);
    the judge says yes to the first sentence and no to the made-up one."""

    def reply(messages: list[BaseMessage]):
        system, prompt = messages[0].text, messages[-1].text
        if system.startswith(JUDGE_SYSTEM[:40]):
            claim = re.search(r"<claim>\n(.*?)\n</claim>", prompt, re.S).group(1)
            yes = 0.02 if "Ablating" in claim or "cancer" in claim else 0.97
            return AIMessage("yes" if yes > 0.5 else "no", response_metadata={"logprobs": logprobs(yes)})
        ids = re.findall(r'<chunk id="([^"]+)"', prompt)
        if prompt.startswith("Stage 1"):
            relevant = re.search(r'<paper id="([^"]+)"', prompt).group(1) == "sparse"
            return tool_call(
                "PaperJudgement", relevant=relevant, sufficient=relevant, supporting_chunk_ids=ids[:1] * relevant
            )
        cited = ids[0]
        answer = f"{SUPPORTED} [{cited}]. {WRONG} [{cited}]. {UNSUPPORTED} [{cited}]."
        fact = {"value": "okapi gains", "chunk_id": cited, "quote": index.chunk_by_id[cited].text[:30]}
        return f"<final_answer>{json.dumps({'sufficient': True, 'facts': [fact], 'answer': answer})}</final_answer>"

    return FakeToolCallingModel(script=[reply] * 40)


def llm_context(index: MemoryIndex, unsupported: str = "remove"):
    """The fixed planner with the LLM reader and the LLM judge over one scripted model."""
    settings = index.settings.model_copy(update={"grounding": GroundingSettings(unsupported=unsupported)})
    recorder, budget = TraceRecorder(), Budget()
    llm = LLM(scripted_model(index), recorder=recorder, budget=budget)
    reader = ModelReader(LLMReader(llm, _extractive_fallback, recorder=recorder), index.papers)
    judge = LLMJudge(llm, threshold=settings.grounding.threshold)
    return make_context(index, settings=settings, reader=reader, judge=judge, recorder=recorder, budget=budget)


def verify_event(context) -> dict:
    (event,) = [e for e in context.recorder.events if e.type == "verify"]
    assert event.name == "verify_claims"
    return event.data


def test_an_unsupported_sentence_of_the_llm_answer_is_removed_and_the_trace_says_why(index) -> None:
    context = llm_context(index)
    state = run_agent(context, QUESTION)
    answer = Answer.model_validate(state["answer"])
    assert answer.sufficient and SUPPORTED in answer.text and "cancer" not in answer.text
    assert answer.text == f"{SUPPORTED} [1]." and [c.number for c in answer.citations] == [1]
    assert answer.supported_fraction == pytest.approx(1 / 3) and answer.verified_by == "llm"
    assert [(c.text, c.action) for c in answer.claims] == [
        (f"{SUPPORTED}.", "kept"),
        (f"{WRONG}.", "removed"),
        (f"{UNSUPPORTED}.", "removed"),
    ]
    assert state["messages"][-1].content == answer.text
    data = verify_event(context)
    assert data["judge"] == "llm" and data["threshold"] == 0.5 and data["unsupported"] == "remove"
    assert data["summary"] == "1/3 claims supported; 2 removed" and data["min_overlap"] == 0.5
    judged, guarded = data["claims"][1], data["claims"][2]
    assert judged["claim"] == f"{WRONG}." and judged["action"] == "removed" and not judged["supported"]
    assert judged["score"] == pytest.approx(0.02) and judged["reason"] == "P(yes)=0.020"
    assert judged["chunk_ids"] == [answer.citations[0].chunk_id]
    assert guarded["score"] == 0.0 and "content words are in the cited text" in guarded["reason"]
    judge_calls = [e for e in context.recorder.events if e.type == "llm" and e.name == "grounding.judge"]
    assert len(judge_calls) == 2  # the two claims that passed the guards; the third never reached the model
    status = [e for e in context.recorder.events if e.type == "node" and e.name == "synthesize_answer"][0]
    assert "1/3 claims supported" in status.data["status"]


def test_mark_mode_keeps_the_sentence_and_marks_it(index) -> None:
    context = llm_context(index, unsupported="mark")
    answer = Answer.model_validate(run_agent(context, QUESTION)["answer"])
    assert answer.text == f"{SUPPORTED} [1]. {WRONG} [1]. {UNSUPPORTED_MARK} {UNSUPPORTED} [1]. {UNSUPPORTED_MARK}"
    assert answer.supported_fraction == pytest.approx(1 / 3) and answer.claims[1].action == "marked"
    assert verify_event(context)["summary"] == "1/3 claims supported; 2 marked"


def test_without_a_judge_answers_are_not_verified(index) -> None:
    context = make_context(index)
    answer = Answer.model_validate(run_agent(context, QUESTION)["answer"])
    assert answer.supported_fraction is None and answer.claims == []
    assert not [e for e in context.recorder.events if e.type == "verify"]


def test_ask_offline_verifies_the_extractive_answer_with_the_exact_judge(index, capsys) -> None:
    with Session(index.settings, index=index, reranker=None) as session:
        assert isinstance(session.context().tools.judge, ExactJudge)
    answer = ask(QUESTION, settings=index.settings, index=index, reranker=None)
    assert answer.sufficient and answer.supported_fraction == 1.0
    assert answer.claims and all(c.action == "kept" and c.reason == "quoted" for c in answer.claims)
    (event,) = [e for e in load_trace(answer.trace_path)["events"] if e["type"] == "verify"]
    assert event["data"]["judge"] == "exact" and len(event["data"]["claims"]) == len(answer.claims)
    assert load_trace(answer.trace_path)["answer"]["supported_fraction"] == 1.0
    assert answer_document(answer, index.papers).supported_fraction == 1.0  # lit3r ask --json
    print_answer(answer)
    shown = " ".join(capsys.readouterr().out.split())
    assert f"quotes checked: {len(answer.claims)}/{len(answer.claims)} claims are verbatim" in shown
    assert "whether they answer the question is not judged" in shown and answer.verified_by == "exact"


def test_ask_with_verification_off_builds_no_judge(index) -> None:
    settings = index.settings.model_copy(update={"grounding": GroundingSettings(verify=False)})
    with Session(settings, index=index, reranker=None) as session:
        assert session.context().tools.judge is None
