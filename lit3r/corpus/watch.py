"""A growing folder kept in the corpus: new and changed files ingested, deleted files' papers removed.

:func:`snapshot` lists what a folder holds (every file ingest would read, with its size and modification
time); :func:`sync_folder` brings the corpus store in line with the folder: files that are new or
changed go in through :func:`~lit3r.corpus.ingest.ingest` (which skips a file whose content hash it
already holds), and the papers of files that left the folder leave the store. Polling a snapshot is
the change detector: it needs no file-system events, works on network folders, and a loop of it is
bounded by the caller.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from lit3r.corpus.discover import discover
from lit3r.corpus.ingest import IngestReport, ingest
from lit3r.corpus.store import CorpusStore
from lit3r.settings import ChunkerSettings, LimitsSettings

Snapshot = dict[str, tuple[int, int]]
"""Resolved file path -> (size, modification time in ns)."""


@dataclass
class SyncReport:
    """What one pass over the folder changed."""

    ingest: IngestReport
    removed: list[str] = field(default_factory=list)
    """Files gone from the folder whose papers left the corpus."""
    papers_removed: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.ingest.added or self.removed)


def snapshot(folder: Path) -> Snapshot:
    """Size and modification time of every file ingest would read under ``folder``."""
    state: Snapshot = {}
    for path in discover([folder]).files:
        try:
            stat = path.stat()
        except OSError:
            continue
        state[str(path.resolve())] = (stat.st_size, stat.st_mtime_ns)
    return state


def sync_folder(
    folder: Path,
    store: CorpusStore,
    *,
    limits: LimitsSettings | None = None,
    chunker: ChunkerSettings | None = None,
) -> SyncReport:
    """Ingest the new and changed files of ``folder`` and remove the papers of files no longer in it."""
    root = str(folder.resolve())
    present = set(snapshot(folder))
    removed = [
        record.path
        for record in store.sources()
        if (record.path == root or record.path.startswith(root + os.sep)) and record.path not in present
    ]
    papers_removed = sum(store.remove_source(path) for path in removed)
    report = ingest([Path(p) for p in sorted(present)], store, limits=limits, chunker=chunker)
    return SyncReport(report, removed, papers_removed)
