"""The corpus: ``/v1/papers`` (list, one with its sections), ``/v1/chunks/{id}`` (text and locator), the page
image of a PDF chunk with the cited passage highlighted, and ``/v1/search``."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote as url_quote

from fastapi import APIRouter, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from lit3r.index.corpus_index import CorpusIndex
from lit3r.models import Chunk, Paper
from lit3r.retrieval.search import search_index
from lit3r.server import pages
from lit3r.server.errors import ApiError
from lit3r.server.routes import runtime_of
from lit3r.server.schemas import ITEM_ID, ChunkInfo, PagePassageInfo, PaperDetail, PaperInfo
from lit3r.textutil import fold_key

router = APIRouter(tags=["corpus"])
PaperId = Annotated[str, Path(pattern=ITEM_ID, description="A paper id.")]
ChunkId = Annotated[str, Path(pattern=ITEM_ID, description="A chunk id ('<paper id>::c<n>').")]
Quote = Annotated[
    str | None,
    Query(max_length=4000, description="Text of the chunk to highlight (a citation's quote); default: its start."),
]
DEFAULT_QUOTE_CHARS = 200


def has_pdf(paper: Paper) -> bool:
    return paper.source_format == "pdf" and bool(paper.source) and paper.source.lower().endswith(".pdf")


def paper_info(index: CorpusIndex, paper: Paper) -> dict[str, Any]:
    return {
        "paper_id": paper.id,
        "title": paper.title,
        "authors": paper.authors,
        "venue": paper.venue,
        "year": paper.year,
        "chunks": len(index.chunks_by_paper.get(paper.id, [])),
        "source_format": paper.source_format,
        "has_pdf": has_pdf(paper),
    }


def chunk_info(index: CorpusIndex, chunk: Chunk) -> dict[str, Any]:
    paper = index.papers[chunk.paper_id]
    return {
        **chunk.model_dump(mode="json", include={"paper_id", "type", "locator", "text"}),
        "chunk_id": chunk.id,
        "paper_title": paper.title,
        "has_pdf": has_pdf(paper),
    }


def _paper(index: CorpusIndex, paper_id: str) -> Paper:
    paper = index.papers.get(paper_id)
    if paper is None:
        raise ApiError(404, "unknown_paper", f"no paper with id {paper_id!r}")
    return paper


def _chunk(index: CorpusIndex, chunk_id: str) -> Chunk:
    chunk = index.chunk_by_id.get(chunk_id)
    if chunk is None:
        raise ApiError(404, "unknown_chunk", f"no chunk with id {chunk_id!r}")
    return chunk


@router.get("/papers", response_model=dict[str, list[PaperInfo]])
async def list_papers(request: Request) -> dict:
    """Every paper of the index in use, in corpus order."""
    with runtime_of(request).lease() as lease:
        index = lease.session.index
        return {"papers": [paper_info(index, p) for p in index.papers.values()]}


@router.get("/papers/{paper_id}", response_model=PaperDetail)
async def get_paper(paper_id: PaperId, request: Request) -> dict:
    """A paper with its abstract and its chunks grouped by section, in reading order."""
    with runtime_of(request).lease() as lease:
        index = lease.session.index
        paper = _paper(index, paper_id)
        sections: list[dict[str, Any]] = []
        for chunk in index.chunks_by_paper.get(paper_id, []):
            heading = chunk.locator.section
            if not sections or sections[-1]["heading"] != heading:
                sections.append({"heading": heading, "chunks": []})
            sections[-1]["chunks"].append(
                {"chunk_id": chunk.id, "type": chunk.type, "locator": chunk.locator.model_dump(), "text": chunk.text}
            )
        return {**paper_info(index, paper), "abstract": paper.abstract, "sections": sections}


@router.get("/chunks/{chunk_id}", response_model=ChunkInfo)
async def get_chunk(chunk_id: ChunkId, request: Request) -> dict:
    """A chunk's text and locator, with its paper's title."""
    with runtime_of(request).lease() as lease:
        index = lease.session.index
        return chunk_info(index, _chunk(index, chunk_id))


def _passage(request: Request, chunk_id: str, quote: str | None) -> tuple[pages.Passage, str, str, str]:
    """The chunk's passage on its PDF page, the PDF path, its hash and the paper id (runs in a worker thread)."""
    runtime = runtime_of(request)
    with runtime.lease() as lease:
        index = lease.session.index
        chunk = _chunk(index, chunk_id)
        paper = index.papers[chunk.paper_id]
    text = quote if quote is not None else chunk.text[:DEFAULT_QUOTE_CHARS]
    if fold_key(text) not in fold_key(chunk.text):
        raise ApiError(422, "quote_not_in_chunk", "quote: the text is not part of this chunk")
    try:
        path = pages.pdf_path(paper.source if has_pdf(paper) else None, runtime.settings.home)
        sha = pages.file_hash(path)
        passage = pages.locate(str(path), sha, chunk.locator.page or 1, text)
    except pages.PdfUnavailable as exc:
        raise ApiError(404, exc.code, f"{exc} (paper {paper.id}); read the chunk's section text instead") from exc
    return passage, str(path), sha, paper.id


@router.get("/chunks/{chunk_id}/page", response_model=PagePassageInfo)
async def chunk_page(chunk_id: ChunkId, request: Request, quote: Quote = None) -> dict:
    """Where the quote sits on the chunk's PDF page: page, page size, highlight boxes, and the image URL.
    404 `no_pdf` for papers not ingested from a PDF."""
    passage, _, _, paper_id = await run_in_threadpool(_passage, request, chunk_id, quote)
    image = f"/v1/chunks/{url_quote(chunk_id, safe='')}/page.png"
    if quote is not None:
        image += f"?quote={url_quote(quote, safe='')}"
    return {
        "chunk_id": chunk_id,
        "paper_id": paper_id,
        "page": passage.page,
        "width": passage.width,
        "height": passage.height,
        "boxes": passage.boxes,
        "found": passage.found,
        "matched_text": passage.matched_text,
        "image": image,
    }


@router.get(
    "/chunks/{chunk_id}/page.png",
    response_class=Response,
    responses={200: {"content": {"image/png": {}}, "description": "The page with the passage highlighted."}},
)
async def chunk_page_image(chunk_id: ChunkId, request: Request, quote: Quote = None) -> Response:
    """The chunk's PDF page as PNG with the quote's boxes drawn over it."""
    dpi = runtime_of(request).settings.server.page_dpi

    def draw() -> bytes:
        passage, path, sha, _ = _passage(request, chunk_id, quote)
        return pages.render(path, sha, passage.page, tuple(passage.boxes), dpi)

    png = await run_in_threadpool(draw)
    return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=3600"})


@router.get("/search")
async def search(
    request: Request,
    q: Annotated[str, Query(min_length=1, max_length=2000, description="What to look for.")],
    mode: Annotated[str, Query(pattern="^(bm25|dense|hybrid)$")] = "hybrid",
    k: Annotated[int, Query(ge=1, le=100)] = 10,
    paper: Annotated[list[str] | None, Query(max_length=200, description="Search within these paper ids.")] = None,
) -> dict:
    """Ranked chunks with their locators: the hits of `lit3r search --json`."""

    def ranked() -> list[dict]:
        with runtime_of(request).lease() as lease:
            index = lease.session.index
            unknown = [p for p in paper or [] if p not in index.papers]
            if unknown:
                raise ApiError(404, "unknown_paper", f"no paper with id {unknown[0]!r}")
            try:
                hits = search_index(index, q, mode=mode, k=k, paper_ids=paper)  # type: ignore[arg-type]
            except ValueError as exc:
                raise ApiError(422, "invalid_request", str(exc)) from exc
            return [h.model_dump(mode="json", exclude={"rank"}) for h in hits]

    return {"query": q, "mode": mode, "hits": await run_in_threadpool(ranked)}
