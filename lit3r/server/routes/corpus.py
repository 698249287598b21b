"""The corpus: ``/v1/papers`` (list, one with its sections), ``/v1/library`` (what the library filters can
name), ``/v1/chunks/{id}`` (text and locator), the page image of a PDF chunk with the cited passage highlighted,
and ``/v1/search``."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote as url_quote

from fastapi import APIRouter, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from lit3r.app import corpus
from lit3r.server import pages
from lit3r.server.errors import ApiError
from lit3r.server.routes import runtime_of
from lit3r.server.schemas import ITEM_ID, ChunkView, LibraryFacets, PagePassageInfo, PaperList, PaperView
from lit3r.textutil import fold_key

router = APIRouter(tags=["corpus"])
PaperId = Annotated[str, Path(pattern=ITEM_ID, description="A paper id.")]
ChunkId = Annotated[str, Path(pattern=ITEM_ID, description="A chunk id ('<paper id>::c<n>').")]
Quote = Annotated[
    str | None,
    Query(max_length=4000, description="Text of the chunk to highlight (a citation's quote); default: its start."),
]
DEFAULT_QUOTE_CHARS = 200


@router.get("/papers", response_model=PaperList)
async def list_papers(request: Request) -> PaperList:
    """Every paper of the index in use, sorted by id."""
    with runtime_of(request).lease() as lease:
        return corpus.list_papers(lease.session)


@router.get("/library", response_model=LibraryFacets)
async def library(request: Request) -> dict:
    """The collections, tags and years of the index's papers: the values `collections`, `tags` and `year` of
    `/v1/ask`, `/v1/check` and thread messages can take (the web UI's collection picker lists the collections)."""
    from lit3r.app.filters import library_facets

    with runtime_of(request).lease() as lease:
        return library_facets(lease.session.index.papers)


@router.get("/papers/{paper_id}", response_model=PaperView)
async def get_paper(paper_id: PaperId, request: Request) -> PaperView:
    """A paper with its abstract, its chunks grouped by section in reading order, references and citing papers."""
    with runtime_of(request).lease() as lease:
        return corpus.paper_view(lease.session, paper_id)


@router.get("/chunks/{chunk_id}", response_model=ChunkView)
async def get_chunk(chunk_id: ChunkId, request: Request) -> ChunkView:
    """A chunk's text and locator, with its paper's title and its neighbours."""
    with runtime_of(request).lease() as lease:
        return corpus.chunk_view(lease.session, chunk_id)


def _passage(request: Request, chunk_id: str, quote: str | None) -> tuple[pages.Passage, str, str, str]:
    """The chunk's passage on its PDF page, the PDF path, its hash and the paper id (runs in a worker thread)."""
    runtime = runtime_of(request)
    with runtime.lease() as lease:
        chunk = corpus.chunk(lease.session, chunk_id)
        paper = lease.session.index.papers[chunk.paper_id]
    text = quote if quote is not None else chunk.text[:DEFAULT_QUOTE_CHARS]
    if fold_key(text) not in fold_key(chunk.text):
        raise ApiError(422, "quote_not_in_chunk", "quote: the text is not part of this chunk")
    try:
        path = pages.pdf_path(paper.source if corpus.has_pdf(paper) else None, runtime.settings.home)
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
            hits = corpus.search(lease.session, q, mode, k, paper)  # type: ignore[arg-type]
        return [h.model_dump(mode="json", exclude={"rank"}) for h in hits]

    return {"query": q, "mode": mode, "hits": await run_in_threadpool(ranked)}
