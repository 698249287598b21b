"""Request bodies (validated: a malformed body is a 422 naming the field) and documented response shapes.

The answer document and the corpus views are the app layer's (:mod:`lit3r.app.documents`,
:mod:`lit3r.app.corpus`): routes return them and the OpenAPI document describes them with those same models.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from lit3r.agent.context import PlannerKind
from lit3r.app.corpus import ChunkView, PaperList, PaperSummary, PaperView, Section
from lit3r.app.documents import AnswerDocument
from lit3r.models import Citation

__all__ = ["AnswerDocument", "ChunkView", "PaperList", "PaperSummary", "PaperView", "Section"]

TRACE_ID = r"^\d{8}T\d{6}-[0-9a-f]{8}$"
THREAD_ID = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"
JOB_ID = r"^[0-9a-f]{12}$"
ITEM_ID = r"^[^/\\\x00-\x1f]{1,300}$"
"""Paper and chunk ids: never a path on the server, only looked up; no slashes or control characters."""

Planner = PlannerKind
Text = Annotated[str, Field(min_length=1, max_length=4000)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LibraryFilters(Strict):
    """Filters by what the library knows, the same on every route that answers (`/v1/ask`, thread messages,
    `/v1/check`): within one field any value matches, different fields must all match; a year that is not a year
    or range is a 422 naming ``year``, a filter no paper passes a 404 ``no_matching_papers`` that says what the
    corpus holds."""

    collections: list[Annotated[str, Field(min_length=1, max_length=300)]] | None = Field(
        default=None, max_length=50, description="Only papers in these library collections (or subcollections; any)."
    )
    tags: list[Annotated[str, Field(min_length=1, max_length=300)]] | None = Field(
        default=None, max_length=50, description="Only papers with these library tags (any)."
    )
    year: Annotated[str, Field(max_length=20)] | None = Field(
        default=None, description="Only papers of this year or range: '2021', '2019-2021', '2019-', '-2021'."
    )
    authors: list[Annotated[str, Field(min_length=1, max_length=200)]] | None = Field(
        default=None, max_length=50, description="Only papers by these authors (name or surname; any)."
    )


class AskRequest(LibraryFilters):
    question: Text = Field(description="The question.")
    options: list[Annotated[str, Field(min_length=1, max_length=500)]] | None = Field(
        default=None, max_length=26, description="Multiple-choice options; the answer picks one."
    )
    papers: list[Annotated[str, Field(pattern=ITEM_ID)]] | None = Field(
        default=None, max_length=200, description="Answer from these paper ids only."
    )
    planner: Planner | None = Field(default=None, description="'fixed' (default, no model) or 'llm'.")
    thread_id: Annotated[str, Field(pattern=THREAD_ID)] | None = Field(
        default=None, description="Answer as the next turn of this thread, as asked (no follow-up rewrite)."
    )
    format: Literal["markdown", "bibtex", "csl-json"] | None = Field(
        default=None, description="Also return the answer with references (markdown) or its bibliography, as `export`."
    )
    citation_style: Literal["author-year", "numbered"] = Field(
        default="author-year", description="Citations in the markdown export."
    )


class LibraryFacets(BaseModel):
    """What the library filters can name: the collections, tags and years the index's papers carry (the
    ``library`` of ``lit3r stats --json``)."""

    collections: list[str] = Field(description="Library collections (a subcollection as 'Parent/Child'), sorted.")
    tags: list[str] = Field(description="Library tags, sorted case-insensitively.")
    years: list[int] = Field(description="Publication years, ascending.")


class ExportRequest(Strict):
    """An answer (as ``/v1/ask`` or a thread turn returned it) to render with references."""

    answer: Annotated[str, Field(max_length=100_000)] = Field(description="The answer text with its [n] markers.")
    citations: list[Citation] = Field(default_factory=list, max_length=500, description="The answer's citations.")
    format: Literal["markdown", "bibtex", "csl-json"] = Field(default="markdown", description="What to render.")
    citation_style: Literal["author-year", "numbered"] = Field(default="author-year", description="Markdown citations.")


class ExportDocument(BaseModel):
    format: str
    export: str = Field(description="The answer with references (markdown), or the cited papers as BibTeX/CSL-JSON.")


class ThreadCreate(Strict):
    title: str = Field(default="", max_length=200, description="A title; default: the first message.")
    origin: Literal["ui", "api"] = Field(
        default="api", description="Who makes the thread: 'ui' (the web UI lists only these) or 'api'."
    )


class ThreadRename(Strict):
    title: str = Field(min_length=1, max_length=200, description="The thread's new title.")


class MessageRequest(LibraryFilters):
    message: Text = Field(description="The user's message; a follow-up is rewritten into a standalone question.")
    planner: Planner | None = None


class ThreadInfo(BaseModel):
    thread_id: str
    title: str
    origin: str = Field(default="api", description="Who made the thread: 'ui', 'api' or 'openai'.")
    created_at: str | None = None
    updated_at: str | None = None
    turns: int


class TurnInfo(BaseModel):
    question: str = Field(description="The standalone question that was answered.")
    answer: str
    citations: dict[int, str] = Field(description="Marker number -> chunk id.")
    message: str | None = Field(default=None, description="What the user wrote (turns made through this server).")
    trace_id: str | None = None


class ThreadHistory(ThreadInfo):
    history: list[TurnInfo]


class PagePassageInfo(BaseModel):
    chunk_id: str
    paper_id: str
    page: int
    width: float = Field(description="Page width in PDF points.")
    height: float = Field(description="Page height in PDF points.")
    boxes: list[tuple[float, float, float, float]] = Field(
        description="Highlight boxes (x0, top, x1, bottom) in PDF points from the top left corner."
    )
    found: Literal["exact", "partial", "none"]
    matched_text: str
    image: str = Field(description="The URL of the page image with the boxes drawn.")


class ChatContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ChatContentPart] | None = None


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatLit3rOptions(LibraryFilters):
    """lit3r's own options of a chat completion (the ``lit3r`` object of the body; the ``openai`` client sends it
    with ``extra_body={"lit3r": {...}}``), the restriction fields of ``/v1/ask``."""

    papers: list[Annotated[str, Field(pattern=ITEM_ID)]] | None = Field(
        default=None, max_length=200, description="Answer from these paper ids only."
    )
    format: Literal["markdown", "bibtex", "csl-json"] | None = Field(
        default=None,
        description="Also return the answer with references (markdown) or its bibliography as the `lit3r` "
        "document's `export`, as /v1/ask's `format` does.",
    )
    citation_style: Literal["author-year", "numbered"] = Field(
        default="author-year", description="Citations in the markdown export."
    )


class ChatCompletionRequest(BaseModel):
    """OpenAI's chat-completions body; parameters lit3r has no use for (temperature, ...) are accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(min_length=1, max_length=200)
    messages: list[ChatMessage] = Field(min_length=1, max_length=200)
    stream: bool = False
    stream_options: StreamOptions | None = None
    lit3r: ChatLit3rOptions | None = Field(
        default=None, description="lit3r's options: `papers` and the library filters of `/v1/ask`."
    )


class ErrorBody(BaseModel):
    code: str = Field(description="A stable code, e.g. 'invalid_request', 'unknown_paper', 'too_many_requests'.")
    message: str = Field(description="What went wrong, for people; names the field or file concerned.")
    details: list[dict[str, Any]] | None = Field(default=None, description="Validation errors: loc, msg, type.")


class ErrorDocument(BaseModel):
    """Every error the API answers."""

    error: ErrorBody


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorDocument, "description": description}
    for status, description in (
        (400, "A request the server cannot serve (e.g. the 'llm' planner without a chat model)."),
        (401, "No API key, or a wrong one."),
        (404, "No such paper, chunk, thread, trace, job or model; or a PDF that is not available."),
        (409, "No index yet, or a job already running."),
        (413, "The body is larger than the server accepts."),
        (415, "No uploaded file has an accepted type."),
        (422, "The body or a parameter is malformed (the message names the field)."),
        (429, "Every answer slot is busy; retry after the Retry-After seconds."),
    )
}
"""The error responses every API route may give, as documented in the OpenAPI document."""
