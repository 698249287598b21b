"""Questions and threads: ``/v1/ask`` (JSON and SSE) and ``/v1/threads`` (create, list, history, turns).

The stream sends ``step`` events (each trace event as the run completes it: type, name, round, duration and a
one-line summary; model calls with their tokens), then ``answer`` (the JSON document), then ``done`` with the
trace id; a failure is one ``error`` event with the error document.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request

from lit3r.app.documents import step_view
from lit3r.llm.trace import Listener
from lit3r.server import answering
from lit3r.server.errors import ApiError, as_api_error, error_body
from lit3r.server.routes import runtime_of
from lit3r.server.runs import run, run_events
from lit3r.server.runtime import Runtime, Ticket
from lit3r.server.schemas import (
    THREAD_ID,
    AnswerDocument,
    AskRequest,
    ExportDocument,
    ExportRequest,
    MessageRequest,
    ThreadCreate,
    ThreadHistory,
    ThreadInfo,
    ThreadRename,
)
from lit3r.server.sse import PING, SSE_RESPONSE, frame, stream

router = APIRouter(tags=["answers"])
ThreadId = Annotated[str, Path(pattern=THREAD_ID, description="A thread id.")]


async def answer_frames(runtime: Runtime, ticket: Ticket, work: Callable[[Listener], dict]) -> AsyncIterator[bytes]:
    async for kind, value in run_events(runtime, ticket, work):
        if kind == "ping":
            yield PING
        elif kind == "step":
            yield frame("step", step_view(value))
        elif kind == "result":
            yield frame("answer", value)
            yield frame("done", {"trace_id": value["trace_id"], "thread_id": value.get("thread_id")})
        else:
            yield frame("error", error_body(value.code, value.message))


def admit(runtime: Runtime, planner: str | None, papers: list[str] | None = None) -> Ticket:
    """Admit an answer run; what the session would refuse (planner, papers) is refused here with a status,
    before a stream starts."""
    ticket = runtime.admit()
    try:
        ticket.session.check_request(planner, papers)
    except Exception as exc:
        ticket.release()
        raise as_api_error(exc) from exc
    return ticket


@router.post("/ask", response_model=None, responses={200: {"model": AnswerDocument}})
async def ask(body: AskRequest, runtime: Annotated[Runtime, Depends(runtime_of)]) -> dict:
    """Answer a question with citations (the document of `lit3r ask --json`, plus `trace_id`)."""
    ticket = admit(runtime, body.planner, body.papers)
    seconds = runtime.settings.server.answer_max_seconds

    def work() -> dict:
        with _turn_lock(runtime, body.thread_id):
            return answering.ask(ticket.session, runtime.catalog, body, seconds)

    return await run(runtime, ticket, work)


@router.post("/ask/stream", response_model=None, responses=SSE_RESPONSE)
async def ask_stream(body: AskRequest, runtime: Annotated[Runtime, Depends(runtime_of)]):
    """Answer a question as server-sent events: `step`... then `answer` then `done` (or one `error`)."""
    ticket = admit(runtime, body.planner, body.papers)
    seconds = runtime.settings.server.answer_max_seconds

    def work(listener: Listener) -> dict:
        with _turn_lock(runtime, body.thread_id):
            return answering.ask(ticket.session, runtime.catalog, body, seconds, on_event=listener)

    return stream(answer_frames(runtime, ticket, work))


@router.post("/export", response_model=ExportDocument)
async def export(body: ExportRequest, request: Request) -> dict:
    """An answer with its references: Markdown with author-year or numbered citations and a reference list, or
    the cited papers as BibTeX or CSL-JSON (citation keys from the library when it has them)."""
    from lit3r.app.export import export_answer
    from lit3r.models import Answer

    answer = Answer(question="", text=body.answer, citations=body.citations, sufficient=True)
    with runtime_of(request).lease() as lease:
        papers = lease.session.index.papers
        return {"format": body.format, "export": export_answer(answer, papers, body.format, body.citation_style)}


@router.post("/threads", status_code=201, response_model=ThreadInfo)
async def create_thread(runtime: Annotated[Runtime, Depends(runtime_of)], body: ThreadCreate | None = None) -> dict:
    """Start a conversation; post messages to it with `POST /v1/threads/{thread_id}/messages`."""
    with runtime.lease() as lease:
        thread = lease.session.thread()
    body = body or ThreadCreate()
    record = runtime.catalog.add_thread(thread.thread_id, body.title, body.origin)
    return _info(record)


@router.get("/threads", response_model=dict[str, list[ThreadInfo]])
async def list_threads(
    runtime: Annotated[Runtime, Depends(runtime_of)],
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    origin: Annotated[
        Literal["ui", "api", "openai"] | None,
        Query(
            description="Only the threads made by the web UI, the API or the chat-completions endpoint; default: all."
        ),
    ] = None,
    q: Annotated[str | None, Query(max_length=200, description="Only threads whose title contains this.")] = None,
) -> dict:
    """The threads this server knows, the most recently used first."""
    return {"threads": [_info(t) for t in runtime.catalog.threads(limit, offset, origin, q)]}


@router.patch("/threads/{thread_id}", response_model=ThreadInfo)
async def rename_thread(thread_id: ThreadId, body: ThreadRename, request: Request) -> dict:
    """Give a thread a new title."""
    runtime = runtime_of(request)
    title = " ".join(body.title.split())
    if not title:
        raise ApiError(400, "bad_request", "title: the title is blank")
    with runtime.lease() as lease:
        _known(runtime, lease.session, thread_id)
    runtime.catalog.add_thread(thread_id)  # a thread of the thread store that this server did not make
    return _info(runtime.catalog.rename_thread(thread_id, title) or {})


@router.delete("/threads/{thread_id}", status_code=204)
async def delete_thread(thread_id: ThreadId, request: Request) -> None:
    """Delete a thread: its catalogue entry and its checkpoints in the thread store (turns, pool, numbers)."""
    runtime = runtime_of(request)
    with runtime.lease() as lease:
        _known(runtime, lease.session, thread_id)
        lock = runtime.thread_lock(thread_id)
        if not lock.acquire(blocking=False):
            raise ApiError(409, "thread_busy", f"thread {thread_id!r} is answering a turn; delete it after that")
        try:
            lease.session.thread(thread_id).delete()
            runtime.catalog.delete_thread(thread_id)
        finally:
            lock.release()


@router.get("/threads/{thread_id}", response_model=ThreadHistory)
async def thread_history(thread_id: ThreadId, request: Request) -> dict:
    """A thread and its answered turns, oldest first (standalone question, answer, citation numbers)."""
    runtime = runtime_of(request)
    with runtime.lease() as lease:
        _known(runtime, lease.session, thread_id)
        turns = answering.history(lease.session, runtime.catalog, thread_id)
    record = runtime.catalog.thread(thread_id) or {"id": thread_id, "title": turns[0]["question"] if turns else ""}
    return {**_info({**record, "turns": len(turns)}), "history": turns}


def _turn_work(runtime: Runtime, ticket: Ticket, thread_id: str, body: MessageRequest):
    """The turn's work; an unknown thread or a library filter it cannot apply is refused here, with a status,
    before a stream starts."""
    _known(runtime, ticket.session, thread_id)
    allowed = answering.library_restriction(ticket.session, body)

    def work(listener: Listener | None = None) -> dict:
        with runtime.thread_lock(thread_id):
            thread = ticket.session.thread(thread_id)
            reply = answering.turn(thread, runtime.catalog, body.message, body.planner, listener, allowed)
            return reply.document.model_dump(mode="json")

    return work


@router.post("/threads/{thread_id}/messages", response_model=None, responses={200: {"model": AnswerDocument}})
async def post_message(thread_id: ThreadId, body: MessageRequest, request: Request) -> dict:
    """Ask in a thread: a follow-up is rewritten into a standalone question (`question`), citation numbers
    stay stable within the thread."""
    runtime = runtime_of(request)
    ticket = admit(runtime, body.planner)
    try:
        work = _turn_work(runtime, ticket, thread_id, body)
    except BaseException:
        ticket.release()
        raise
    return await run(runtime, ticket, work)


@router.post(
    "/threads/{thread_id}/messages/stream",
    response_model=None,
    responses=SSE_RESPONSE,
)
async def post_message_stream(thread_id: ThreadId, body: MessageRequest, request: Request):
    """Ask in a thread, as server-sent events (the events of `POST /v1/ask/stream`)."""
    runtime = runtime_of(request)
    ticket = admit(runtime, body.planner)
    try:
        work = _turn_work(runtime, ticket, thread_id, body)
    except BaseException:
        ticket.release()
        raise
    return stream(answer_frames(runtime, ticket, work))


def _turn_lock(runtime: Runtime, thread_id: str | None) -> AbstractContextManager:
    """The thread's lock for a question asked as a thread's turn; nothing to hold for a one-off question."""
    return runtime.thread_lock(thread_id) if thread_id is not None else nullcontext()


def _known(runtime: Runtime, session: Any, thread_id: str) -> None:
    if not answering.thread_exists(session, runtime.catalog, thread_id):
        raise ApiError(404, "unknown_thread", f"no thread {thread_id!r}; create one with POST /v1/threads")


def _info(record: dict) -> dict:
    return {
        "thread_id": record["id"],
        "title": record.get("title") or "",
        "origin": record.get("origin") or "api",
        "created_at": record.get("created_at"),
        "updated_at": record.get("updated_at"),
        "turns": record.get("turns", 0),
    }
