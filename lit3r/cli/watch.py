"""``lit3r watch FOLDER``: keep a growing folder in the corpus and the index up to date."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lit3r.cli.app import app, err, fail, out, printable, state, writable_home
from lit3r.corpus.store import CorpusStore

if TYPE_CHECKING:
    from lit3r.corpus.watch import SyncReport
    from lit3r.index.build import BuildReport


@app.command()
def watch(
    folder: Annotated[Path, typer.Argument(help="The folder to watch (searched recursively).")],
    interval: Annotated[float, typer.Option(help="Seconds between two looks at the folder.", min=0.1)] = 2.0,
    max_seconds: Annotated[
        float | None, typer.Option(help="Stop after this many seconds (default: run until Ctrl-C).", min=0)
    ] = None,
    index: Annotated[bool, typer.Option(help="Update the index after every change.")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON line per change on stdout.")] = False,
) -> None:
    """Ingest new and changed files of FOLDER as they appear, remove the papers of deleted files, and
    update the index (only new text is embedded)."""
    from lit3r.corpus.watch import snapshot, sync_folder
    from lit3r.index.build import EmptyCorpusError, build_index

    if not folder.is_dir():
        fail(f"{folder}: not a folder")
    settings = state.settings
    writable_home()
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    seen: dict[str, tuple[int, int]] | None = None
    try:
        while deadline is None or time.monotonic() < deadline:
            current = snapshot(folder)
            if current != seen:
                first, seen = seen is None, current
                with CorpusStore(settings.home) as store:
                    report = sync_folder(folder, store, limits=settings.limits, chunker=settings.chunker)
                    built = None
                    if index and (report.changed or first):
                        try:
                            built = build_index(settings, store)
                        except EmptyCorpusError:
                            built = None
                    papers = store.count_papers()
                _report(report, built, papers, as_json)
            time.sleep(interval)
    except KeyboardInterrupt:
        err.print("stopped")


def _report(report: SyncReport, built: BuildReport | None, papers: int, as_json: bool) -> None:
    line = {
        "added": report.ingest.added,
        "failed": report.ingest.failed,
        "removed": report.removed,
        "papers_removed": report.papers_removed,
        "papers_in_corpus": papers,
        "index_generation": built.generation.name if built else None,
        "index_chunks": built.chunks if built else None,
    }
    if as_json:
        print(json.dumps(line), flush=True)
        return
    for path, problem in report.ingest.failed:
        err.print(printable(f"skipped {path}: {problem}"), markup=False, highlight=False)
    out.print(
        printable(
            f"{len(report.ingest.added)} file(s) ingested, {len(report.removed)} removed "
            f"({report.papers_removed} papers); {papers} papers"
            + (f"; index {built.generation.name} ({built.chunks} chunks)" if built else "")
        ),
        markup=False,
        highlight=False,
    )
