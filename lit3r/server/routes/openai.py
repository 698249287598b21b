"""OpenAI-compatible chat: ``POST /v1/chat/completions`` (plain and streaming) and ``GET /v1/models``.

A conversation continues the thread its earlier turns were answered in (see
:func:`lit3r.server.answering.conversation_thread`), so follow-ups are rewritten and citation numbers stay
stable as in ``lit3r chat``. A stream sends the role, then (once the run is done; keep-alive comments until
then) the answer text and the Sources block as two content deltas, then a final chunk with
``finish_reason: stop`` and the structured ``citations``, then the usage when ``stream_options.include_usage``,
then ``[DONE]``. The body's ``lit3r`` object (``papers`` and the library filters of ``/v1/ask``) restricts
the papers the turn answers from; a filter it cannot apply is refused with its status before anything streams.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request

from lit3r.app.export import with_export
from lit3r.app.traces import load_trace
from lit3r.server import answering, openai_compat
from lit3r.server.errors import error_body
from lit3r.server.routes import runtime_of
from lit3r.server.runs import run, run_events
from lit3r.server.runtime import Runtime, Ticket
from lit3r.server.schemas import ChatCompletionRequest, ChatLit3rOptions
from lit3r.server.sse import PING, frame, stream

router = APIRouter(tags=["openai"])


def _reply(
    runtime: Runtime,
    ticket: Ticket,
    prior: list[tuple[str, str]],
    message: str,
    planner: str,
    allowed: list[str] | None = None,
    options: ChatLit3rOptions | None = None,
) -> dict:
    """Run the turn (from the ``allowed`` papers only, when given); return the answer document (with ``export``
    when the options ask for a format), the reply (content, and its Sources block) and the usage."""
    catalog = runtime.catalog
    thread = answering.conversation_thread(ticket.session, catalog, prior, planner, allowed)
    with runtime.thread_lock(thread.thread_id):
        reply = answering.turn(thread, catalog, message, planner, allowed=allowed)
    fmt, style = (options.format, options.citation_style) if options is not None else (None, "author-year")
    exported = with_export(reply.document, reply.answer, ticket.session.index.papers, fmt, style)
    document = exported.model_dump(mode="json")
    content = openai_compat.reply_content(document)
    answering.remember_reply(catalog, prior, message, content, thread.thread_id)
    tokens = openai_compat.usage(load_trace(reply.answer.trace_path) if reply.answer.trace_path else None)
    return {"document": document, "content": content, "sources": openai_compat.sources_block(document), "usage": tokens}


@router.get("/models")
async def models(request: Request) -> dict:
    """The models this server answers as: `lit3r` (the offline Lit3R sequence) and, with a chat model
    configured, `lit3r-llm` (the model plans the tool calls)."""
    with runtime_of(request).lease() as lease:
        return openai_compat.model_list(lease.session.chat_model is not None)


@router.post(
    "/chat/completions",
    response_model=None,
    responses={200: {"content": {"application/json": {}, "text/event-stream": {}}}},
)
async def chat_completions(body: ChatCompletionRequest, request: Request):
    """OpenAI's chat completions: the answer with [n] markers and a Sources block, plus `citations`."""
    runtime = runtime_of(request)
    prior, message = openai_compat.split_conversation(body.messages)
    ticket = runtime.admit()
    try:
        planner = openai_compat.planner_for(body.model, ticket.session.chat_model is not None)
        options = body.lit3r
        allowed = answering.library_restriction(ticket.session, options, options.papers) if options else None
        if allowed is not None:
            ticket.session.check_papers(allowed)  # an unknown paper id: refused before a stream starts
    except BaseException:
        ticket.release()
        raise
    if not body.stream:
        reply = await run(runtime, ticket, lambda: _reply(runtime, ticket, prior, message, planner, allowed, options))
        return openai_compat.completion(reply["document"], reply["content"], body.model, reply["usage"])
    include_usage = bool(body.stream_options and body.stream_options.include_usage)
    work = lambda _listener: _reply(runtime, ticket, prior, message, planner, allowed, options)  # noqa: E731
    return stream(_chunks(runtime, ticket, work, body.model, include_usage))


async def _chunks(runtime: Runtime, ticket: Ticket, work: Any, model: str, include_usage: bool) -> AsyncIterator[bytes]:
    completion_id = f"chatcmpl-{uuid.uuid4().hex}"
    yield frame(None, openai_compat.chunk(completion_id, model, {"role": "assistant", "content": ""}))
    async for kind, value in run_events(runtime, ticket, work):
        if kind in ("ping", "step"):
            if kind == "ping":
                yield PING
            continue
        if kind == "error":
            yield frame(None, error_body(value.code, value.message))
            break
        document = value["document"]
        yield frame(None, openai_compat.chunk(completion_id, model, {"content": document["answer"]}))
        if value["sources"]:
            yield frame(None, openai_compat.chunk(completion_id, model, {"content": "\n\n" + value["sources"]}))
        yield frame(
            None, openai_compat.chunk(completion_id, model, {}, "stop", document, **openai_compat.extras(document))
        )
        if include_usage:
            last = openai_compat.chunk(completion_id, model, {}, usage=value["usage"])
            last["choices"] = []
            yield frame(None, last)
    yield frame(None, "[DONE]")
