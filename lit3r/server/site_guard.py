"""Cross-site and DNS-rebinding protection for every path of the server, not only ``/mcp``.

A page on another site can make a browser send requests to a loopback server: simple cross-site POSTs (a form,
a multipart upload) are sent without a CORS preflight, and a page whose name was rebound to 127.0.0.1 reads
the answers as same-origin. A keyless loopback server (the default) has nothing else to stop either, so:

- ``Host``: when the server has no API key, or ``server.allowed_hosts`` is set, a request whose ``Host`` header
  is neither a loopback name (``127.0.0.0/8``, ``[::1]``, ``localhost``, any port) nor one of
  ``server.allowed_hosts`` (``name``, ``name:port`` or ``name:*``) is answered ``421 misdirected_host``. A keyed
  server without ``allowed_hosts`` accepts any name: a rebinding page cannot present its key.
- ``Origin``: a request that can change state (any method but GET, HEAD and OPTIONS) from a browser page must
  come from the server's own origin (the ``Origin`` header's host and port equal ``Host``) or from one of
  ``server.cors_origins``; otherwise ``403 cross_site_request``. ``Origin: null`` (sandboxed frames, some
  redirects) is refused the same way, as is ``Sec-Fetch-Site: cross-site``. Clients that are not browsers send
  no ``Origin`` and are not affected.

The health check is exempt from the ``Host`` rule (load balancers probe it by address).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from lit3r.server.auth import is_loopback
from lit3r.server.errors import error_response

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
OPEN_PATHS = ("/healthz",)


def split_host(value: str) -> tuple[str, str]:
    """``("name", "port")`` of a ``Host`` value (``name``, ``name:port``, ``[v6]:port``); port may be ``""``."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        return name, rest.removeprefix(":")
    name, _, port = value.rpartition(":") if value.count(":") == 1 else (value, "", "")
    return name, port


def host_allowed(host: str, allowed: list[str]) -> bool:
    """Whether a ``Host`` header names this server: loopback, or an entry of ``allowed`` (``name[:port|:*]``)."""
    name, port = split_host(host)
    if not name:
        return False
    if is_loopback(name):
        return True
    for entry in allowed:
        want_name, want_port = split_host(entry)
        if want_name == name and want_port in ("", "*", port):
            return True
    return False


def origin_host(origin: str) -> str | None:
    """``name:port`` of an ``Origin`` header (the scheme's default port when none is written), or None."""
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    name = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{name}:{port}".lower()


def same_origin(origin: str, host: str, scheme: str) -> bool:
    """Whether ``Origin`` names the host and port the request was sent to."""
    from_origin = origin_host(origin)
    if from_origin is None:
        return False
    name, port = split_host(host)
    port = port or ("443" if scheme == "https" else "80")
    name = f"[{name}]" if ":" in name else name
    return from_origin == f"{name}:{port}"


class SiteGuard:
    """ASGI middleware applying the ``Host`` and ``Origin`` rules of the module docstring."""

    def __init__(self, app: ASGIApp, *, check_host: bool, allowed_hosts: list[str], cors_origins: list[str]):
        self.app = app
        self.check_host = check_host
        self.allowed_hosts = list(allowed_hosts)
        self.cors_origins = {o.rstrip("/").lower() for o in cors_origins}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if self.check_host and scope["path"] not in OPEN_PATHS and not host_allowed(host, self.allowed_hosts):
            message = (
                f"the Host header {host!r} does not name this server: add the name to server.allowed_hosts "
                "(LIT3R_SERVER__ALLOWED_HOSTS) to serve it"
            )
            await error_response(421, "misdirected_host", message)(scope, receive, send)
            return
        if scope["method"] not in SAFE_METHODS and self.cross_site(headers, host, scope.get("scheme", "http")):
            message = (
                f"cross-site request refused: a page from {headers.get('origin') or 'another site'!r} may not "
                "change this server's state (allow its origin in server.cors_origins)"
            )
            await error_response(403, "cross_site_request", message)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def cross_site(self, headers: Headers, host: str, scheme: str) -> bool:
        origin = headers.get("origin")
        if origin is not None:
            if origin.rstrip("/").lower() in self.cors_origins:
                return False
            return not same_origin(origin, host, scheme)
        return headers.get("sec-fetch-site", "").lower() == "cross-site"
