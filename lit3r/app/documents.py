"""The answer document and the trace-event view: what every surface sends, built here once.

:class:`AnswerDocument` is the answer on the wire: ``lit3r ask --json`` prints it, ``POST /v1/ask`` returns it
(the OpenAPI document describes it with this model), the OpenAI endpoint carries it under ``lit3r``, MCP's
``ask`` returns it as structured content, and the LangGraph subgraph's output is taken from it. It holds the
answer model's fields with the text under ``answer``, each citation with its paper's title, the trace id, and a
thread turn's ``thread_id``, ``message`` and ``turn``.

:func:`step_view` and :func:`step_line` are a completed trace event as a stream step (the SSE ``step`` event,
the platform's custom event) and as one line of status (``lit3r ask --steps``, MCP progress).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from lit3r.app.traces import summarize
from lit3r.models import Answer, ClaimCheck, Locator, Paper, TableCell, TraceEvent

STEP_LINE_CHARS = 160
REMOVED_CLAIM = "[removed: not supported by its citation]"
"""A removed claim's text in the answer document: what a model wrote and lit3r refused is in the trace (its
``verify`` event and its answer's ``claims``), not beside the answer."""


def trace_id_of(trace_path: str | Path | None) -> str | None:
    """The id of the trace stored at ``trace_path`` (its file name without ``.json``); None for no trace."""
    return Path(trace_path).stem if trace_path else None


class CitedPassage(BaseModel):
    """One citation of an answer: the marker's number, the chunk it names and the verbatim quote."""

    number: int = Field(description="The n of the marker [n] in the answer text.")
    chunk_id: str = Field(description="The cited chunk (its text and locator: GET /v1/chunks/{id}, get_chunk).")
    paper_id: str = Field(description="The cited chunk's paper.")
    paper_title: str = Field(default="", description="That paper's title.")
    locator: Locator = Field(description="Where the chunk sits in its paper: page, section, paragraph, object, span.")
    quote: str = Field(description="Text quoted verbatim from the chunk that supports the claim.")
    quotes: list[str] = Field(
        default_factory=list,
        description="Each [n] marker's own quote, in the order of the markers (empty when the reader gave none).",
    )
    cell: TableCell | None = Field(
        default=None, description="When the quote is one row of a table: its table, row and (for one value) column."
    )


class AnswerDocument(BaseModel):
    """An answer whose every claim cites a chunk of the corpus, or an abstention when the evidence is not there."""

    answer: str = Field(description="The answer with inline citation markers [n]; the abstention sentence if none.")
    citations: list[CitedPassage] = Field(description="Every marker of the answer, in order.")
    sufficient: bool = Field(description="False when the evidence was insufficient and the system abstained.")
    option: str | None = Field(default=None, description="The chosen option of a multiple-choice question.")
    table: list[dict[str, str]] | None = Field(default=None, description="Rows of a table answer, by column.")
    candidate_papers: list[str] = Field(description="The final paper ranking, best first.")
    rounds: int = Field(description="Retrieval rounds run.")
    trace_path: str | None = Field(description="The run's JSON trace file.")
    question: str = Field(description="The question answered (a thread turn: the standalone question).")
    supported_fraction: float | None = Field(
        default=None, description="Claims supported by their citations / claims (None: not verified or no claims)."
    )
    claims: list[ClaimCheck] = Field(
        default_factory=list,
        description="Each sentence's verdict from verification; a removed one's text is "
        f"{REMOVED_CLAIM!r} (the trace keeps the sentence).",
    )
    verified_by: str | None = Field(default=None, description="The judge that checked the claims (None: not checked).")
    fallbacks: list[str] = Field(default_factory=list, description="Each step that fell back to its offline path.")
    answers_question: bool | None = Field(
        default=None,
        description="Whether the answer supplies what the question asks (its kind found in evidence holding the "
        "question's terms); False for an abstention; None when the reader does not say.",
    )
    confidence: float | None = Field(
        default=None, description="How sure the reader is that the answer is right, 0..1 (apart from the quote check)."
    )
    unmentioned: list[str] = Field(
        default_factory=list,
        description="Words of a yes/no question that no paper read mentions; its 'No' rests on their absence. For "
        "any other question: names it asks about that no paper read mentions; it abstains on their absence.",
    )
    trace_id: str | None = Field(description="The run's trace id (GET /v1/traces/{id}, get_trace, lit3r trace show).")
    thread_id: str | None = Field(default=None, description="The thread the question was a turn of.")
    message: str | None = Field(default=None, description="A thread turn: the message as the user wrote it.")
    turn: int | None = Field(default=None, description="A thread turn: its position in the thread (0: the first).")
    export: str | None = Field(
        default=None, description="With `format`: the answer with references (markdown), or BibTeX / CSL-JSON."
    )


def answer_document(
    answer: Answer,
    papers: Mapping[str, Paper],
    *,
    thread_id: str | None = None,
    message: str | None = None,
    turn: int | None = None,
) -> AnswerDocument:
    """The document of ``answer``; ``papers`` (the index's) gives each citation its paper's title."""
    citations = [
        CitedPassage(
            number=c.number,
            chunk_id=c.chunk_id,
            paper_id=c.paper_id,
            paper_title=papers[c.paper_id].title if c.paper_id in papers else "",
            locator=c.locator,
            quote=c.quote,
            quotes=c.quotes,
            cell=c.cell,
        )
        for c in answer.citations
    ]
    fields = answer.model_dump(exclude={"text", "citations", "claims"})
    claims = [c.model_copy(update={"text": REMOVED_CLAIM}) if c.action == "removed" else c for c in answer.claims]
    return AnswerDocument(
        answer=answer.text,
        citations=citations,
        claims=claims,
        **fields,
        trace_id=trace_id_of(answer.trace_path),
        thread_id=thread_id,
        message=message,
        turn=turn,
    )


def step_view(event: TraceEvent) -> dict[str, Any]:
    """A completed trace event as a stream step: what happened, when, for how long, in one line of summary; a
    model call adds its tokens and model."""
    data = event.data or {}
    view: dict[str, Any] = {
        "type": event.type,
        "name": event.name,
        "round": event.round,
        "started_at": event.started_at,
        "duration_ms": event.duration_ms,
        "summary": summarize(event.model_dump()),
    }
    if event.type == "llm":
        view["tokens"] = {"prompt": data.get("prompt_tokens", 0), "completion": data.get("completion_tokens", 0)}
        view["model"] = data.get("model")
    return view


def step_line(event: TraceEvent, limit: int = STEP_LINE_CHARS) -> str:
    """A completed trace event as one line of status: seconds, round, type and name, a model call's
    prompt+completion tokens, then the summary, e.g. ``    0.3 s  r1 tool search_chunks: {...} → 20 passages``."""
    view = step_view(event)
    round_ = f"r{event.round} " if event.round is not None else ""
    tokens = f" {view['tokens']['prompt']}+{view['tokens']['completion']} tokens" if "tokens" in view else ""
    line = f"{event.duration_ms / 1000:7.1f} s  {round_}{event.type} {event.name}{tokens}: {view['summary']}"
    return line if len(line) <= limit else line[: limit - 1] + "…"
