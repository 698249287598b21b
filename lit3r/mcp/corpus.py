"""The corpus as the MCP tools and resources see it: lookups over a session's index, no MCP types.

Each function takes the :class:`~lit3r.app.session.Session` and returns a result of :mod:`lit3r.mcp.schemas`;
an id that is not in the corpus raises :class:`NotFound` naming it and the tool that lists what is there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from lit3r.app.session import Session
from lit3r.app.traces import load_trace, render_timeline, trace_path
from lit3r.mcp.schemas import (
    ChunkView,
    CorpusStatus,
    FetchedDocument,
    PaperList,
    PaperSummary,
    PaperView,
    Reference,
    SearchHit,
    SearchResults,
    Section,
    TraceView,
    chunk_uri,
    paper_uri,
)
from lit3r.models import Paper
from lit3r.retrieval.search import SearchMode, search_index
from lit3r.settings import index_key

TRACE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,120}$")
"""A trace id: a file name under ``<home>/traces`` without its extension (no separators, no leading dot)."""


class NotFound(LookupError):
    """An id that names nothing in this corpus."""


def check_papers(session: Session, paper_ids: Sequence[str] | None) -> list[str] | None:
    """The paper ids when every one is in the corpus; :class:`NotFound` names those that are not."""
    if paper_ids is None:
        return None
    unknown = [p for p in paper_ids if p not in session.index.papers]
    if unknown:
        raise NotFound(f"unknown paper ids: {', '.join(map(repr, unknown))} (list_papers shows the corpus)")
    return list(paper_ids)


def _paper(session: Session, paper_id: str) -> Paper:
    paper = session.index.papers.get(paper_id)
    if paper is None:
        raise NotFound(f"no paper {paper_id!r} in the corpus (list_papers shows the corpus)")
    return paper


def search(
    session: Session, query: str, k: int = 10, mode: SearchMode = "hybrid", papers: Sequence[str] | None = None
) -> SearchResults:
    """The top ``k`` chunks for ``query`` (what ``lit3r search`` ranks)."""
    index = session.index
    hits = search_index(index, query, mode, k, check_papers(session, papers))
    results = []
    for hit in hits:
        paper = index.papers.get(hit.paper_id)
        title = " · ".join(p for p in ((paper.title if paper else hit.paper_id), hit.locator.describe()) if p)
        results.append(
            SearchHit(
                id=hit.chunk_id,
                title=title,
                url=chunk_uri(hit.chunk_id),
                text=hit.text,
                paper_id=hit.paper_id,
                score=hit.score,
                type=hit.type,
                locator=hit.locator,
            )
        )
    return SearchResults(results=results)


def get_chunk(session: Session, chunk_id: str) -> ChunkView:
    """One chunk with its locator and its neighbours."""
    index = session.index
    chunk = index.chunk_by_id.get(chunk_id)
    if chunk is None:
        raise NotFound(f"no chunk {chunk_id!r} in the corpus (search or get_paper lists chunk ids)")
    return ChunkView.of(chunk, index.papers.get(chunk.paper_id), index.chunks_by_paper.get(chunk.paper_id, []))


def list_papers(session: Session, contains: str | None = None, offset: int = 0, limit: int = 50) -> PaperList:
    """A page of the corpus's papers, sorted by id; ``contains`` keeps titles holding it (case folded)."""
    index = session.index
    papers = sorted(index.papers.values(), key=lambda p: p.id)
    if contains:
        needle = contains.casefold()
        papers = [p for p in papers if needle in p.title.casefold() or needle in p.id.casefold()]
    page = [
        PaperSummary(
            paper_id=p.id,
            title=p.title,
            year=p.year,
            venue=p.venue,
            authors=p.authors,
            chunks=len(index.chunks_by_paper.get(p.id, [])),
        )
        for p in papers[offset : offset + limit]
    ]
    return PaperList(total=len(papers), offset=offset, papers=page)


def get_paper(session: Session, paper_id: str) -> PaperView:
    """One paper: metadata, sections with their chunk ids, references, and the corpus papers citing it."""
    index = session.index
    paper = _paper(session, paper_id)
    sections: dict[str, list[str]] = {}
    for chunk in index.chunks_by_paper.get(paper_id, []):
        sections.setdefault(chunk.locator.section or "(no section)", []).append(chunk.id)
    references = [
        Reference(raw=r.raw, title=r.title, year=r.year, corpus_paper_id=r.resolved_id) for r in paper.references
    ]
    cited_by = sorted(index.citations.cited_by(paper_id)) if paper_id in index.citations else []
    return PaperView(
        paper_id=paper.id,
        title=paper.title,
        abstract=paper.abstract,
        authors=paper.authors,
        year=paper.year,
        venue=paper.venue,
        source_format=paper.source_format,
        sections=[Section(heading=h, chunk_ids=ids) for h, ids in sections.items()],
        references=references,
        cited_by=cited_by,
    )


def paper_text(session: Session, paper_id: str) -> str:
    """The paper as Markdown: title, metadata, then its chunks in reading order under their section headings."""
    paper = _paper(session, paper_id)
    lines = [f"# {paper.title}", ""]
    meta = [", ".join(paper.authors), paper.venue or "", str(paper.year or "")]
    if any(meta):
        lines += [" · ".join(m for m in meta if m), ""]
    section = None
    for chunk in session.index.chunks_by_paper.get(paper_id, []):
        if chunk.locator.section != section and chunk.locator.section:
            section = chunk.locator.section
            lines += [f"## {section}", ""]
        lines += [f"<!-- chunk {chunk.id} -->", chunk.text, ""]
    return "\n".join(lines).rstrip() + "\n"


def chunk_text(session: Session, chunk_id: str) -> str:
    """The chunk as Markdown: a header naming its paper and locator, then its text."""
    view = get_chunk(session, chunk_id)
    return f"**{view.paper_title}** ({view.paper_id}) · {view.locator.describe()} · `{view.chunk_id}`\n\n{view.text}\n"


def fetch(session: Session, document_id: str) -> FetchedDocument:
    """A chunk (by chunk id) or a whole paper (by paper id)."""
    index = session.index
    if document_id in index.chunk_by_id:
        view = get_chunk(session, document_id)
        metadata = {"paper_id": view.paper_id, "type": view.type, "locator": view.locator.model_dump()}
        return FetchedDocument(
            id=view.chunk_id,
            title=f"{view.paper_title} · {view.locator.describe()}",
            text=view.text,
            url=chunk_uri(view.chunk_id),
            metadata=metadata,
        )
    if document_id in index.papers:
        paper = index.papers[document_id]
        metadata = {"authors": paper.authors, "year": paper.year, "venue": paper.venue, "kind": "paper"}
        return FetchedDocument(
            id=paper.id,
            title=paper.title,
            text=paper_text(session, paper.id),
            url=paper_uri(paper.id),
            metadata=metadata,
        )
    raise NotFound(f"no chunk or paper {document_id!r} in the corpus (search returns fetchable ids)")


def corpus_status(session: Session) -> CorpusStatus:
    """The corpus and the answering set-up this server uses."""
    index = session.index
    types: dict[str, int] = {}
    for chunk in index.chunks:
        types[chunk.type] = types.get(chunk.type, 0) + 1
    model = session.chat_model
    return CorpusStatus(
        home=str(Path(session.settings.home).resolve()),
        papers=len(index.papers),
        chunks=len(index.chunks),
        chunk_types=types,
        index_key=index_key(session.settings),
        index_folder=str(getattr(index, "folder", "")),
        reranker=getattr(session.reranker, "name", None) or session.settings.reranker,
        gate_threshold=session.gate.value if session.gate is not None else None,
        chat_model=(getattr(model, "model_name", None) or type(model).__name__) if model is not None else None,
        planner=session.planner,
    )


def get_trace(session: Session, trace_id: str, events: bool = False) -> TraceView:
    """A trace of this home by id: outcome and timeline, and every event when ``events``."""
    if not TRACE_ID.match(trace_id):
        raise NotFound(f"{trace_id!r} is not a trace id (ask returns one as trace_id)")
    path = trace_path(session.settings, trace_id)
    if not path.is_file():
        raise NotFound(f"no trace {trace_id!r} under {path.parent}")
    doc = load_trace(path)
    return TraceView(
        trace_id=trace_id,
        question=str(doc.get("question") or ""),
        answer=str((doc.get("answer") or {}).get("text") or ""),
        stop_reason=doc.get("stop_reason"),
        planner=doc.get("planner"),
        timeline=render_timeline(doc),
        events=doc.get("events") if events else None,
    )
