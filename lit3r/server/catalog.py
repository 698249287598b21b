"""The server's catalogue of threads (``<home>/server.sqlite``): titles, times, each turn's message and trace,
and which OpenAI-style conversation continues which thread.

The thread's own state (pool, citation numbers, answered turns) lives in the thread store that
:class:`lit3r.app.session.Session` keeps (``threads.sqlite``); this catalogue only lets the server list threads
and find the trace of each turn.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lit3r.server.errors import ApiError

FILE = "server.sqlite"
TITLE_CHARS = 80
ORIGINS = ("ui", "api", "openai")  # who made a thread: the web UI, the HTTP API, the chat-completions endpoint


def title_of(text: str) -> str:
    """A thread title from a question or a name: white space folded, and when longer than :data:`TITLE_CHARS`, cut
    at the last word boundary with an ellipsis (never mid-word)."""
    folded = " ".join(text.split())
    if len(folded) <= TITLE_CHARS:
        return folded
    cut = folded[: TITLE_CHARS - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > TITLE_CHARS // 2 else cut).rstrip(" ,;:") + "\u2026"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    origin TEXT NOT NULL DEFAULT 'api'
);
CREATE TABLE IF NOT EXISTS turns (
    thread_id TEXT NOT NULL,
    position INTEGER NOT NULL,       -- 0-based index among the thread's answered turns
    message TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (thread_id, position)
);
CREATE TABLE IF NOT EXISTS conversations (
    fingerprint TEXT PRIMARY KEY,    -- hash of a conversation's messages so far
    thread_id TEXT NOT NULL
);
"""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def fingerprint(messages: Sequence[tuple[str, str]]) -> str:
    """A stable key of a conversation: its (role, text) messages, white space folded."""
    folded = [[role, " ".join(text.split())] for role, text in messages]
    return hashlib.sha256(json.dumps(folded, ensure_ascii=False).encode("utf-8")).hexdigest()


class Catalog:
    """Threads, turns and conversation fingerprints in one SQLite file, safe to share between threads."""

    def __init__(self, home: Path, max_threads: int | None = None) -> None:
        home.mkdir(parents=True, exist_ok=True)
        self.max_threads = max_threads
        self.path = home / FILE
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        self._lock = threading.Lock()
        with self._lock:
            self._db.executescript(_SCHEMA)
            self._migrate()

    def _migrate(self) -> None:
        """Give a catalogue written before threads had an origin its ``origin`` column: a thread that continues
        a chat-completions conversation is 'openai', every other one 'ui' (all of them were in the web UI's
        sidebar before, so none disappears from it)."""
        columns = {row["name"] for row in self._db.execute("PRAGMA table_info(threads)")}
        if "origin" in columns:
            return
        with self._db:
            self._db.execute("ALTER TABLE threads ADD COLUMN origin TEXT NOT NULL DEFAULT 'api'")
            self._db.execute(
                "UPDATE threads SET origin = CASE WHEN id IN (SELECT thread_id FROM conversations) "
                "THEN 'openai' ELSE 'ui' END"
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def add_thread(self, thread_id: str, title: str = "", origin: str = "api") -> dict[str, Any]:
        """Record a thread made by ``origin`` (one of :data:`ORIGINS`; no-op when known) and return it; past
        ``max_threads`` a new one is refused with HTTP 429 ``too_many_threads`` (nothing is dropped: a thread
        another client holds stays answerable)."""
        if origin not in ORIGINS:
            raise ValueError(f"origin: {origin!r} is not one of {', '.join(ORIGINS)}")
        stamp = now()
        with self._lock, self._db:
            known = self._db.execute("SELECT 1 FROM threads WHERE id = ?", (thread_id,)).fetchone()
            (count,) = self._db.execute("SELECT COUNT(*) FROM threads").fetchone()
            if not known and self.max_threads is not None and count >= self.max_threads:
                raise ApiError(
                    429,
                    "too_many_threads",
                    f"this server keeps at most {self.max_threads} threads (server.max_threads) and holds "
                    f"{count}; continue an existing thread or raise the limit",
                )
            self._db.execute(
                "INSERT OR IGNORE INTO threads (id, title, created_at, updated_at, origin) VALUES (?, ?, ?, ?, ?)",
                (thread_id, title_of(title), stamp, stamp, origin),
            )
        return self.thread(thread_id) or {}

    def thread(self, thread_id: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT t.*, (SELECT COUNT(*) FROM turns WHERE thread_id = t.id) AS turns FROM threads t WHERE id = ?",
                (thread_id,),
            ).fetchone()
        return dict(row) if row else None

    def threads(
        self, limit: int = 100, offset: int = 0, origin: str | None = None, query: str | None = None
    ) -> list[dict[str, Any]]:
        """Threads, the most recently used first; ``origin``: only those it made; ``query``: only those whose
        title contains it (case-insensitive for ASCII letters)."""
        where, params = [], []
        if origin is not None:
            where.append("origin = ?")
            params.append(origin)
        if query:
            escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            where.append("title LIKE ? ESCAPE '\\'")
            params.append(f"%{escaped}%")
        clause = f"WHERE {' AND '.join(where)} " if where else ""
        with self._lock:
            rows = self._db.execute(
                "SELECT t.*, (SELECT COUNT(*) FROM turns WHERE thread_id = t.id) AS turns FROM threads t "
                f"{clause}ORDER BY updated_at DESC, rowid DESC LIMIT ? OFFSET ?",
                (*params, limit, offset),
            ).fetchall()
        return [dict(r) for r in rows]

    def rename_thread(self, thread_id: str, title: str) -> dict[str, Any] | None:
        """Give a known thread a new title; the thread, or None when unknown."""
        with self._lock, self._db:
            self._db.execute("UPDATE threads SET title = ? WHERE id = ?", (title_of(title), thread_id))
        return self.thread(thread_id)

    def delete_thread(self, thread_id: str) -> bool:
        """Forget a thread, its turns and the conversations that continue in it; whether it was known."""
        with self._lock, self._db:
            gone = self._db.execute("DELETE FROM threads WHERE id = ?", (thread_id,)).rowcount
            self._db.execute("DELETE FROM turns WHERE thread_id = ?", (thread_id,))
            self._db.execute("DELETE FROM conversations WHERE thread_id = ?", (thread_id,))
        return bool(gone)

    def add_turn(self, thread_id: str, position: int, message: str, trace_id: str) -> None:
        """Record a thread's answered turn; the first one names an untitled thread."""
        stamp = now()
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR IGNORE INTO threads (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                (thread_id, title_of(message), stamp, stamp),
            )
            self._db.execute(
                "UPDATE threads SET updated_at = ?, title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ?",
                (stamp, title_of(message), thread_id),
            )
            self._db.execute(
                "INSERT OR REPLACE INTO turns VALUES (?, ?, ?, ?, ?)", (thread_id, position, message, trace_id, stamp)
            )

    def turns(self, thread_id: str) -> dict[int, dict[str, Any]]:
        """The recorded turns of a thread by position."""
        with self._lock:
            rows = self._db.execute(
                "SELECT position, message, trace_id, created_at FROM turns WHERE thread_id = ?", (thread_id,)
            ).fetchall()
        return {r["position"]: dict(r) for r in rows}

    def conversation(self, key: str) -> str | None:
        """The thread that continues the conversation with this fingerprint."""
        with self._lock:
            row = self._db.execute("SELECT thread_id FROM conversations WHERE fingerprint = ?", (key,)).fetchone()
        return row[0] if row else None

    def remember_conversation(self, key: str, thread_id: str) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO conversations VALUES (?, ?)", (key, thread_id))
