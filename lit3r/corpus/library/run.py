"""Ingest a library: each entry's attachment parsed once, its metadata laid over what the file shows.

An entry with a readable attachment is stored under the attachment's path (so the
web UI can show its PDF) with the file's hash and the hash of its metadata; one
without comes in as metadata (title, abstract when present) under
``<library>#<citation key>``. Re-ingesting an unchanged library does no work: an
entry whose file and metadata hashes are both unchanged is skipped before
anything is read, and one whose metadata alone changed keeps its parsed text.

Identity: an entry is the same paper as a stored one when they share a DOI, an
arXiv id, or the attachment's bytes. A stored paper without library metadata (a
PDF ingested from a folder) takes the entry's metadata and keeps its id; one that
already came from another library entry is kept, and the entry is reported as a
duplicate.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from lit3r.corpus.ingest import IngestReport
from lit3r.corpus.ingest import _Rules as Rules  # the limits every ingested paper is held to
from lit3r.corpus.ingest import _too_big as too_big
from lit3r.corpus.ingest import _within_limits as within_limits
from lit3r.corpus.library.entry import Library, LibraryEntry, LibraryError, in_collection
from lit3r.corpus.library.identity import ids_shown, same_title
from lit3r.corpus.parsers import ParseError, read_file
from lit3r.corpus.store import CorpusStore, file_sha256
from lit3r.models import Paper, ParsedPaper


def read_library(path: Path) -> Library:
    """The library in a ``.bib``, ``.ris`` or CSL-JSON file, by its name (then its content)."""
    name = path.name.lower()
    if name.endswith(".ris"):
        from lit3r.corpus.library.ris import read_ris

        return read_ris(path)
    if name.endswith(".json"):
        from lit3r.corpus.library.csl import read_csl

        return read_csl(path)
    from lit3r.corpus.library.bibtex import read_bibtex

    return read_bibtex(path)


def ingest_library(
    library: Library, store: CorpusStore, report: IngestReport, rules: Rules, *, force: bool, collection: str | None
) -> None:
    """Every entry of ``library`` (those in ``collection`` only, when given) into ``store``."""
    report.skipped_records.extend(library.skipped)
    entries = [e for e in library.entries if collection is None or in_collection(e.collections, collection)]
    if collection is not None and not entries and library.entries:
        raise LibraryError(library.name.split(":", 1)[1], f"no entry is in a collection or group named {collection!r}")
    for entry in entries:
        _ingest_entry(entry, library.name, store, report, rules, force=force)


def _ingest_entry(
    entry: LibraryEntry, library: str, store: CorpusStore, report: IngestReport, rules: Rules, *, force: bool
) -> None:
    if entry.missing_files:
        then = "its metadata came in" if not entry.files else "another attachment was read"
        report.skipped_records.append((entry.where, f"attachment not found: {', '.join(entry.missing_files)}; {then}"))
    meta_hash = entry.metadata_hash()
    file = entry.files[0].resolve() if entry.files else None
    if file is not None:
        source = str(file)
        try:
            size = file.stat().st_size
            if size > rules.limits.max_file_mb * 1e6:
                report.failed.append((entry.where, f"{file}: {too_big(size, rules.limits)}"))
                return
            sha = file_sha256(file)
        except OSError as exc:
            report.failed.append((entry.where, f"cannot read {file} ({exc.strerror or exc})"))
            return
    else:
        source, sha = f"{library}#{entry.key}", meta_hash
    previous = store.source(source)
    if (
        previous
        and previous.status == "ok"
        and previous.sha256 == sha
        and previous.meta_hash == meta_hash
        and not force
    ):
        report.unchanged.append(source)
        return
    twin = _twin(entry, source, sha, store)
    if twin is not None:
        _merge_into(twin, entry, library, meta_hash, store, report, force=force)
        return
    try:
        parsed, keep_id = _parsed(entry, file, previous, sha, store, rules, force=force)
    except ParseError as exc:
        store.record_error(source, sha, exc.problem)
        report.failed.append((f"{entry.where}: {exc.path}", exc.problem))
        return
    if previous and previous.paper_ids and _foreign(store.get(previous.paper_ids[0]), entry, library):
        report.duplicates.append((entry.where, _duplicate(store.get(previous.paper_ids[0]))))
        return
    paper = with_library_metadata(parsed, entry, library, keep_id=keep_id)
    paper = _unique(paper, source, store, report)
    problems: list[str] = []
    if parsed.blocks and not within_limits(paper, rules, problems, False):
        store.record_error(source, sha, problems[0])
        report.failed.append((entry.where, problems[0]))
        return
    store.replace_source(source, sha, [paper], meta_hash=meta_hash)
    report.added.append(source)
    if keep_id and previous is not None and previous.meta_hash is None:  # a file ingested plain: now with metadata
        report.merged.append((entry.where, paper.paper.id))
    else:
        report.papers_added += 1


def _parsed(entry: LibraryEntry, file: Path | None, previous, sha: str, store: CorpusStore, rules: Rules,
            *, force: bool) -> tuple[ParsedPaper, bool]:  # fmt: skip
    """The entry's text: the stored parse of an unchanged file, a fresh parse, or its metadata alone."""
    if previous and previous.status == "ok" and previous.sha256 == sha and previous.paper_ids and not force:
        stored = store.get(previous.paper_ids[0])
        if stored is not None:
            return stored, True
    if file is None:
        paper = Paper(id=entry.key, title=entry.title, abstract=entry.abstract, source=None, source_format="library")
        return ParsedPaper(paper=paper), False
    if file.name.lower().endswith((".html", ".htm")):
        from lit3r.corpus.library.snapshot import parse_snapshot

        return parse_snapshot(file)[0], False
    return read_file(file, rules.limits)[0], False


def with_library_metadata(parsed: ParsedPaper, entry: LibraryEntry, library: str, *, keep_id: bool) -> ParsedPaper:
    """The parsed paper with the library's metadata laid over it (the library wins where it has a value).

    The abstract is the library's only when the file showed none: the file's is the text its passages come
    from. DOIs and arXiv ids the file shows on its first page fill in what the library lacks.
    """
    needs_ids = parsed.blocks and not (entry.doi and entry.arxiv_id) and not (parsed.paper.doi or parsed.paper.arxiv_id)
    shown_doi, shown_arxiv = ids_shown(parsed) if needs_ids else (None, None)
    update = {k: v for k, v in entry.metadata().items() if v not in (None, [], "")}
    update |= {"library": library, "doi": entry.doi or parsed.paper.doi or shown_doi,
               "arxiv_id": entry.arxiv_id or parsed.paper.arxiv_id or shown_arxiv}  # fmt: skip
    if not parsed.paper.abstract.strip() and entry.abstract:
        update["abstract"] = entry.abstract
    if not keep_id:
        update["id"] = paper_id_for(entry.key)
    return parsed.model_copy(update={"paper": parsed.paper.model_copy(update=update)}).with_spans()


def paper_id_for(citation_key: str) -> str:
    """The paper id of a library entry: its citation key, with what ids may not hold ('/', '\\', spaces) as '-'."""
    return re.sub(r"[/\\\s\x00-\x1f]+", "-", citation_key).strip("-")[:200] or "entry"


def _twin(entry: LibraryEntry, source: str, sha: str, store: CorpusStore) -> tuple[str, str] | None:
    """``(paper id, source)`` of another source's paper that is this entry's paper, by DOI, arXiv id or bytes."""
    for paper_id, owner in store.find_identity(entry.doi, entry.arxiv_id):
        if owner != source and _identity_holds(store.get(paper_id), entry):
            return paper_id, owner
    if entry.files:
        for record in store.sources_with_sha(sha):
            if record.path != source and record.status == "ok" and len(record.paper_ids) == 1:
                return record.paper_ids[0], record.path
    return None


def _identity_holds(existing: ParsedPaper | None, entry: LibraryEntry) -> bool:
    """A library's DOI is the paper's own; one read off a PDF's first page counts only when the titles agree."""
    if existing is None:
        return False
    return existing.paper.library is not None or same_title(existing.paper.title, entry.title)


def _merge_into(twin: tuple[str, str], entry: LibraryEntry, library: str, meta_hash: str, store: CorpusStore,
                report: IngestReport, *, force: bool) -> None:  # fmt: skip
    paper_id, owner = twin
    existing = store.get(paper_id)
    record = store.source(owner)
    if existing is None or record is None or len(record.paper_ids) != 1 or _foreign(existing, entry, library):
        report.duplicates.append((entry.where, _duplicate(existing, paper_id)))
        return
    if record.meta_hash == meta_hash and not force:
        report.unchanged.append(owner)
        return
    store.replace_source(owner, record.sha256, [with_library_metadata(existing, entry, library, keep_id=True)],
                         meta_hash=meta_hash)  # fmt: skip
    report.merged.append((entry.where, paper_id))
    report.added.append(owner)


def _foreign(existing: ParsedPaper | None, entry: LibraryEntry, library: str) -> bool:
    """True when ``existing`` carries metadata of another library entry (not this one's, not none)."""
    if existing is None or existing.paper.library is None:
        return False
    return existing.paper.library != library or existing.paper.citation_key != entry.key


def _duplicate(existing: ParsedPaper | None, paper_id: str | None = None) -> str:
    if existing is None:
        return f"the same paper as {paper_id!r}, already in the corpus; not ingested twice"
    how = f" from {existing.paper.library}" if existing.paper.library else f" from {existing.paper.source}"
    return f"the same paper as {existing.paper.id!r} (same DOI, arXiv id or file), already ingested{how}; not again"


def _unique(parsed: ParsedPaper, source: str, store: CorpusStore, report: IngestReport) -> ParsedPaper:
    owner = store.owner_of(parsed.paper.id)
    if owner is None or owner == source:
        return parsed
    new_id = f"{parsed.paper.id}-{hashlib.sha256(source.encode()).hexdigest()[:6]}"
    report.renamed.append((parsed.paper.id, new_id))
    return parsed.model_copy(update={"paper": parsed.paper.model_copy(update={"id": new_id})})


CSL_HEAD_BYTES = 65536


def is_library_file(path: Path) -> bool:
    """A file named on the command line that is a library: ``.bib``/``.ris`` by name, CSL-JSON by content."""
    from lit3r.corpus.library import LIBRARY_SUFFIXES

    name = path.name.lower()
    if name.endswith(LIBRARY_SUFFIXES):
        return path.is_file()
    if not name.endswith(".json") or not path.is_file():
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(CSL_HEAD_BYTES).decode("utf-8", "ignore").lstrip("\ufeff \t\r\n")
    except OSError:
        return False
    return (
        head.startswith("[")
        and re.match(r"\[\s*\{", head) is not None
        and '"type"' in head
        and any(f'"{key}"' in head for key in ("issued", "container-title", "citation-key", "DOI"))
        and _csl(path)
    )


def _csl(path: Path) -> bool:
    from lit3r.corpus.library.csl import looks_like_csl

    try:
        return looks_like_csl(json.loads(path.read_text(encoding="utf-8-sig")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False


def ingest_libraries(files: list[Path], zotero: Path | None, store: CorpusStore, report: IngestReport, rules: Rules,
                     *, force: bool, collection: str | None, on_file=None) -> None:  # fmt: skip
    """The library files named and the Zotero data folder, each read whole first; a library that cannot be
    read is reported by name and the others still go in."""
    readers = [(path, lambda p=path: read_library(p)) for path in files]
    if zotero is not None:
        from lit3r.corpus.library.zotero import read_zotero

        readers.append((zotero, lambda: read_zotero(zotero, collection)))
    for path, read in readers:
        try:
            ingest_library(read(), store, report, rules, force=force, collection=collection)
        except LibraryError as exc:
            report.failed.append((exc.path, exc.problem))
        if on_file:
            on_file(path)
