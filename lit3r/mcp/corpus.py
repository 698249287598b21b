"""The corpus as the MCP tools and resources see it: the app layer's views, plus MCP's own search/fetch shapes
and Markdown renderings; no MCP types.

Each function takes the :class:`~lit3r.app.session.Session` and returns a result of :mod:`lit3r.mcp.schemas`;
an id that is not in the corpus raises :class:`~lit3r.app.errors.NotFound` naming it (the server maps it).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lit3r.app import corpus
from lit3r.app.errors import NotFound
from lit3r.app.filters import library_facets
from lit3r.app.session import Session
from lit3r.app.traces import find_trace, load_trace, render_timeline
from lit3r.mcp.schemas import (
    ChunkView,
    CorpusStatus,
    FetchedDocument,
    PaperList,
    PaperView,
    SearchHit,
    SearchResults,
    TraceView,
    chunk_uri,
    paper_uri,
)
from lit3r.retrieval.search import SearchMode
from lit3r.settings import index_key


def search(
    session: Session, query: str, k: int = 10, mode: SearchMode = "hybrid", papers: Sequence[str] | None = None
) -> SearchResults:
    """The top ``k`` chunks for ``query`` (what ``lit3r search`` ranks), in the search/fetch pair's shape."""
    papers_by_id = session.index.papers
    results = []
    for hit in corpus.search(session, query, mode, k, papers):
        paper = papers_by_id.get(hit.paper_id)
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
    return corpus.chunk_view(session, chunk_id)


def list_papers(session: Session, contains: str | None = None, offset: int = 0, limit: int = 50) -> PaperList:
    """A page of the corpus's papers, sorted by id; ``contains`` keeps titles holding it (case folded)."""
    return corpus.list_papers(session, contains, offset, limit)


def get_paper(session: Session, paper_id: str) -> PaperView:
    """One paper: metadata, sections with their chunk ids, references, and the corpus papers citing it."""
    return corpus.paper_view(session, paper_id, with_chunks=False)


def paper_text(session: Session, paper_id: str) -> str:
    """The paper as Markdown: title, metadata, then its chunks in reading order under their section headings."""
    paper = corpus.paper(session, paper_id)
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
    raise NotFound(f"no chunk or paper {document_id!r} in the corpus (search returns fetchable ids)", "unknown_id")


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
        **library_facets(index.papers),  # what ask, search and check_claim can be filtered by
    )


def get_trace(session: Session, trace_id: str, events: bool = False) -> TraceView:
    """A trace of this home by id: outcome and timeline, and every event when ``events``."""
    doc = load_trace(find_trace(session.settings, trace_id))
    return TraceView(
        trace_id=trace_id,
        question=str(doc.get("question") or ""),
        answer=str((doc.get("answer") or {}).get("text") or ""),
        stop_reason=doc.get("stop_reason"),
        planner=doc.get("planner"),
        timeline=render_timeline(doc),
        events=doc.get("events") if events else None,
    )
