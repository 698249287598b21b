"""A scripted OpenAI-compatible "model" that answers lit3r's own prompts correctly, for end-to-end runs over HTTP.

:func:`competent_reply` reads a chat-completions request body and answers as a capable model would: subqueries,
verdicts, HyDE passages, stage-1 judgements (the ``sparse`` paper is relevant), a stage-2 final block quoting the
first shown chunk of that paper verbatim, and "yes" verdicts for claims. Faults are injected around it
(:class:`FaultyEndpoint`), so a test sees exactly what one fault does to an otherwise good run.
"""

from __future__ import annotations

import html
import json
import re
import threading
from collections.abc import Callable
from typing import Any

from fakes.openai_server import Scripted, reply

RELEVANT_PAPER = "sparse"


def schema_name(body: dict[str, Any]) -> str | None:
    """The pydantic schema a structured request asks for (json_schema response format or a forced tool)."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["name"]
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        return choice.get("function", {}).get("name")
    return None


def prompt_of(body: dict[str, Any]) -> str:
    """The request's first user message: the task (a repair request adds later messages after it)."""
    return next(str(m.get("content") or "") for m in body["messages"] if m.get("role") == "user")


def shown_chunks(prompt: str) -> list[tuple[str, str]]:
    """``(chunk id, shown text)`` of every chunk block in a prompt."""
    found = re.findall(r'<chunk id="([^"]+)"[^>]*>\n(.*?)\n</chunk>', prompt, flags=re.S)
    return [(chunk_id, html.unescape(text)) for chunk_id, text in found]


def first_sentence(text: str) -> str:
    """The first sentence of a chunk's shown text (after a header line such as a title-abstract's venue tag)."""
    body = text.split("\n\n", 1)[-1]
    return re.split(r"(?<=[.!?])\s+", body.strip())[0].rstrip(".")


def final_answer(prompt: str) -> str:
    """A stage-2 reply citing the relevant paper's first shown chunk with one of its own sentences."""
    chunk_id, text = next((c, t) for c, t in shown_chunks(prompt) if c.startswith(f"{RELEVANT_PAPER}::"))
    sentence = first_sentence(text)
    body = {
        "sufficient": True,
        "facts": [{"value": sentence, "chunk_id": chunk_id, "quote": sentence}],
        "answer": f"{sentence} [{chunk_id}].",
    }
    return f"The {RELEVANT_PAPER} paper answers it.\n<final_answer>{json.dumps(body)}</final_answer>"


def competent_reply(body: dict[str, Any]) -> Scripted:
    """The right answer to any of lit3r's prompts."""
    prompt = prompt_of(body)
    schema = schema_name(body)
    if schema == "Subqueries":
        return reply(json.dumps({"subqueries": ["okapi lexical saturation"]}))
    if schema == "EvidenceVerdict":
        papers = [RELEVANT_PAPER] if f'id="{RELEVANT_PAPER}"' in prompt else []
        return reply(json.dumps({"papers_with_evidence": papers, "sufficient": bool(papers), "missing": ""}))
    if schema == "HydePassage":
        return reply(
            json.dumps({"passage": "Okapi BM25 saturates term frequency with k1 in sparse lexical retrieval."})
        )
    if schema == "PaperJudgement":
        paper = re.search(r'<paper id="([^"]+)"', prompt).group(1)
        ids = [c for c, _t in shown_chunks(prompt)][:1] if paper == RELEVANT_PAPER else []
        relevant = paper == RELEVANT_PAPER
        return reply(json.dumps({"relevant": relevant, "sufficient": relevant, "supporting_chunk_ids": ids}))
    if schema == "SupportVerdict":
        return reply(json.dumps({"supported": True, "confidence": 0.9}))
    if schema == "StandaloneQuestion":
        return reply(json.dumps({"question": "Which paper studies okapi lexical saturation?"}))
    if "<final_answer>" in prompt or "final_answer" in prompt:
        return reply(final_answer(prompt))
    if "<claim>" in prompt:
        return reply("yes")
    return reply("I cannot tell what was asked.")


class FaultyEndpoint:
    """A responder: :func:`competent_reply`, except that requests ``fault_on`` selects get ``fault`` instead.

    ``fault`` computes the faulty reply from the request body and the competent one; ``times`` bounds how many
    requests get it (None: every selected request).
    """

    def __init__(
        self,
        fault: Callable[[dict[str, Any], Scripted], Scripted],
        fault_on: Callable[[dict[str, Any]], bool] = lambda _body: True,
        times: int | None = None,
    ) -> None:
        self.fault, self.fault_on, self.times = fault, fault_on, times
        self.faulted = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Scripted:
        good = competent_reply(body)
        with self._lock:
            hit = self.fault_on(body) and (self.times is None or self.faulted < self.times)
            self.faulted += hit
        return self.fault(body, good) if hit else good
