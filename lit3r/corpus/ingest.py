"""Ingest: find files, parse the new or changed ones, store their papers, resolve references.

A file whose content hash is already recorded is skipped without parsing. A
file that cannot be parsed is reported by name with the problem and skipped;
the others still go in. Inside a file of many records, a record that cannot be
read, or a paper over a limit (:class:`~lit3r.settings.LimitsSettings`), is
skipped with its position and id named, and the rest of the file goes in.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from lit3r.corpus.chunkers import chunk_paper
from lit3r.corpus.discover import discover
from lit3r.corpus.library.known import known_papers_left_out, same_file_elsewhere, with_ids_shown
from lit3r.corpus.parallel import OnPage, parse_in_parallel, workers_for
from lit3r.corpus.parsers import ParseError, limits_mb, read_file, too_long
from lit3r.corpus.references import resolve_references
from lit3r.corpus.store import CorpusStore, file_sha256
from lit3r.models import ParsedPaper
from lit3r.settings import ChunkerSettings, LimitsSettings

log = logging.getLogger(__name__)


@dataclass
class IngestReport:
    """What one ingest run did, file by file."""

    added: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    skipped_records: list[tuple[str, str]] = field(default_factory=list)
    """Records or papers left out of files that went in: ``(file, "line 7 (id 'p3'): why")``."""
    papers_added: int = 0
    renamed: list[tuple[str, str]] = field(default_factory=list)
    references_resolved: int = 0
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    """Files or library entries holding a paper already in the corpus (same DOI, arXiv id, bytes): (where, why)."""
    merged: list[tuple[str, str]] = field(default_factory=list)
    """Library entries whose metadata went onto a paper already ingested from a file: ``(entry, paper id)``."""

    @property
    def did_work(self) -> bool:
        return bool(self.added)


def ingest(
    paths: Iterable[Path],
    store: CorpusStore,
    *,
    force: bool = False,
    on_file: Callable[[Path], None] | None = None,
    limits: LimitsSettings | None = None,
    chunker: ChunkerSettings | None = None,
    on_page: OnPage | None = None,
    zotero: Path | None = None,
    collection: str | None = None,
) -> IngestReport:
    """Ingest files and folders into ``store``; ``on_file`` is called after each file (progress bars).

    ``limits`` bound files and papers; ``chunker`` is what the chunks-per-paper limit counts with.
    New or changed PDFs are parsed in parallel worker processes (:mod:`lit3r.corpus.parallel`,
    ``limits.parse_workers``), and ``on_page(file, pages done, pages in file)`` follows their pages; the
    other files are read here, one after another. Papers are stored as each file finishes.
    Library files named in ``paths`` (``.bib``, ``.ris``, CSL-JSON) and the Zotero data folder ``zotero``
    are read by :mod:`lit3r.corpus.library` (only the entries in ``collection``, when given).
    """
    from lit3r.corpus.library.run import ingest_libraries, is_library_file

    paths = list(paths)
    libraries = [p for p in paths if is_library_file(p)]
    found = discover([p for p in paths if p not in libraries])
    report = IngestReport(failed=list(found.problems))
    rules = _Rules(limits or LimitsSettings(), chunker or ChunkerSettings())
    pdfs: dict[Path, tuple[str, str]] = {}
    for path in found.files:
        resolved = path.resolve()
        if not _is_pdf(resolved):
            _ingest_file(resolved, store, report, rules, force=force)
            if on_file:
                on_file(path)
            continue
        checked = _check(resolved, store, report, rules, force=force)
        if checked is None:
            if on_file:
                on_file(path)
        else:
            pdfs[resolved] = checked
    if pdfs:
        workers = workers_for(rules.limits, len(pdfs))
        for parsed in parse_in_parallel(pdfs, rules.limits, workers, on_page):
            key, sha = pdfs[parsed.path]
            if parsed.problem is not None:
                _store_failure(key, sha, parsed.problem, store, report)
            else:
                _store(parsed.path, key, sha, parsed.papers, parsed.skipped, store, report, rules)
            if on_file:
                on_file(parsed.path)
    ingest_libraries(libraries, zotero, store, report, rules, force=force, collection=collection, on_file=on_file)
    if report.did_work or store.references_stale():  # stale: an earlier ingest was stopped before resolving
        report.references_resolved = resolve_corpus_references(store)
    return report


@dataclass
class _Rules:
    limits: LimitsSettings
    chunker: ChunkerSettings


def _is_pdf(path: Path) -> bool:
    """A file ingest hands to the parallel PDF parser: named .pdf and starting like a PDF."""
    if not path.name.lower().endswith(".pdf"):
        return False
    try:
        with path.open("rb") as handle:
            return b"%PDF-" in handle.read(1024)
    except OSError:
        return False


def _check(
    path: Path, store: CorpusStore, report: IngestReport, rules: _Rules, *, force: bool
) -> tuple[str, str] | None:
    """``(key, sha256)`` of a file to parse, or None when it is too big, unreadable or unchanged (reported)."""
    key = str(path)
    try:
        size = path.stat().st_size
        if size > rules.limits.max_file_mb * 1e6:
            report.failed.append((key, _too_big(size, rules.limits)))
            return None
        sha = file_sha256(path)
    except OSError as exc:
        report.failed.append((key, f"cannot read the file ({exc.strerror or exc})"))
        return None
    previous = store.source(key)
    if previous and previous.sha256 == sha and not force:
        if previous.status == "ok":
            report.unchanged.append(key)
        else:
            report.failed.append((key, f"{previous.error} (unchanged since the last attempt; --force tries again)"))
        return None
    if previous is None and same_file_elsewhere(key, sha, store, report):
        return None
    return key, sha


def _ingest_file(path: Path, store: CorpusStore, report: IngestReport, rules: _Rules, *, force: bool) -> None:
    checked = _check(path, store, report, rules, force=force)
    if checked is None:
        return
    key, sha = checked
    skipped: list[str] = []
    try:
        parsed = read_file(path, rules.limits, on_skip=skipped.append)
    except ParseError as exc:
        _store_failure(key, sha, exc.problem, store, report)
        return
    _store(path, key, sha, parsed, skipped, store, report, rules)


def _store_failure(key: str, sha: str, problem: str, store: CorpusStore, report: IngestReport) -> None:
    store.record_error(key, sha, problem)
    report.failed.append((key, problem))


def _store(
    path: Path,
    key: str,
    sha: str,
    parsed: list[ParsedPaper],
    skipped: list[str],
    store: CorpusStore,
    report: IngestReport,
    rules: _Rules,
) -> None:
    """Store the papers of one parsed file that are within the limits (or record why none is)."""
    papers = [p for p in _first_of_each_id(parsed, skipped) if _within_limits(p, rules, skipped, len(parsed) > 1)]
    if not papers:
        _store_failure(key, sha, ParseError(path, _nothing_left(skipped)).problem, store, report)
        return
    report.skipped_records.extend((key, problem) for problem in skipped)
    papers = known_papers_left_out(with_ids_shown(papers), key, store, report)
    papers = _unique_ids(papers, key, store, report)
    store.replace_source(key, sha, papers)
    report.added.append(key)
    report.papers_added += len(papers)


def _first_of_each_id(papers: list[ParsedPaper], skipped: list[str]) -> list[ParsedPaper]:
    """The papers of one file with a repeated id left out (the first one is kept)."""
    seen: set[str] = set()
    kept = []
    for parsed in papers:
        if parsed.paper.id in seen:
            skipped.append(f"paper {parsed.paper.id!r}: another paper of this file has the same id; the first is kept")
        else:
            seen.add(parsed.paper.id)
            kept.append(parsed)
    return kept


def _nothing_left(skipped: list[str]) -> str:
    if len(skipped) == 1:
        return skipped[0]
    more = f" (and {len(skipped) - 3} more)" if len(skipped) > 3 else ""
    return "no paper of this file could be ingested: " + "; ".join(skipped[:3]) + more


def _within_limits(parsed: ParsedPaper, rules: _Rules, skipped: list[str], many: bool) -> bool:
    """False (with the reason added to ``skipped``) for an empty paper or one over a limit."""
    name = f"paper {parsed.paper.id!r}: " if many else ""
    if parsed.is_empty:
        skipped.append(f"{name}no text besides the title")
        return False
    chars = len(parsed.canonical_text())
    if chars > rules.limits.max_paper_chars:
        skipped.append(name + too_long(chars, rules.limits, what="the paper has"))
        return False
    chunks = len(chunk_paper(parsed, rules.chunker))
    if chunks > rules.limits.max_chunks_per_paper:
        skipped.append(
            f"{name}the paper makes {chunks:,} chunks, more than limits.max_chunks_per_paper = "
            f"{rules.limits.max_chunks_per_paper:,} (LIT3R_LIMITS__MAX_CHUNKS_PER_PAPER raises it)"
        )
        return False
    return True


def _too_big(size: int, limits: LimitsSettings) -> str:
    return (
        f"the file is {size / 1e6:,.1f} MB, more than limits.max_file_mb = {limits_mb(int(limits.max_file_mb * 1e6))}"
        " (LIT3R_LIMITS__MAX_FILE_MB raises it)"
    )


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
    store.mark_references_resolved()
    return resolved
