"""What a running server holds: the settings, keys, current session, answer slots, catalogue, jobs and the
executor that answer runs use; and how it switches to a new index generation.

:meth:`Runtime.reload` opens a session on the current generation, loads every part of its index into memory
(the build removes the previous generation's folder once it publishes, so a session must not read its index
lazily from disk after that) and makes it current; the ingest job calls it after each build, and a watcher
thread calls it every ``server.index_poll_s`` seconds, so an index built by ``lit3r index`` in another process
is picked up too.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

from lit3r.app.session import THREADS_FILE, Session
from lit3r.index.layout import IndexLayout
from lit3r.llm.local_server import local_llm
from lit3r.server.auth import load_keys
from lit3r.server.catalog import Catalog
from lit3r.server.errors import ApiError
from lit3r.server.holder import AnswerSlots, Busy, Lease, NoSession, SessionHolder
from lit3r.server.jobs import Jobs
from lit3r.settings import Settings

log = logging.getLogger(__name__)

SessionOpener = Callable[[Settings, object], Session]
"""Opens a session for the settings with the given thread store (checkpointer)."""


def open_session(settings: Settings, checkpointer: object) -> Session:
    return Session(settings, checkpointer=checkpointer)  # type: ignore[arg-type]


def warm(session: Session) -> None:
    """Load every part of the session's index into memory and the query encoder's model."""
    session.index.load_all()
    session.index.encoder.encode_queries(["warm up"])


class Ticket:
    """An admitted answer run: a slot and a lease on the session; :meth:`release` gives both back once."""

    def __init__(self, slots: AnswerSlots, lease: Lease) -> None:
        self._slots = slots
        self.lease = lease
        self._lock = threading.Lock()
        self._released = False

    @property
    def session(self) -> Session:
        return self.lease.session

    def release(self) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
        self.lease.release()
        self._slots.give_back()


class Runtime:
    """The server's state between requests. :meth:`start` opens it, :meth:`close` ends it."""

    def __init__(self, settings: Settings, opener: SessionOpener = open_session) -> None:
        self.settings = settings
        self.keys = load_keys(settings.server)
        self.opener = opener
        self.holder = SessionHolder()
        self.slots = AnswerSlots(settings.server.max_concurrent_answers)
        self.executor = ThreadPoolExecutor(
            max_workers=settings.server.max_concurrent_answers + 1, thread_name_prefix="lit3r-answer"
        )
        self.catalog: Catalog | None = None
        self.jobs = Jobs(settings, on_built=self.reload)
        self.checkpointer: object | None = None
        self._stack = ExitStack()
        self._reload_lock = threading.Lock()
        self._thread_locks: dict[str, threading.Lock] = {}
        self._locks_lock = threading.Lock()
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    @property
    def uploads(self) -> Path:
        return self.settings.home / "uploads"

    def start(self, *, watch: bool = True) -> None:
        """Start the local model server when configured, open the thread store and catalogue, and the session."""
        from langgraph.checkpoint.sqlite import SqliteSaver

        self.settings.home.mkdir(parents=True, exist_ok=True)
        self.settings = self._stack.enter_context(local_llm(self.settings))
        self.jobs.settings = self.settings
        self.checkpointer = self._stack.enter_context(
            SqliteSaver.from_conn_string(str(self.settings.home / THREADS_FILE))
        )
        self.catalog = Catalog(self.settings.home, self.settings.server.max_threads)
        self._stack.callback(self.catalog.close)
        self.reload()
        self.jobs.resume_interrupted()
        if watch:
            self._watcher = threading.Thread(target=self._watch, name="lit3r-index-watch", daemon=True)
            self._watcher.start()

    def reload(self) -> bool:
        """Switch to the current index generation when it is not the one in use; True when it switched."""
        with self._reload_lock:
            generation = IndexLayout(self.settings).current()
            if generation is None or generation == self.holder.generation:
                return False
            session = self.opener(self.settings, self.checkpointer)
            try:
                warm(session)
            except BaseException:
                session.close()
                raise
            self.holder.replace(session, generation)
            log.info("answering from index generation %s", generation)
            return True

    def _watch(self) -> None:
        while not self._stop.wait(self.settings.server.index_poll_s):
            if self.jobs.running is not None:
                continue  # the job switches when its build is done
            try:
                self.reload()
            except Exception:  # a half-written or unreadable generation: keep serving the current one
                log.exception("could not open the new index generation")

    def admit(self) -> Ticket:
        """A slot and the current session for an answer run, or the API error that refuses it."""
        try:
            self.slots.take()
        except Busy as exc:
            raise ApiError(
                429, "too_many_requests", f"the server is busy: {exc}; retry shortly", {"Retry-After": "1"}
            ) from exc
        try:
            lease = self.holder.lease()
        except NoSession as exc:
            self.slots.give_back()
            raise no_index(self.settings) from exc
        return Ticket(self.slots, lease)

    def lease(self) -> Lease:
        """The current session for a request that is not an answer run (search, papers, chunks)."""
        try:
            return self.holder.lease()
        except NoSession as exc:
            raise no_index(self.settings) from exc

    def thread_lock(self, thread_id: str) -> threading.Lock:
        """Serialises the turns of one thread across sessions (a turn may outlive a swap of the session)."""
        with self._locks_lock:
            return self._thread_locks.setdefault(thread_id, threading.Lock())

    def close(self) -> None:
        self._stop.set()
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.holder.close()
        self._stack.close()


def no_index(settings: Settings) -> ApiError:
    return ApiError(
        409,
        "no_index",
        f"no index has been built under {settings.home.name or settings.home}: upload papers (POST /v1/ingest) "
        "or run `lit3r ingest PATH` and `lit3r index`",
    )
