"""Access: bearer keys from the settings or a key file, compared in constant time, and the loopback rule.

A server bound beyond loopback must have at least one key (:func:`check_exposure` refuses otherwise); a
loopback server without keys is open to local callers. :class:`KeyGuard` guards every path but the health
check and the page's static files (HTML, CSS and JavaScript, which hold no data): the API, the OpenAPI document
and any mounted sub-application.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Iterable
from pathlib import Path

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from lit3r.server.errors import error_response
from lit3r.settings import ServerSettings

OPEN_PATHS = ("/healthz",)
"""Paths anyone may call."""
OPEN_PREFIXES = ("/static/",)
"""The page's code: no data behind them."""
LOOPBACK_NAMES = {"localhost", "ip6-localhost", "ip6-loopback"}


class KeyFileError(ValueError):
    """The key file cannot be read or holds no key."""


def read_key_file(path: Path) -> list[str]:
    """The keys of a key file: one a line, blank lines and '#' comments skipped."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise KeyFileError(f"{path}: cannot read the API key file: {exc}") from exc
    keys = [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]
    if not keys:
        raise KeyFileError(f"{path}: the API key file holds no key (one key a line)")
    return keys


def load_keys(settings: ServerSettings) -> list[str]:
    """Every accepted key: ``api_keys`` and those of ``api_key_file``."""
    keys = [k.get_secret_value().strip() for k in settings.api_keys if k.get_secret_value().strip()]
    if settings.api_key_file is not None:
        keys += read_key_file(settings.api_key_file)
    return keys


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine (127.0.0.0/8, ::1, localhost)."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, keys: list[str]) -> None:
    """Refuse to serve beyond loopback without a key."""
    if not is_loopback(host) and not keys:
        raise PermissionError(
            f"refusing to listen on {host!r} without an API key: set LIT3R_SERVER__API_KEYS or "
            "LIT3R_SERVER__API_KEY_FILE (or pass --api-key-file), or bind to 127.0.0.1"
        )


def key_matches(presented: str, keys: Iterable[str]) -> bool:
    """Constant-time comparison against every key: digests of equal length, no early exit on a match."""
    given = hashlib.sha256(presented.encode("utf-8")).digest()
    matched = False
    for key in keys:
        matched |= hmac.compare_digest(given, hashlib.sha256(key.encode("utf-8")).digest())
    return matched


def bearer_token(headers: Headers) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


class KeyGuard:
    """ASGI middleware: a request to a guarded path needs a valid bearer key (401 otherwise)."""

    def __init__(self, app: ASGIApp, keys: list[str]) -> None:
        self.app = app
        self.keys = list(keys)

    def guarded(self, path: str) -> bool:
        return path not in OPEN_PATHS and path != "/" and not path.startswith(OPEN_PREFIXES)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.keys or not self.guarded(scope["path"]):
            await self.app(scope, receive, send)
            return
        token = bearer_token(Headers(scope=scope))
        if token is None or not key_matches(token, self.keys):
            message = "an API key is required: send 'Authorization: Bearer <key>'"
            if token is not None:
                message = "the API key is not valid"
            code = "unauthorized" if token is None else "invalid_key"
            response = error_response(401, code, message, headers={"WWW-Authenticate": "Bearer"})
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)
