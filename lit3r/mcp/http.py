"""lit3r's MCP server over streamable HTTP: an ASGI app to mount in another server, or to serve on its own.

:func:`asgi_app` returns an :class:`MCPApp`. Mounted in a host application (``lit3r serve``) it is the MCP
endpoint itself, whatever path the host routes to it, and the host runs :meth:`MCPApp.lifespan` in its own
lifespan (a sub-application's lifespan is not run by Starlette's router)::

    mcp = asgi_app(session, allowed_hosts=["lit3r.example.org"])

    @asynccontextmanager
    async def lifespan(app):
        async with mcp.lifespan():
            yield

    app = Starlette(routes=[Route("/mcp", endpoint=mcp)], lifespan=lifespan)   # behind the host's own auth

:meth:`MCPApp.standalone` is the same endpoint as a complete Starlette app at ``/mcp`` (what ``lit3r mcp
--transport http`` serves with uvicorn). The SDK's DNS-rebinding protection stays on: requests whose ``Host``
header is not loopback (or one of ``allowed_hosts``) get HTTP 421.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.types import Receive, Scope, Send

from lit3r.app.session import Session
from lit3r.mcp.server import SessionSource, build_server

PATH = "/mcp"
LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


def transport_security(allowed_hosts: list[str] | None = None) -> TransportSecuritySettings:
    """DNS-rebinding protection allowing loopback plus ``allowed_hosts`` (``host:port``, ``host:*``)."""
    extra = list(allowed_hosts or [])
    origins = [f"{scheme}://{host}" for host in extra for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*LOOPBACK_HOSTS, *extra],
        allowed_origins=[*LOOPBACK_ORIGINS, *origins],
    )


class MCPApp:
    """The MCP endpoint as an ASGI app, with the lifespan its host must run (see the module docstring)."""

    def __init__(self, server: MCPServer, *, security: TransportSecuritySettings, json_response: bool = False):
        self.server = server
        self._app = server.streamable_http_app(
            streamable_http_path=PATH, transport_security=security, json_response=json_response
        )
        self.session_manager = server.session_manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one MCP request (POST, GET stream or DELETE), at whatever path the host routed here."""
        await self.session_manager.handle_request(scope, receive, send)

    def lifespan(self) -> AbstractAsyncContextManager[None]:
        """Run the MCP sessions' task group (enter it once, in the host's lifespan)."""
        return self.session_manager.run()

    def standalone(self) -> Starlette:
        """A complete app serving the endpoint at ``/mcp``, with its lifespan."""
        return self._app


def asgi_app(
    session: Session | SessionSource,
    *,
    allowed_hosts: list[str] | None = None,
    json_response: bool = False,
    **server: Any,
) -> MCPApp:
    """The MCP server over ``session`` as a mountable ASGI app.

    Args:
        session: The open session every tool answers from, or a source of sessions (:data:`SessionSource`: a
            server's current one, leased per call).
        allowed_hosts: ``Host`` header values accepted besides loopback (the host's public name when it is
            served beyond loopback), e.g. ``["papers.example.org", "10.0.0.5:8000"]``.
        json_response: Answer each POST with one JSON body instead of an SSE stream (no progress then).
        **server: Passed to :func:`~lit3r.mcp.server.build_server` (``answer_runs``, ``max_seconds``,
            ``heartbeat_s``).
    """
    built = build_server(session, **server)
    return MCPApp(built, security=transport_security(allowed_hosts), json_response=json_response)


def serve_http(session: Session, *, host: str = "127.0.0.1", port: int = 8765, **server: Any) -> None:
    """Serve the MCP endpoint at ``http://host:port/mcp`` with uvicorn until interrupted (loopback by default)."""
    import uvicorn

    app = asgi_app(session, **server).standalone()
    uvicorn.run(app, host=host, port=port, log_level="warning")
