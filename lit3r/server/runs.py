"""Answer runs off the event loop: in the runtime's executor, holding their ticket until the run ends.

A run keeps its slot and its lease on the session until the graph is done, even when the client has gone
(a LangGraph run cannot be stopped half-way), so the concurrency bound holds. :func:`run` awaits the result;
:func:`run_events` also yields each trace event as the run completes it (the session's ``on_event``), with a
``ping`` when nothing happened for :data:`PING_S` seconds, so a stream can keep its connection alive.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal, TypeVar

from lit3r.llm.trace import Listener
from lit3r.models import TraceEvent
from lit3r.server.errors import ApiError, as_api_error
from lit3r.server.runtime import Runtime, Ticket

T = TypeVar("T")
PING_S = 15.0
Item = tuple[Literal["step", "result", "error", "ping"], Any]


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
