"""Answer runs off the event loop: in the runtime's executor, holding their ticket until the run ends.

A run keeps its slot and its lease on the session until the graph is done, even when the client has gone
(a LangGraph run cannot be stopped half-way), so the concurrency bound holds. :func:`run` awaits the result;
:func:`run_events` also yields each trace event as the run completes it (the session's ``on_event``), with a
``ping`` when nothing happened for :data:`PING_S` seconds, so a stream can keep its connection alive.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal, TypeVar

from lit3r.index.corpus_index import IndexNotBuiltError
from lit3r.llm.errors import LLMConfigError, LLMError
from lit3r.llm.trace import Listener
from lit3r.models import TraceEvent
from lit3r.server.errors import ApiError
from lit3r.server.runtime import Runtime, Ticket

log = logging.getLogger(__name__)

T = TypeVar("T")
PING_S = 15.0
Item = tuple[Literal["step", "result", "error", "ping"], Any]


def as_api_error(exc: BaseException) -> ApiError:
    """What a client is told about a failed run (unexpected failures are logged with their traceback)."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, LLMConfigError):
        return ApiError(400, "llm_unavailable", str(exc))
    if isinstance(exc, IndexNotBuiltError):
        return ApiError(409, "no_index", str(exc))
    if isinstance(exc, LLMError):
        return ApiError(502, "llm_failed", f"the language model call failed: {exc}")
    if isinstance(exc, ValueError):
        return ApiError(422, "invalid_request", str(exc))
    log.error("answer run failed", exc_info=exc)
    return ApiError(500, "internal_error", f"the answer run failed ({type(exc).__name__}); see the server log")


def _in_ticket(ticket: Ticket, work: Callable[[], T]) -> Callable[[], T]:
    def call() -> T:
        try:
            return work()
        finally:
            ticket.release()

    return call


async def run(runtime: Runtime, ticket: Ticket, work: Callable[[], T]) -> T:
    """Run ``work`` in the executor and return its result; failures become :class:`ApiError`."""
    loop = asyncio.get_running_loop()
    try:
        future = loop.run_in_executor(runtime.executor, _in_ticket(ticket, work))
    except BaseException:
        ticket.release()
        raise
    try:
        return await future
    except ApiError:
        raise
    except Exception as exc:
        raise as_api_error(exc) from exc


async def run_events(runtime: Runtime, ticket: Ticket, work: Callable[[Listener], T]) -> AsyncIterator[Item]:
    """Run ``work(listener)`` and yield ``("step", TraceEvent)`` as events complete, then ``("result", value)``
    or ``("error", ApiError)``; ``("ping", None)`` while nothing happens."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Item] = asyncio.Queue()

    def put(item: Item) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop has closed (the server is stopping): nobody is listening
            pass

    def listener(event: TraceEvent) -> None:
        put(("step", event))

    def call() -> None:
        try:
            put(("result", work(listener)))
        except Exception as exc:
            put(("error", as_api_error(exc)))

    try:
        loop.run_in_executor(runtime.executor, _in_ticket(ticket, call))
    except BaseException:
        ticket.release()
        raise
    while True:
        try:
            item = await asyncio.wait_for(queue.get(), PING_S)
        except TimeoutError:
            yield ("ping", None)
            continue
        yield item
        if item[0] in ("result", "error"):
            return
