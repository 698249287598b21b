"""lit3r over the Model Context Protocol: the server (:func:`build_server`), its HTTP app (:func:`asgi_app`),
and ready client configurations (:mod:`lit3r.mcp.config`)."""

from lit3r.mcp.http import MCPApp, asgi_app
from lit3r.mcp.server import build_server

__all__ = ["MCPApp", "asgi_app", "build_server"]
