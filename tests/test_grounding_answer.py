"""Claim verification in the answer path: the agent graph with a scripted LLM reader that writes one sentence
its citations do not support, judged by the scripted LLM judge; ``ask()`` offline with the exact judge; the CLI."""

from __future__ import annotations

import json
import math
import re

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from test_graph import QUESTION, make_context
from test_retrieve import make_index

from lit3r.agent.api import _extractive_fallback, ask, build_context, run_agent
from lit3r.agent.context import LLMReaderAdapter
from lit3r.agent.llm_reader import LLMReader
from lit3r.agent.trace import load_trace
from lit3r.cli.agent import answer_document, print_answer
from lit3r.grounding.judges import ExactJudge
from lit3r.grounding.judges.llm import LLMJudge
from lit3r.grounding.verify import UNSUPPORTED_MARK
from lit3r.index.corpus_index import CorpusIndex
from lit3r.llm.wrapper import LLM
from lit3r.models import Answer
from lit3r.prompts.grounding import JUDGE_SYSTEM
from lit3r.settings import GroundingSettings

from fakes.chat import FakeToolCallingModel, tool_call

SUPPORTED = "The sparse paper reports okapi gains in its okapi analysis"
UNSUPPORTED = "Okapi saturation also cures cancer in mice"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> CorpusIndex:
    return make_index(tmp_path_factory.mktemp("grounding") / "home")[0]


def logprobs(yes: float) -> dict:
    """First-token log-probabilities with P(yes) = ``yes``."""
    top = [{"token": "yes", "logprob": math.log(yes)}, {"token": "no", "logprob": math.log(1 - yes)}]
    return {"content": [{"token": "yes" if yes >= 0.5 else "no", "logprob": 0.0, "top_logprobs": top}]}


def scripted_model(index: CorpusIndex) -> FakeToolCallingModel:
    """Reader stage 1 accepts the 'sparse' paper, stage 2 cites its first chunk for two sentences (one made up);
    the judge says yes to the first sentence and no to the made-up one."""

    def reply(messages: list[BaseMessage]):
        system, prompt = messages[0].text, messages[-1].text
        if system.startswith(JUDGE_SYSTEM[:40]):
            claim = re.search(r"<claim>\n(.*?)\n</claim>", prompt, re.S).group(1)
            yes = 0.02 if "cancer" in claim else 0.97
            return AIMessage("yes" if yes > 0.5 else "no", response_metadata={"logprobs": logprobs(yes)})
        ids = re.findall(r'<chunk id="([^"]+)"', prompt)
        if prompt.startswith("Stage 1"):
            relevant = re.search(r'<paper id="([^"]+)"', prompt).group(1) == "sparse"
            return tool_call(
                "PaperJudgement", relevant=relevant, sufficient=relevant, supporting_chunk_ids=ids[:1] * relevant
            )
        cited = ids[0]
        answer = f"{SUPPORTED} [{cited}]. {UNSUPPORTED} [{cited}]."
        fact = {"value": "okapi gains", "chunk_id": cited, "quote": index.chunk_by_id[cited].text[:30]}
        return f"<final_answer>{json.dumps({'sufficient': True, 'facts': [fact], 'answer': answer})}</final_answer>"

    return FakeToolCallingModel(script=[reply] * 40)


def llm_context(index: CorpusIndex, unsupported: str = "remove"):
    """The fixed planner with the LLM reader and the LLM judge over one scripted model."""
    settings = index.settings.model_copy(update={"grounding": GroundingSettings(unsupported=unsupported)})
    context = make_context(index)
    context.settings = settings
    context.llm = LLM(scripted_model(index), recorder=context.recorder, budget=context.budget)
    reader = LLMReader(context.llm, _extractive_fallback, recorder=context.recorder.record)
    context.reader = LLMReaderAdapter(reader, index.papers)
    context.judge = LLMJudge(context.llm, threshold=settings.grounding.threshold)
    return context


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
    assert answer.supported_fraction == 0.5
    assert [(c.text, c.action) for c in answer.claims] == [(f"{SUPPORTED}.", "kept"), (f"{UNSUPPORTED}.", "removed")]
    assert state["messages"][-1].content == answer.text
    data = verify_event(context)
    assert data["judge"] == "llm" and data["threshold"] == 0.5 and data["unsupported"] == "remove"
    assert data["summary"] == "1/2 claims supported; 1 removed" and data["supported_fraction"] == 0.5
    removed = data["claims"][1]
    assert removed["claim"] == f"{UNSUPPORTED}." and removed["action"] == "removed" and not removed["supported"]
    assert removed["score"] == pytest.approx(0.02) and removed["reason"] == "P(yes)=0.020"
    assert removed["chunk_ids"] == [answer.citations[0].chunk_id]
    judge_calls = [e for e in context.recorder.events if e.type == "llm" and e.name == "grounding.judge"]
    assert len(judge_calls) == 2  # every claim's model call is in the trace too
    status = [e for e in context.recorder.events if e.type == "tool" and e.name == "synthesize_answer"][0]
    assert "1/2 claims supported" in status.data["status"]


def test_mark_mode_keeps_the_sentence_and_marks_it(index) -> None:
    context = llm_context(index, unsupported="mark")
    answer = Answer.model_validate(run_agent(context, QUESTION)["answer"])
    assert answer.text == f"{SUPPORTED} [1]. {UNSUPPORTED} [1]. {UNSUPPORTED_MARK}"
    assert answer.supported_fraction == 0.5 and answer.claims[1].action == "marked"
    assert verify_event(context)["summary"] == "1/2 claims supported; 1 marked"


def test_without_a_judge_answers_are_not_verified(index) -> None:
    context = make_context(index)
    answer = Answer.model_validate(run_agent(context, QUESTION)["answer"])
    assert answer.supported_fraction is None and answer.claims == []
    assert not [e for e in context.recorder.events if e.type == "verify"]


def test_ask_offline_verifies_the_extractive_answer_with_the_exact_judge(index, capsys) -> None:
    context = build_context(index.settings, index=index, reranker=None)
    assert isinstance(context.judge, ExactJudge)
    answer = ask(QUESTION, settings=index.settings, index=index, reranker=None)
    assert answer.sufficient and answer.supported_fraction == 1.0
    assert answer.claims and all(c.action == "kept" and c.reason == "quoted" for c in answer.claims)
    (event,) = [e for e in load_trace(answer.trace_path)["events"] if e["type"] == "verify"]
    assert event["data"]["judge"] == "exact" and len(event["data"]["claims"]) == len(answer.claims)
    assert load_trace(answer.trace_path)["answer"]["supported_fraction"] == 1.0
    assert answer_document(answer)["supported_fraction"] == 1.0  # lit3r ask --json
    print_answer(answer)
    assert f"supported: {len(answer.claims)}/{len(answer.claims)} claims" in capsys.readouterr().out


def test_ask_with_verification_off_builds_no_judge(index) -> None:
    settings = index.settings.model_copy(update={"grounding": GroundingSettings(verify=False)})
    assert build_context(settings, index=index, reranker=None).judge is None
