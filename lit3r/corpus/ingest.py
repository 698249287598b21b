"""Ingest: find files, parse the new or changed ones, store their papers, resolve references.

A file whose content hash is already recorded is skipped without parsing. A
file that cannot be parsed is reported by name with the problem and skipped;
the others still go in.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from lit3r.corpus.parsers import SUPPORTED_SUFFIXES, ParseError, parser_for
from lit3r.corpus.references import resolve_references
from lit3r.corpus.store import CorpusStore, file_sha256
from lit3r.models import ParsedPaper

log = logging.getLogger(__name__)


@dataclass
class IngestReport:
    """What one ingest run did, file by file."""

    added: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    papers_added: int = 0
    renamed: list[tuple[str, str]] = field(default_factory=list)
    references_resolved: int = 0

    @property
    def did_work(self) -> bool:
        return bool(self.added)


def discover(paths: Iterable[Path]) -> tuple[list[Path], list[tuple[str, str]]]:
    """Files to ingest under ``paths`` (folders recursively, hidden entries skipped) and paths that do not exist."""
    found: list[Path] = []
    missing: list[tuple[str, str]] = []
    for path in paths:
        if path.is_dir():
            candidates = sorted(p for p in path.rglob("*") if p.is_file())
            found.extend(
                p
                for p in candidates
                if not any(part.startswith(".") for part in p.relative_to(path).parts)
                and p.name.lower().endswith(SUPPORTED_SUFFIXES)
            )
        elif path.is_file():
            found.append(path)
        else:
            missing.append((str(path), "no such file or folder"))
    return found, missing


def ingest(
    paths: Iterable[Path],
    store: CorpusStore,
    *,
    force: bool = False,
    on_file: Callable[[Path], None] | None = None,
) -> IngestReport:
    """Ingest files and folders into ``store``; ``on_file`` is called after each file (progress bars)."""
    files, missing = discover(paths)
    report = IngestReport(failed=list(missing))
    for path in files:
        _ingest_file(path.resolve(), store, report, force=force)
        if on_file:
            on_file(path)
    if report.did_work:
        report.references_resolved = resolve_corpus_references(store)
    return report


def _ingest_file(path: Path, store: CorpusStore, report: IngestReport, *, force: bool) -> None:
    key = str(path)
    try:
        sha = file_sha256(path)
    except OSError as exc:
        report.failed.append((key, f"cannot read file: {exc}"))
        return
    previous = store.source(key)
    if previous and previous.sha256 == sha and not force:
        if previous.status == "ok":
            report.unchanged.append(key)
        else:
            report.failed.append((key, f"{previous.error} (unchanged since the last attempt)"))
        return
    parser = parser_for(path)
    if parser is None:
        report.failed.append((key, f"unsupported file type; lit3r reads {', '.join(SUPPORTED_SUFFIXES)}"))
        return
    try:
        papers = [p for p in parser(path) if _keep(p, key, report)]
        if not papers:
            raise ParseError(path, "no paper with text in this file")
    except ParseError as exc:
        store.record_error(key, sha, exc.problem)
        report.failed.append((key, exc.problem))
        return
    papers = _unique_ids(papers, key, store, report)
    store.replace_source(key, sha, papers)
    report.added.append(key)
    report.papers_added += len(papers)


def _keep(parsed: ParsedPaper, source: str, report: IngestReport) -> bool:
    if parsed.is_empty:
        report.failed.append((source, f"paper {parsed.paper.id!r} has no text; skipped"))
        return False
    return True


def _unique_ids(papers: list[ParsedPaper], source: str, store: CorpusStore, report: IngestReport) -> list[ParsedPaper]:
    """Give a paper a new id when another source already holds its id (two files named alike)."""
    out = []
    for parsed in papers:
        owner = store.owner_of(parsed.paper.id)
        if owner is not None and owner != source:
            new_id = f"{parsed.paper.id}-{hashlib.sha256(source.encode()).hexdigest()[:6]}"
            report.renamed.append((parsed.paper.id, new_id))
            log.warning("%s: paper id %s already used by %s; stored as %s", source, parsed.paper.id, owner, new_id)
            parsed = parsed.model_copy(update={"paper": parsed.paper.model_copy(update={"id": new_id})})
        out.append(parsed)
    return out


def resolve_corpus_references(store: CorpusStore) -> int:
    """Match every reference of every paper to corpus papers by normalised title; store the changes."""
    parsed = list(store.iter_papers())
    before = {p.paper.id: [r.resolved_id for r in p.paper.references] for p in parsed}
    papers = [p.paper for p in parsed]
    for paper in papers:
        for reference in paper.references:
            reference.resolved_id = None
    resolved = resolve_references(papers)
    changed = [p for p in parsed if [r.resolved_id for r in p.paper.references] != before[p.paper.id]]
    if changed:
        store.update_papers(changed)
    return resolved
