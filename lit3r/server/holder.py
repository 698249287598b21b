"""The session every request shares, swapped atomically for a new index generation; the answer-run limit.

:class:`SessionHolder` hands out leases on the current :class:`~lit3r.app.session.Session`. When a build
publishes a new generation, :meth:`SessionHolder.replace` makes a new session current at once: requests that
start after it get the new one, runs already holding a lease finish on the old one, and the old session is
closed when its last lease ends. :class:`AnswerSlots` bounds how many answer runs go at once; a request past
the bound is refused (HTTP 429) rather than queued.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class Closable(Protocol):
    def close(self) -> None: ...


@dataclass(eq=False)
class _Entry:
    session: Closable
    generation: Path | None
    users: int = 0
    retired: bool = False


class NoSession(RuntimeError):
    """No index has been built yet, so there is no session to answer with."""


class Lease:
    """One user's hold on a session; :meth:`release` (idempotent) lets a retired session close."""

    def __init__(self, holder: SessionHolder, entry: _Entry) -> None:
        self._holder = holder
        self._entry = entry
        self._released = False

    @property
    def session(self):  # the Session (typed loosely so tests can hold stand-ins)
        return self._entry.session

    @property
    def generation(self) -> Path | None:
        return self._entry.generation

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._holder._release(self._entry)

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()


class SessionHolder:
    """The current session (None until an index exists) and the retired ones still in use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: _Entry | None = None

    @property
    def generation(self) -> Path | None:
        """The index generation of the current session."""
        with self._lock:
            return self._current.generation if self._current else None

    @property
    def ready(self) -> bool:
        with self._lock:
            return self._current is not None

    def lease(self) -> Lease:
        """A hold on the current session; raises :class:`NoSession` when there is none."""
        with self._lock:
            entry = self._current
            if entry is None:
                raise NoSession("no index yet")
            entry.users += 1
        return Lease(self, entry)

    @contextmanager
    def using(self) -> Iterator[object]:
        """The current session for the duration of a block."""
        lease = self.lease()
        try:
            yield lease.session
        finally:
            lease.release()

    def replace(self, session: Closable, generation: Path | None) -> None:
        """Make ``session`` current; the previous one closes once its leases are released."""
        with self._lock:
            old, self._current = self._current, _Entry(session, generation)
            close = old is not None and self._retire(old)
        if close:
            old.session.close()

    def close(self) -> None:
        """Retire the current session (it closes when its last lease ends)."""
        with self._lock:
            old, self._current = self._current, None
            close = old is not None and self._retire(old)
        if close:
            old.session.close()

    @staticmethod
    def _retire(entry: _Entry) -> bool:
        entry.retired = True
        return entry.users == 0

    def _release(self, entry: _Entry) -> None:
        with self._lock:
            entry.users -= 1
            close = entry.retired and entry.users == 0
        if close:
            entry.session.close()


class Busy(RuntimeError):
    """Every answer slot is taken."""


class AnswerSlots:
    """At most ``limit`` answer runs at once; :meth:`take` never waits."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._running = 0

    @property
    def running(self) -> int:
        with self._lock:
            return self._running

    def take(self) -> None:
        """Claim a slot or raise :class:`Busy`."""
        with self._lock:
            if self._running >= self.limit:
                raise Busy(f"{self._running} answer runs are in progress (the limit is {self.limit})")
            self._running += 1

    def give_back(self) -> None:
        with self._lock:
            self._running -= 1
