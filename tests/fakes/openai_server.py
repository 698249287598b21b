"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions API from a script.

Each ``POST .../chat/completions`` takes the next :class:`Scripted` reply (or, given a ``responder``, the reply it
computes from the request, for runs that make many calls): a normal completion (text or a tool
call), an error status with an OpenAI error body (and an optional ``Retry-After``), a raw malformed body, or any
of these after a delay. Requests are kept in :attr:`OpenAIServer.requests` for assertions. Every loop is
bounded: the script is finite, delays wake up when the server stops, and request bodies have a size cap.

    with OpenAIServer([reply("hi"), error(429, retry_after=0.01), reply("ok")]) as server:
        ChatOpenAI(base_url=server.base_url, api_key="sk-test", ...)
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_BODY_BYTES = 1_000_000
MAX_REQUESTS = 100
MAX_COMPUTED = 2000
"""Most requests a responder answers (a bound on runaway loops)."""
HOST = "127.0.0.1"


@dataclass
class Scripted:
    """One scripted answer. ``body`` (raw bytes) wins over ``payload`` (a JSON object)."""

    status: int = 200
    payload: dict[str, Any] | None = None
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    content_type: str = "application/json"
    drop: bool = False
    """Close the connection without answering (a crashed or killed server, a proxy that gave up)."""


def completion(message: dict[str, Any], finish_reason: str, usage: tuple[int, int]) -> dict[str, Any]:
    """A chat.completion object around one assistant message."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
    }


def reply(content: str, *, usage: tuple[int, int] = (10, 5), delay_s: float = 0.0) -> Scripted:
    """A plain assistant text answer (also how JSON-schema / JSON-mode structured output arrives)."""
    message = {"role": "assistant", "content": content, "refusal": None}
    return Scripted(payload=completion(message, "stop", usage), delay_s=delay_s)


def tool_call(
    name: str, args: dict[str, Any], *, usage: tuple[int, int] = (10, 5), call_id: str = "call_1"
) -> Scripted:
    """An assistant message calling one tool (function-calling structured output and agent tools)."""
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return Scripted(payload=completion(message, "tool_calls", usage))


def error(status: int, message: str = "scripted error", *, retry_after: float | None = None) -> Scripted:
    """An OpenAI-style error body with the given HTTP status (429, 500, 400, 401 ...)."""
    headers = {} if retry_after is None else {"retry-after": str(retry_after)}
    payload = {"error": {"message": message, "type": "fake_error", "param": None, "code": str(status)}}
    return Scripted(status=status, payload=payload, headers=headers)


def malformed(text: str = '{"id": "chatcmpl-fake", "choices": [') -> Scripted:
    """A 200 answer declared as JSON whose body does not parse."""
    return Scripted(body=text.encode())


def html_page(title: str = "Sign in") -> Scripted:
    """A 200 with a web page instead of the API (a login page, a gateway, a base URL pointing at a web UI)."""
    page = f"<!DOCTYPE html><html><head><title>{title}</title></head><body><form>...</form></body></html>"
    return Scripted(body=page.encode(), content_type="text/html; charset=utf-8")


def no_choices(choices: list | None = None) -> Scripted:
    """A 200 completion object without choices (``[]``, or ``None`` when given)."""
    return Scripted(payload={"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "choices": choices})


def error_object(message: str = "model overloaded") -> Scripted:
    """A 200 whose body is an error object, as some proxies send."""
    return Scripted(payload={"error": {"message": message, "type": "server_error"}})


def dropped() -> Scripted:
    """The connection closed without an answer."""
    return Scripted(drop=True)


def slow(delay_s: float, then: Scripted | None = None) -> Scripted:
    """``then`` (a text reply by default) sent only after ``delay_s`` seconds."""
    scripted = then or reply("too late")
    return Scripted(scripted.status, scripted.payload, scripted.body, dict(scripted.headers), delay_s)


class OpenAIServer:
    """A threaded local server answering chat completions from a script; use as a context manager."""

    def __init__(
        self, script: list[Scripted] | None = None, *, responder: Callable[[dict[str, Any]], Scripted] | None = None
    ) -> None:
        self.script: list[Scripted] = list(script or [])
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer((HOST, 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL, ``http://127.0.0.1:<port>/v1``."""
        return f"http://{HOST}:{self._httpd.server_port}/v1"

    @property
    def endpoint(self) -> str:
        """The bare ``http://127.0.0.1:<port>`` (an Azure-style endpoint)."""
        return f"http://{HOST}:{self._httpd.server_port}"

    def add(self, *replies: Scripted) -> None:
        """Append replies to the script."""
        with self._lock:
            self.script.extend(replies)

    def next_reply(self, request: dict[str, Any]) -> Scripted:
        """Record ``request`` and pop the next scripted reply (a 400 when the script is spent)."""
        with self._lock:
            self.requests.append(request)
            if self.responder is not None and len(self.requests) <= MAX_COMPUTED:
                return self.responder(request["body"])
            if self.script and len(self.requests) <= MAX_REQUESTS:
                return self.script.pop(0)
        return error(400, "fake server: no scripted reply left")

    def __enter__(self) -> OpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _handler_for(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to ``server``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY_BYTES)
            raw = self.rfile.read(length)
            if not self.path.split("?")[0].endswith("/chat/completions"):
                self._send(error(404, f"fake server: no route {self.path}"))
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(error(400, "fake server: request body is not JSON"))
                return
            request = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
            scripted = server.next_reply(request)
            if body.get("stream"):
                scripted = error(400, "fake server: streaming is not scripted")
            if scripted.delay_s and server.stopping.wait(scripted.delay_s):
                return
            if scripted.drop:
                self.close_connection = True
                return
            self._send(scripted)

        def _send(self, scripted: Scripted) -> None:
            data = scripted.body if scripted.body is not None else json.dumps(scripted.payload or {}).encode()
            try:
                self.send_response(scripted.status)
                self.send_header("Content-Type", scripted.content_type)
                self.send_header("Content-Length", str(len(data)))
                for key, value in scripted.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                return  # the client gave up (timeout): nothing to answer

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
            return

    return Handler
