"""OpenAI chat-completions shapes: a request's conversation, and an answer as a completion or as chunks.

The reply's ``content`` is the answer text with its ``[n]`` markers and a Sources block any chat client can
show; the structured citations travel in an extra top-level ``citations`` field and the whole answer document
(:class:`~lit3r.app.documents.AnswerDocument`: thread, trace, standalone question, sufficiency, ...) under
``lit3r``, which OpenAI's client keeps as extra attributes.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from lit3r.models import Locator
from lit3r.server.errors import ApiError
from lit3r.server.schemas import ChatMessage

MODELS = {"lit3r": "fixed", "lit3r-llm": "llm"}
"""Model ids and the planner each runs: 'lit3r' the offline Lit3R sequence, 'lit3r-llm' the model's own plan."""
QUOTE_CHARS = 300
CONVERSATION_ROLES = ("user", "assistant")


def planner_for(model: str, has_chat_model: bool) -> str:
    """The planner a model id asks for; unknown ids, and 'lit3r-llm' without a chat model, are a 404."""
    if model not in MODELS or (MODELS[model] == "llm" and not has_chat_model):
        known = ", ".join(available_models(has_chat_model))
        raise ApiError(404, "model_not_found", f"no model {model!r}; this server offers {known}")
    return MODELS[model]


def available_models(has_chat_model: bool) -> list[str]:
    return [m for m, planner in MODELS.items() if planner == "fixed" or has_chat_model]


def message_text(message: ChatMessage, index: int) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    content = message.content
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    texts = []
    for part in content:
        if part.type != "text" or part.text is None:
            raise ApiError(422, "invalid_request", f"messages.{index}.content: only text parts are supported")
        texts.append(part.text)
    return "\n".join(texts)


def split_conversation(messages: Sequence[ChatMessage]) -> tuple[list[tuple[str, str]], str]:
    """The earlier user and assistant turns as (role, text), and the last message, which must be the user's.

    System, developer and tool messages are left out: lit3r's instructions are its own, and text from elsewhere
    is never an instruction to it.
    """
    last = messages[-1]
    if last.role != "user":
        raise ApiError(422, "invalid_request", "messages: the last message must be the user's question")
    question = " ".join(message_text(last, len(messages) - 1).split())
    if not question:
        raise ApiError(422, "invalid_request", f"messages.{len(messages) - 1}.content: the question is empty")
    prior = [
        (m.role, " ".join(message_text(m, i).split()))
        for i, m in enumerate(messages[:-1])
        if m.role in CONVERSATION_ROLES
    ]
    return [(role, text) for role, text in prior if text], question


def _where(locator: Mapping[str, Any]) -> str:
    return Locator.model_validate(locator).describe()


def sources_block(document: Mapping[str, Any]) -> str:
    """``Sources:`` and one line per citation: number, paper title and id, where, and the quote (cut)."""
    lines = []
    for citation in document["citations"]:
        quote = " ".join(citation["quote"].split())
        quote = quote if len(quote) <= QUOTE_CHARS else quote[: QUOTE_CHARS - 1] + "…"
        title = citation.get("paper_title") or citation["paper_id"]
        where = _where(citation["locator"])
        lines.append(
            f"[{citation['number']}] {title} ({citation['paper_id']}){', ' + where if where else ''}: “{quote}”"
        )
    return "Sources:\n" + "\n".join(lines) if lines else ""


def reply_content(document: Mapping[str, Any]) -> str:
    """The answer text, then its Sources block."""
    sources = sources_block(document)
    return f"{document['answer']}\n\n{sources}" if sources else document["answer"]


def extras(document: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a completion carries beyond OpenAI's: the citations, and the answer document under ``lit3r``."""
    return {"citations": document["citations"], "lit3r": dict(document)}


def logprobs(document: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The choice's ``logprobs``: no token log-probabilities (``content`` null), and the answer document under
    ``lit3r``: the one field of a choice LangChain's ChatOpenAI copies whole into ``response_metadata``
    (``message.response_metadata["logprobs"]["lit3r"]``); the top-level ``lit3r`` field is dropped there."""
    return None if document is None else {"content": None, "refusal": None, "lit3r": dict(document)}


def usage(trace: Mapping[str, Any] | None) -> dict[str, int]:
    """Tokens the run's model calls used (0 for the offline path)."""
    prompt = completion = 0
    for event in (trace or {}).get("events", []):
        if event.get("type") == "llm":
            prompt += int(event["data"].get("prompt_tokens") or 0)
            completion += int(event["data"].get("completion_tokens") or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def completion(document: Mapping[str, Any], content: str, model: str, tokens: dict[str, int]) -> dict[str, Any]:
    """A ``chat.completion`` object."""
    return {
        "id": f"chatcmpl-{document['trace_id']}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
                "logprobs": logprobs(document),
            }
        ],
        "usage": tokens,
        **extras(document),
    }


def chunk(
    completion_id: str,
    model: str,
    delta: dict[str, Any],
    finish: str | None = None,
    document: Mapping[str, Any] | None = None,
    **extra: Any,
) -> dict:
    """One ``chat.completion.chunk`` (the last one carries the answer ``document`` in its :func:`logprobs`)."""
    return {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": logprobs(document)}],
        **extra,
    }


def model_list(has_chat_model: bool) -> dict[str, Any]:
    """``GET /v1/models``."""
    created = int(time.time())
    return {
        "object": "list",
        "data": [
            {"id": m, "object": "model", "created": created, "owned_by": "lit3r"}
            for m in available_models(has_chat_model)
        ],
    }
