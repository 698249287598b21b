"""The corpus store: every ingested source file and the papers parsed from it, in one SQLite file.

SQLite gives atomic commits, so an ingest killed half-way leaves the store as it
was after the last file that went in. The store runs in WAL mode with
``synchronous=NORMAL``: a commit is atomic and survives the process being killed
without an fsync per file (300 small files ingest in 0.2 s instead of 5.5 s); a
power cut may lose the last commits, never half of one. Each source is recorded
with its content hash; re-ingesting an unchanged file does no work.

Schema versions (``PRAGMA user_version``): 0 is the first layout; 1 adds each
source's ``meta_hash`` (the hash of the library metadata it was ingested with,
for library entries) and each paper's normalised ``doi`` and ``arxiv_id``
(indexed: how the same paper is found when it comes in again). Opening an older
store migrates it in place; its papers stay readable as they were.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from lit3r.models import ParsedPaper

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (
    path TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL,
    status TEXT NOT NULL,          -- 'ok' or 'error'
    error TEXT,
    paper_ids TEXT NOT NULL,       -- JSON list
    ingested_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS papers (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    data TEXT NOT NULL             -- ParsedPaper as JSON
);
CREATE INDEX IF NOT EXISTS papers_source ON papers(source);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,          -- 'references_stale': papers changed since references were last resolved
    value TEXT NOT NULL
);
"""
SCHEMA_VERSION = 1
_MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "ALTER TABLE sources ADD COLUMN meta_hash TEXT",  # library entries: hash of the metadata ingested
        "ALTER TABLE papers ADD COLUMN doi TEXT",  # normalised DOI (lit3r.corpus.library.identity)
        "ALTER TABLE papers ADD COLUMN arxiv_id TEXT",  # arXiv id without version
        "CREATE INDEX IF NOT EXISTS papers_doi ON papers(doi)",
        "CREATE INDEX IF NOT EXISTS papers_arxiv ON papers(arxiv_id)",
        "CREATE INDEX IF NOT EXISTS sources_sha ON sources(sha256)",  # the same file under another path
    ),
}


def file_sha256(path: Path) -> str:
    """Content hash of a file, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def paper_hash(parsed: ParsedPaper) -> str:
    """Content hash of a parsed paper (what the index build compares to find changed papers)."""
    return hashlib.sha256(parsed.model_dump_json().encode()).hexdigest()[:16]


class StoreError(RuntimeError):
    """The corpus store cannot be opened where it should be; the message says why."""


@dataclass(frozen=True)
class SourceRecord:
    path: str
    sha256: str
    status: str
    error: str | None
    paper_ids: list[str]
    meta_hash: str | None = None
    """The hash of the library metadata a library entry was ingested with (None: a plain file)."""


_SOURCE_COLUMNS = "path, sha256, status, error, paper_ids, meta_hash"


class CorpusStore:
    """Papers and their sources under ``<home>/corpus.sqlite``."""

    def __init__(self, home: Path, *, create: bool = True) -> None:
        """Open (with ``create``: create) the store of ``home``; :class:`StoreError` says why it cannot be."""
        self.path = home / "corpus.sqlite"
        if home.exists() and not home.is_dir():
            raise StoreError(f"the lit3r home {home} is a file, not a folder")
        if not create and not self.path.is_file():
            raise StoreError(f"no corpus in {home} (no corpus.sqlite): run `lit3r ingest PATH` first")
        try:
            home.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path)
            self._db.execute("PRAGMA journal_mode=WAL")  # one file's commit is atomic without an fsync of its own
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            self._migrate()
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(
                f"cannot open the corpus store {self.path}: {getattr(exc, 'strerror', None) or exc}"
            ) from exc

    def _migrate(self) -> None:
        """Bring an older store up to :data:`SCHEMA_VERSION`, one version per transaction."""
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer lit3r (store schema {version}, this one reads {SCHEMA_VERSION})"
            )
        for target in range(version + 1, SCHEMA_VERSION + 1):
            self._db.execute("BEGIN IMMEDIATE")  # another process opening the same old store waits, then skips
            try:
                if self._db.execute("PRAGMA user_version").fetchone()[0] < target:
                    for statement in _MIGRATIONS[target]:
                        self._db.execute(statement)
                    self._db.execute(f"PRAGMA user_version = {target}")
                self._db.execute("COMMIT")
            except sqlite3.Error:
                self._db.execute("ROLLBACK")
                raise
        if version < 1:
            self._backfill_ids()

    def _backfill_ids(self) -> None:
        """Fill the new DOI and arXiv columns from the papers already stored (their JSON may carry them)."""
        rows = [
            (p.paper.doi, p.paper.arxiv_id, p.paper.id) for p in self.iter_papers() if p.paper.doi or p.paper.arxiv_id
        ]
        with self._db:
            self._db.executemany("UPDATE papers SET doi = ?, arxiv_id = ? WHERE id = ?", rows)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> CorpusStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def source(self, path: str) -> SourceRecord | None:
        row = self._db.execute(f"SELECT {_SOURCE_COLUMNS} FROM sources WHERE path = ?", (path,)).fetchone()
        return _source_record(row) if row else None

    def sources(self) -> list[SourceRecord]:
        rows = self._db.execute(f"SELECT {_SOURCE_COLUMNS} FROM sources ORDER BY path")
        return [_source_record(r) for r in rows]

    def sources_with_sha(self, sha256: str) -> list[SourceRecord]:
        """Every source recorded with these bytes (the same file under another path)."""
        rows = self._db.execute(f"SELECT {_SOURCE_COLUMNS} FROM sources WHERE sha256 = ? ORDER BY path", (sha256,))
        return [_source_record(r) for r in rows]

    def find_identity(self, doi: str | None, arxiv_id: str | None) -> list[tuple[str, str]]:
        """``(paper id, source)`` of every stored paper with this normalised DOI or arXiv id."""
        if not doi and not arxiv_id:
            return []
        rows = self._db.execute(
            "SELECT id, source FROM papers WHERE (doi IS NOT NULL AND doi = ?)"
            " OR (arxiv_id IS NOT NULL AND arxiv_id = ?) ORDER BY rowid",
            (doi, arxiv_id),
        )
        return [(r[0], r[1]) for r in rows]

    def owner_of(self, paper_id: str) -> str | None:
        """The source a paper id was ingested from, if any."""
        row = self._db.execute("SELECT source FROM papers WHERE id = ?", (paper_id,)).fetchone()
        return row[0] if row else None

    def replace_source(
        self, path: str, sha256: str, papers: list[ParsedPaper], *, meta_hash: str | None = None
    ) -> None:
        """Record a successfully parsed source and its papers, replacing what it held before, atomically.

        ``meta_hash``: the hash of the library metadata the papers carry (library entries only)."""
        with self._db:
            self._db.execute("DELETE FROM papers WHERE source = ?", (path,))
            self._db.executemany(
                "INSERT OR REPLACE INTO papers (id, source, content_hash, data, doi, arxiv_id)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [(p.paper.id, path, paper_hash(p), p.model_dump_json(), p.paper.doi, p.paper.arxiv_id) for p in papers],
            )
            self._db.execute(
                f"INSERT OR REPLACE INTO sources ({_SOURCE_COLUMNS}, ingested_at) VALUES (?, ?, 'ok', NULL, ?, ?, ?)",
                (path, sha256, json.dumps([p.paper.id for p in papers]), meta_hash, _now()),
            )
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('references_stale', '1')")

    def remove_source(self, path: str) -> int:
        """Forget a source and its papers (a file deleted from a watched folder); how many papers went."""
        with self._db:
            gone = self._db.execute("DELETE FROM papers WHERE source = ?", (path,)).rowcount
            self._db.execute("DELETE FROM sources WHERE path = ?", (path,))
            if gone:
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('references_stale', '1')")
        return gone

    def record_error(self, path: str, sha256: str, error: str) -> None:
        """Remember a file that could not be ingested (its earlier papers, if any, stay)."""
        previous = self.source(path)
        with self._db:
            self._db.execute(
                f"INSERT OR REPLACE INTO sources ({_SOURCE_COLUMNS}, ingested_at)"
                " VALUES (?, ?, 'error', ?, ?, NULL, ?)",
                (path, sha256, error, json.dumps(previous.paper_ids if previous else []), _now()),
            )

    def references_stale(self) -> bool:
        """True when papers changed after references were last resolved (e.g. an ingest killed before that)."""
        return self._db.execute("SELECT 1 FROM meta WHERE key = 'references_stale'").fetchone() is not None

    def mark_references_resolved(self) -> None:
        with self._db:
            self._db.execute("DELETE FROM meta WHERE key = 'references_stale'")

    def update_papers(self, papers: Iterable[ParsedPaper]) -> None:
        """Rewrite papers in place (e.g. after reference resolution)."""
        with self._db:
            self._db.executemany(
                "UPDATE papers SET data = ?, content_hash = ?, doi = ?, arxiv_id = ? WHERE id = ?",
                [(p.model_dump_json(), paper_hash(p), p.paper.doi, p.paper.arxiv_id, p.paper.id) for p in papers],
            )

    def iter_papers(self) -> Iterator[ParsedPaper]:
        for (data,) in self._db.execute("SELECT data FROM papers ORDER BY rowid"):
            yield ParsedPaper.model_validate_json(data)

    def paper_hashes(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT id, content_hash FROM papers ORDER BY rowid").fetchall())

    def get(self, paper_id: str) -> ParsedPaper | None:
        row = self._db.execute("SELECT data FROM papers WHERE id = ?", (paper_id,)).fetchone()
        return ParsedPaper.model_validate_json(row[0]) if row else None

    def count_papers(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM papers").fetchone()[0]


def _source_record(row: tuple) -> SourceRecord:
    return SourceRecord(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5])


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
