"""Trace documents: ids, where they are stored, the JSON writer, and the timeline ``lit3r trace show`` renders.

A run's events come from its :class:`lit3r.llm.trace.TraceRecorder`; :func:`write_trace` stores them with the
answer and the run's metadata as one JSON document under ``<home>/traces/<id>.json``.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lit3r.models import Answer, TraceEvent

if TYPE_CHECKING:
    from lit3r.settings import Settings

TRACE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,120}$")
"""A trace id: a file name under ``<home>/traces`` without its extension (no separators, no leading dot)."""
TRACE_VERSION = 1
SUMMARY_CHARS = 110


def new_trace_id() -> str:
    """A sortable, unique trace id: UTC time plus a random suffix."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


def newest_first(folder: Path) -> list[Path]:
    """The trace files in ``folder``, newest first: by the second in their id, then by when they were written
    (ids of one second differ only in their random suffix)."""
    if not folder.is_dir():
        return []

    def written(path: Path) -> tuple[str, int]:
        try:
            return path.stem[:15], path.stat().st_mtime_ns
        except OSError:  # removed while listing
            return path.stem[:15], 0

    return sorted(folder.glob("*.json"), key=written, reverse=True)


def trace_path(settings: Settings, trace_id: str) -> Path:
    """Where the trace with this id is written."""
    return settings.home / "traces" / f"{trace_id}.json"


def find_trace(settings: Settings, trace_id: str) -> Path:
    """The stored trace with this id, inside the home's traces folder; :class:`~lit3r.app.errors.NotFound` when
    the id is not a trace id or no such trace is stored."""
    from lit3r.app.errors import NotFound

    if not TRACE_ID.match(trace_id):
        raise NotFound(f"{trace_id!r} is not a trace id (an answer names its trace_id)", "unknown_trace")
    folder = (settings.home / "traces").resolve()
    path = trace_path(settings, trace_id).resolve()
    if path.parent != folder or not path.is_file():
        raise NotFound(f"no trace {trace_id!r} under {folder}", "unknown_trace")
    return path


def run_settings(settings: Settings) -> dict[str, Any]:
    """What a trace records of the settings that shaped the run: the preset(s) they were loaded from and the
    answer-shaping settings (:meth:`~lit3r.settings.Settings.answer_shape`, no secrets). ``lit3r trace replay``
    runs with them; ``lit3r trace diff`` lists those that differ."""
    return {"presets": settings.presets, "settings": settings.answer_shape()}


def _jsonable(value: Any) -> Any:
    """``json.dumps`` fallback: numpy scalars and arrays, sets, paths and pydantic models as plain data."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    return str(value)


def trace_document(events: Sequence[TraceEvent], answer: Answer, **meta: Any) -> dict[str, Any]:
    """A trace as one JSON-ready dict: version, question, answer, extra ``meta`` and the events."""
    return {
        "version": TRACE_VERSION,
        "question": answer.question,
        **meta,
        "answer": answer.model_dump(mode="json"),
        "events": [e.model_dump() for e in events],  # python mode: json.dumps' default handles numpy in data
    }


def write_trace(path: Path, events: Sequence[TraceEvent], answer: Answer, **meta: Any) -> Path:
    """Write the trace to ``path`` as JSON (atomically: a temporary file, then a rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(trace_document(events, answer, **meta), ensure_ascii=False, indent=1, default=_jsonable)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


def load_trace(source: Mapping[str, Any] | str | Path) -> dict[str, Any]:
    """A trace document from a dict, a JSON string or a file path."""
    if isinstance(source, Mapping):
        return dict(source)
    if isinstance(source, str) and source.lstrip().startswith("{"):
        return json.loads(source)
    return json.loads(Path(source).read_text(encoding="utf-8"))


def _short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=_jsonable)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _top(ranking: Any, n: int = 3) -> str:
    """The first ``n`` ids of a ranking given as ids or ``[id, score]`` pairs."""
    items = [item[0] if isinstance(item, list | tuple) else item for item in (ranking or [])[:n]]
    more = f" (+{len(ranking) - n})" if ranking and len(ranking) > n else ""
    return ", ".join(map(str, items)) + more


def summarize(event: Mapping[str, Any]) -> str:
    """A one-line summary of an event's data, by event type."""
    data = event.get("data") or {}
    kind = event.get("type")
    if data.get("error"):
        head = _short(data.get("args", ""), 50) if kind == "tool" else ""
        return f"{head} ERROR {_short(data['error'], 80)}".strip()
    if kind == "fallback":
        return f"fell back: {_short(data.get('reason', ''), 80)}; {data.get('instead', '')}"
    if kind == "tool":
        return f"{_short(data.get('args', {}), 50)} → {_short(data.get('status', ''), 70)}"
    if kind == "llm":
        calls = ",".join(c.get("name", "?") for c in data.get("tool_calls") or [])
        output = f"calls {calls}" if calls else _short(data.get("output") or "", 50)
        return f"{data.get('model')} {data.get('prompt_tokens', 0)}+{data.get('completion_tokens', 0)} tok: {output}"
    if kind == "verdict":
        verdict = data.get("verdict", {})
        papers = ", ".join(verdict.get("papers_with_evidence") or []) or "-"
        missing = _short(verdict.get("missing") or "", 50)
        return f"sufficient={verdict.get('sufficient')} papers={papers} missing={missing}"
    if kind == "ranking":
        for key in ("final", "pool", "ranking", "papers"):
            if data.get(key):
                return f"{key}: {_top(data[key])}"
    if kind == "read" and "papers_coverage" in data:
        return _read_summary(data)
    if kind == "node" and "decision" in data:
        return _short(data["decision"], SUMMARY_CHARS)
    return _short(data, SUMMARY_CHARS)


def _read_summary(data: Mapping[str, Any]) -> str:
    """What the reader was given and why it read or did not: the gate, the papers' coverage of the question, the
    technical words of a yes/no question no paper read mentions, and the names of another question none mentions."""
    evidence = len(data.get("evidence") or [])
    if data.get("sufficient") and data.get("unmentioned"):
        why = f"answered No: no paper read mentions {', '.join(data['unmentioned'])}"
    elif data.get("sufficient"):
        why = "read"
    elif not evidence:
        why = "not read: no evidence"
    elif data.get("gate") is False:
        why = "not read: below the relevance gate"
    elif data.get("unnamed"):
        why = f"not read: no paper read mentions {', '.join(data['unnamed'])}"
    else:
        why = "not read: the papers read do not hold the question"
    count = len(data.get("citations") or [])
    cited = f", {count} citation{'s' if count > 1 else ''}" if count else ""
    return f"{evidence} chunks, papers hold {data['papers_coverage']:.2f} of the question; {why}{cited}"


def _offset_ms(started_at: str, origin: datetime) -> float:
    return (datetime.fromisoformat(started_at) - origin).total_seconds() * 1000


def render_timeline(trace: Mapping[str, Any] | str | Path) -> str:
    """A readable timeline: a header, then one line per event (+offset ms, round, type, name, summary)."""
    doc = load_trace(trace)
    events = doc.get("events", [])
    answer = doc.get("answer") or {}
    lines = [
        f"question: {doc.get('question', '')}",
        f"answer:   {_short(answer.get('text', ''), 100)} ({len(answer.get('citations') or [])} citations, "
        f"{answer.get('rounds', 0)} rounds)",
    ]
    if not events:
        return "\n".join([*lines, "(no events)"])
    origin = datetime.fromisoformat(events[0]["started_at"])
    for event in events:
        offset = _offset_ms(event["started_at"], origin)
        round_ = f"r{event['round']}" if event.get("round") is not None else "--"
        duration = f"{event.get('duration_ms', 0.0):8.1f} ms"
        lines.append(
            f"+{offset:9.1f} ms {round_:>3} {event['type']:<9} {event['name']:<20} {duration}  {summarize(event)}"
        )
    return "\n".join(lines)
