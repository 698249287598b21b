"""The answer trace as data: a recorder of :class:`TraceEvent` records, a JSON writer and a timeline renderer.

:class:`TraceRecorder` collects one event per node turn, tool call, ranking, verdict and model call,
in the order the steps start. It is also the LLM wrapper's recorder (:meth:`TraceRecorder.record`
takes :class:`lit3r.llm.wrapper.LLM` call records), so prompts, raw outputs, token counts and timing
of every model call land in the same list. :func:`write_trace` stores a trace as JSON and
:func:`render_timeline` turns one back into a readable timeline (``lit3r trace show``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from lit3r.models import EventType, TraceEvent

logger = logging.getLogger(__name__)

Listener = Callable[[TraceEvent], None]
"""Called with each event once it is complete (an instant event at once, a timed step when it ends)."""


def now_iso() -> str:
    """The current UTC time in ISO 8601 with microseconds."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


class TraceRecorder:
    """Collects trace events in start order; thread-safe, since tools of one turn may run in parallel.

    ``round`` is the retrieval round that new events belong to unless they name one; the planner
    updates it when a round starts, so model calls recorded by the LLM wrapper get it too.

    Args:
        on_event: A listener for completed events (e.g. a stream to a client). It runs in the thread that
            recorded the event; an exception it raises is logged, never propagated into the run.
    """

    def __init__(self, on_event: Listener | None = None) -> None:
        self.events: list[TraceEvent] = []
        self.round: int | None = None
        self.on_event = on_event
        self._lock = threading.Lock()

    def _place(self, event: TraceEvent) -> TraceEvent:
        with self._lock:
            self.events.append(event)
        return event

    def _done(self, event: TraceEvent) -> None:
        """Hand a completed event to the listener."""
        if self.on_event is None:
            return
        try:
            self.on_event(event)
        except Exception:  # a broken stream must not break the answer
            logger.exception("trace listener failed on %s %s", event.type, event.name)

    def add(
        self, type_: EventType, name: str, data: dict[str, Any] | None = None, *, round_: int | None = None
    ) -> TraceEvent:
        """Record an instant event (zero duration) and return it."""
        event = TraceEvent(
            type=type_, name=name, round=round_ if round_ is not None else self.round, started_at=now_iso()
        )
        event.data = data or {}
        self._done(self._place(event))
        return event

    @contextmanager
    def step(self, type_: EventType, name: str, *, round_: int | None = None) -> Iterator[dict[str, Any]]:
        """Time a block: the event is placed when the block starts and gets its duration when it ends.

        The yielded dict is the event's ``data``; an exception leaving the block is noted as ``error``.
        """
        event = self._place(
            TraceEvent(type=type_, name=name, round=round_ if round_ is not None else self.round, started_at=now_iso())
        )
        started = time.perf_counter()
        try:
            yield event.data
        except Exception as exc:
            event.data["error"] = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            event.duration_ms = round((time.perf_counter() - started) * 1000, 3)
            self._done(event)

    def record(self, call: dict[str, Any]) -> None:
        """Take a record of :class:`lit3r.llm.wrapper.LLM` (an ``llm`` event) or a planner fallback (``note``)."""
        data = {k: v for k, v in call.items() if k not in ("name", "started_at", "duration_ms", "kind")}
        event = TraceEvent(
            type="note" if call.get("kind") == "note" else "llm",
            name=str(call.get("name", "llm")),
            round=self.round,
            started_at=str(call.get("started_at") or now_iso()),
            duration_ms=float(call.get("duration_ms") or 0.0),
            data=data,
        )
        self._done(self._place(event))

    def of_type(self, type_: EventType) -> list[TraceEvent]:
        """The events of one type, in order."""
        return [e for e in self.events if e.type == type_]
