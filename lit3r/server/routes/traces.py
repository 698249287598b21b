"""Traces: ``/v1/traces`` (the newest first), ``/v1/traces/{id}`` (the document and its timeline) and
``/v1/traces/{a}/diff/{b}`` (two runs compared step by step, :func:`lit3r.app.trace_diff.diff_traces`)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path as FilePath
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.concurrency import run_in_threadpool

from lit3r.app.trace_diff import TraceDiff, diff_traces
from lit3r.app.traces import load_trace, newest_first, summarize, trace_path
from lit3r.server.errors import ApiError
from lit3r.server.routes import runtime_of
from lit3r.server.schemas import TRACE_ID
from lit3r.settings import Settings

router = APIRouter(tags=["traces"])
TraceId = Annotated[str, Path(pattern=TRACE_ID, description="A trace id, e.g. 20261129T160919-22e0e9ca.")]


def traces_folder(settings: Settings) -> FilePath:
    return settings.home / "traces"


def resolve_trace(settings: Settings, trace_id: str) -> FilePath:
    """The trace file of a (validated) id, resolved inside the traces folder, or a 404."""
    folder = traces_folder(settings).resolve()
    path = trace_path(settings, trace_id).resolve()
    if path.parent != folder or not path.is_file():
        raise ApiError(404, "unknown_trace", f"no trace {trace_id!r}")
    return path


def summary(path: FilePath) -> dict[str, Any]:
    """A trace's list entry."""
    try:
        doc = load_trace(path)
    except (OSError, ValueError) as exc:
        return {"trace_id": path.stem, "question": None, "error": f"unreadable trace: {exc}"}
    answer = doc.get("answer") or {}
    return {
        "trace_id": path.stem,
        "question": doc.get("question"),
        "message": doc.get("message"),
        "thread_id": doc.get("thread_id"),
        "created_at": _created(path.stem),
        "planner": doc.get("planner"),
        "stop_reason": doc.get("stop_reason"),
        "sufficient": answer.get("sufficient"),
        "citations": len(answer.get("citations") or []),
        "rounds": answer.get("rounds"),
        "events": len(doc.get("events") or []),
    }


def _created(trace_id: str) -> str | None:
    try:
        return datetime.strptime(trace_id[:15], "%Y%m%dT%H%M%S").isoformat() + "Z"
    except ValueError:
        return None


def timeline(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per event: offset from the first event, round, type, name, duration, summary, tokens."""
    events = doc.get("events") or []
    if not events:
        return []
    origin = datetime.fromisoformat(events[0]["started_at"])
    rows = []
    for event in events:
        data = event.get("data") or {}
        row = {
            "offset_ms": round((datetime.fromisoformat(event["started_at"]) - origin).total_seconds() * 1000, 1),
            "round": event.get("round"),
            "type": event.get("type"),
            "name": event.get("name"),
            "duration_ms": event.get("duration_ms", 0.0),
            "summary": summarize(event),
        }
        if event.get("type") == "llm":
            row["tokens"] = {"prompt": data.get("prompt_tokens", 0), "completion": data.get("completion_tokens", 0)}
            row["model"] = data.get("model")
        rows.append(row)
    return rows


@router.get("/traces")
async def list_traces(
    request: Request,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    thread_id: Annotated[str | None, Query(max_length=128)] = None,
) -> dict:
    """Traces under the home folder, newest first (optionally one thread's)."""
    folder = traces_folder(runtime_of(request).settings)

    def listed() -> list[dict[str, Any]]:
        paths = newest_first(folder)
        if thread_id is None:
            return [summary(p) for p in paths[offset : offset + limit]]
        found = [s for s in map(summary, paths) if s.get("thread_id") == thread_id]
        return found[offset : offset + limit]

    return {"traces": await run_in_threadpool(listed)}


def read_trace(path: FilePath, trace_id: str) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ApiError(500, "unreadable_trace", f"trace {trace_id} cannot be read: {exc}") from exc


@router.get("/traces/{trace_id}")
async def get_trace(trace_id: TraceId, request: Request) -> dict:
    """A trace document (question, answer, every event with its data) and its `timeline`."""
    path = resolve_trace(runtime_of(request).settings, trace_id)

    def read() -> dict[str, Any]:
        doc = read_trace(path, trace_id)
        return {**doc, "trace_id": trace_id, "timeline": timeline(doc)}

    return await run_in_threadpool(read)


@router.get("/traces/{trace_id}/diff/{other_id}", response_model=TraceDiff)
async def diff(trace_id: TraceId, other_id: Annotated[str, Path(pattern=TRACE_ID)], request: Request) -> dict:
    """Run A (`trace_id`) against run B (`other_id`): steps, subqueries, rankings with rank moves, pool,
    verdicts, final papers, answer, citations, tokens and time, and the first part that differs (the document
    of `lit3r trace diff A B --json`)."""
    settings = runtime_of(request).settings
    a, b = resolve_trace(settings, trace_id), resolve_trace(settings, other_id)

    def compare() -> dict[str, Any]:
        return diff_traces(read_trace(a, trace_id), read_trace(b, other_id)).model_dump(mode="json")

    return await run_in_threadpool(compare)
