"""Server-sent events: frames in the ``text/event-stream`` wire format (FastAPI's encoder) and the response."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi.sse import KEEPALIVE_COMMENT, EventSourceResponse, format_sse_event

PING = KEEPALIVE_COMMENT
"""A comment line: keeps a connection alive, ignored by every SSE client."""

EVENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "event": {"type": "string"},
        "data": {"type": "string", "description": "One JSON document."},
        "id": {"type": "string"},
        "retry": {"type": "integer", "minimum": 0},
    },
}
"""One event of a stream (OpenAPI 3.2's form for server-sent events)."""

SSE_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "A stream of server-sent events.",
        "content": {"text/event-stream": {"schema": EVENT_SCHEMA}},
    }
}
"""The OpenAPI description of a streaming route's response."""


def frame(event: str | None, data: Any) -> bytes:
    """One event: ``event: <name>`` (omitted when None) and the data as one line of JSON."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return format_sse_event(event=event, data_str=text)


def stream(frames: AsyncIterator[bytes]) -> EventSourceResponse:
    """A streaming response of pre-encoded frames, not cached or buffered by proxies."""
    return EventSourceResponse(frames, headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
