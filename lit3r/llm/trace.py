"""The run's one trace recorder: every part of a run writes its :class:`~lit3r.models.TraceEvent` records here.

:class:`TraceRecorder` collects one event per node turn, tool call, ranking, verdict, model call, note and
fallback, in the order the steps start. The LLM wrapper hands it each model call (:meth:`TraceRecorder.record`:
prompt, raw output, tokens, timing), the planning helpers and the readers their notes and
:class:`~lit3r.models.Fallback` records (:meth:`TraceRecorder.fallback`), the tools and nodes their steps
(:meth:`TraceRecorder.step`, :meth:`TraceRecorder.add`). It lives in the model door's package because that is
the lowest layer that writes into it; everything above may import it. :mod:`lit3r.app.traces` stores a trace as
JSON and renders it as a timeline (``lit3r trace show``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from lit3r.models import EventType, Fallback, TraceEvent

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
        """Take one model call as :class:`lit3r.llm.wrapper.LLM` records it (an ``llm`` event)."""
        data = {k: v for k, v in call.items() if k not in ("name", "started_at", "duration_ms", "kind")}
        event = TraceEvent(
            type="llm",
            name=str(call.get("name", "llm")),
            round=self.round,
            started_at=str(call.get("started_at") or now_iso()),
            duration_ms=float(call.get("duration_ms") or 0.0),
            data=data,
        )
        self._done(self._place(event))

    def fallback(self, fallback: Fallback, **detail: Any) -> TraceEvent:
        """Log a step's fall back to its offline path as a warning and record it (a ``fallback`` event named
        ``<stage>.fallback`` whose data is the record's fields plus ``detail``)."""
        logger.warning("%s fell back: %s; %s", fallback.stage, fallback.reason, fallback.instead)
        return self.add("fallback", f"{fallback.stage}.fallback", {**fallback.model_dump(), **detail})

    def fallbacks(self) -> list[Fallback]:
        """Every step of the run that fell back, in order, each stage and reason once."""
        found: dict[tuple[str, str], Fallback] = {}
        for event in self.of_type("fallback"):
            fallback = Fallback.model_validate(event.data)
            found.setdefault((fallback.stage, fallback.reason), fallback)
        return list(found.values())

    def calls(self) -> list[dict[str, Any]]:
        """The model calls as the wrapper recorded them: each ``llm`` event's data with its name and timing."""
        return [
            {**e.data, "name": e.name, "started_at": e.started_at, "duration_ms": e.duration_ms}
            for e in self.of_type("llm")
        ]

    def of_type(self, type_: EventType) -> list[TraceEvent]:
        """The events of one type, in order."""
        return [e for e in self.events if e.type == type_]
