"""Request body limits, answered with the JSON error document (413).

A body announced larger than its path's limit is refused before it is read; a body without a length (chunked)
is read up to the limit, after which the application is told the client left and the 413 is sent instead of
its answer. Uploads (``/v1/ingest``) may be as large as ``server.max_upload_bytes``, every other body
``server.max_request_bytes``.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lit3r.server.errors import error_response

UPLOAD_PATHS = ("/v1/ingest",)


class BodyLimit:
    """ASGI middleware bounding request bodies by path."""

    def __init__(self, app: ASGIApp, *, request_bytes: int, upload_bytes: int) -> None:
        self.app = app
        self.request_bytes = request_bytes
        self.upload_bytes = upload_bytes

    def limit(self, path: str) -> int:
        return self.upload_bytes if path.startswith(UPLOAD_PATHS) else self.request_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit(scope["path"])
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await too_large(limit)(scope, receive, send)
            return
        total, exceeded, started = 0, False, False

        async def limited() -> Message:
            nonlocal total, exceeded
            if exceeded:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                total += len(message.get("body", b""))
                if total > limit:
                    exceeded = True
                    return {"type": "http.disconnect"}
            return message

        async def forward(message: Message) -> None:
            nonlocal started
            if exceeded and not started:
                return  # the application's reply to a body it could not finish reading
            started = started or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, limited, forward)
        if exceeded and not started:
            await too_large(limit)(scope, receive, send)


def too_large(limit: int):
    return error_response(413, "too_large", f"the request body is larger than this server accepts ({limit} bytes)")
