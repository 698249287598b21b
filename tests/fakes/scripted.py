"""A scripted model for whole LLM runs: every call the fixed planner's LLM path makes, answered from its prompt.

:func:`llm_run_model` answers decomposition (two subqueries), HyDE (a passage), verification (sufficient, naming
the paper of the first listed chunk), reader stage 1 (the ``sparse`` paper is relevant and its first chunk
supports it), reader stage 2 (one cited sentence quoting that chunk) and the claim judge (a bare "yes" without
log-probabilities, so the judge asks again for a structured verdict, which says supported). Replies depend on
the prompt only, so calls made in parallel (reader stage 1) get the same replies in any order.
"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.messages import BaseMessage

from lit3r.prompts.grounding import JUDGE_SYSTEM

from fakes.chat import FakeToolCallingModel, tool_call


def llm_run_reply(index: Any):
    """The reply function (messages -> script item) over ``index``."""

    def reply(messages: list[BaseMessage]) -> Any:
        system, prompt = messages[0].text, messages[-1].text
        if system.startswith(JUDGE_SYSTEM[:40]):
            if "JSON" in prompt or "supported" in prompt.split("</claim>")[-1]:
                return tool_call("SupportVerdict", supported=True, confidence=0.9)
            return "yes"
        if prompt.startswith("Break the question below"):
            return tool_call("Subqueries", subqueries=["okapi lexical saturation", "bm25 term frequency saturation"])
        if prompt.startswith("Write a short passage"):
            return tool_call("HydePassage", passage="Okapi BM25 saturates term frequency with k1 and b. " * 4)
        if prompt.startswith("Decide whether the retrieved evidence"):
            first = re.search(r'<paper id="([^"]+)"', prompt)
            named = [first.group(1)] if first else []
            return tool_call("EvidenceVerdict", papers_with_evidence=named, sufficient=True, missing="")
        ids = re.findall(r'<chunk id="([^"]+)"', prompt)
        if prompt.startswith("Stage 1"):
            relevant = re.search(r'<paper id="([^"]+)"', prompt).group(1) == "sparse"
            return tool_call(
                "PaperJudgement", relevant=relevant, sufficient=relevant, supporting_chunk_ids=ids[:1] * relevant
            )
        cited = ids[0]
        quote = index.chunk_by_id[cited].text[:40]
        answer = f"The sparse paper studies okapi lexical saturation [{cited}]."
        fact = {"value": "okapi lexical saturation", "chunk_id": cited, "quote": quote}
        return f"<final_answer>{json.dumps({'sufficient': True, 'facts': [fact], 'answer': answer})}</final_answer>"

    return reply


def llm_run_model(index: Any, calls: int = 60) -> FakeToolCallingModel:
    """A scripted model answering up to ``calls`` model calls of one LLM run (see the module docstring)."""
    return FakeToolCallingModel(script=[llm_run_reply(index)] * calls)
