"""The MCP endpoint inside ``lit3r serve``: the MCP server of :mod:`lit3r.mcp` over the server's current session.

Each tool call leases the session that is current when it starts (a new index generation swaps in between
calls, as for the HTTP API), and ``ask`` is admitted like an API answer run: it takes one of the
``max_concurrent_answers`` slots, or the call fails at once with the server's busy message. The endpoint sits
behind the server's bearer key (the key guard runs before every mounted application).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from mcp.server.mcpserver.exceptions import ToolError

from lit3r.app.session import Session
from lit3r.mcp.http import MCPApp, asgi_app
from lit3r.server.errors import ApiError
from lit3r.server.runtime import Runtime

PATH = "/mcp"


def mcp_app(runtime: Runtime) -> MCPApp:
    """The MCP app over ``runtime``'s sessions, accepting the configured host names besides loopback."""
    server = runtime.settings.server

    @contextmanager
    def current() -> Iterator[Session]:
        try:
            lease = runtime.lease()
        except ApiError as exc:
            raise ToolError(exc.message) from exc
        with lease:
            yield lease.session

    @contextmanager
    def admitted() -> Iterator[Session]:
        try:
            ticket = runtime.admit()
        except ApiError as exc:
            raise ToolError(exc.message) from exc
        try:
            yield ticket.session
        finally:
            ticket.release()

    hosts = list(server.allowed_hosts)
    return asgi_app(current, answer_runs=admitted, allowed_hosts=hosts, max_seconds=server.answer_max_seconds)
