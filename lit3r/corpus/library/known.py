"""The same paper coming in again as a plain file: found by its bytes or by the DOI / arXiv id it shows.

Used by :func:`lit3r.corpus.ingest.ingest` for files and folders (library entries have their own rules,
:mod:`.run`). A file whose bytes another source already holds is recorded as seen and not parsed; a paper
showing the DOI or arXiv id of a paper from another source is left out. Both are named in the report.
"""

from __future__ import annotations

from typing import Protocol

from lit3r.corpus.library.identity import ids_shown, same_title
from lit3r.corpus.store import CorpusStore
from lit3r.models import ParsedPaper


class _Report(Protocol):
    duplicates: list[tuple[str, str]]


def with_ids_shown(papers: list[ParsedPaper]) -> list[ParsedPaper]:
    """PDF papers with the DOI and arXiv id their first page shows (when they carry none)."""
    out = []
    for parsed in papers:
        if parsed.paper.source_format == "pdf" and not (parsed.paper.doi or parsed.paper.arxiv_id):
            doi, arxiv_id = ids_shown(parsed)
            if doi or arxiv_id:
                parsed = parsed.model_copy(
                    update={"paper": parsed.paper.model_copy(update={"doi": doi, "arxiv_id": arxiv_id})}
                )
        out.append(parsed)
    return out


def same_file_elsewhere(source: str, sha: str, store: CorpusStore, report: _Report) -> bool:
    """True (reported, and the file recorded as seen) when another source already holds these bytes."""
    for record in store.sources_with_sha(sha):
        if record.path != source and record.status == "ok" and record.paper_ids:
            report.duplicates.append(
                (source, f"the same file as {record.path} (paper {record.paper_ids[0]!r}); not ingested twice")
            )
            store.replace_source(source, sha, [])
            return True
    return False


def _confirmed(parsed: ParsedPaper, twin_id: str, store: CorpusStore) -> bool:
    """A DOI or arXiv id read off a first page names this paper only if the titles agree too (a footnote may
    give a dataset's or another paper's DOI)."""
    twin = store.get(twin_id)
    return twin is not None and same_title(parsed.paper.title, twin.paper.title)


def known_papers_left_out(
    papers: list[ParsedPaper], source: str, store: CorpusStore, report: _Report
) -> list[ParsedPaper]:
    """``papers`` without those another source already holds (same DOI or arXiv id)."""
    kept = []
    for parsed in papers:
        twins = [
            (pid, owner)
            for pid, owner in store.find_identity(parsed.paper.doi, parsed.paper.arxiv_id)
            if owner != source
        ]
        if twins and not _confirmed(parsed, twins[0][0], store):  # another paper: the ids shown are not its own
            parsed = parsed.model_copy(
                update={"paper": parsed.paper.model_copy(update={"doi": None, "arxiv_id": None})}
            )
            twins = []
        if twins:
            ident = f"DOI {parsed.paper.doi}" if parsed.paper.doi else f"arXiv {parsed.paper.arxiv_id}"
            report.duplicates.append(
                (
                    source,
                    f"paper {parsed.paper.id!r} has the {ident} of paper {twins[0][0]!r} from {twins[0][1]}; "
                    "not ingested twice",
                )
            )
        else:
            kept.append(parsed)
    return kept
