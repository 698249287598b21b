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
import unicodedata
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
ASCII_SPACE = " \t\r\n\f\v"
MIN_EXPOSED_KEY_CHARS = 16
"""The shortest key a server bound beyond loopback accepts (a guessable key is no key)."""


class KeyFileError(ValueError):
    """The key file cannot be read or holds no key."""


def read_key_file(path: Path) -> list[str]:
    """The keys of a key file: one a line, blank lines and '#' comments skipped."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")  # not splitlines(): NEL, U+2028 are not line ends here
    except (OSError, UnicodeDecodeError) as exc:
        raise KeyFileError(f"{path}: cannot read the API key file: {exc}") from exc
    keys = []
    for number, line in enumerate(lines, 1):
        key = line.strip(ASCII_SPACE)
        if key and not key.startswith("#"):
            keys.append(checked_key(key, f"{path}: line {number}"))
    if not keys:
        raise KeyFileError(f"{path}: the API key file holds no key (one key a line)")
    return keys


def checked_key(key: str, where: str) -> str:
    """``key`` if every character is printable ASCII (what an HTTP header carries the same in every client)."""
    for char in key:
        if not " " < char < "\x7f":
            raise KeyFileError(
                f"{where}: the API key holds {unicodedata.name(char, 'a control character')} (U+{ord(char):04X}); "
                "keys are printable ASCII without spaces, so that every client sends them byte for byte"
            )
    return key


def load_keys(settings: ServerSettings) -> list[str]:
    """Every accepted key: ``api_keys`` and those of ``api_key_file``, each checked by :func:`checked_key`.

    Only ASCII white space is trimmed: a key ending in a no-break space or NEL is refused, not shortened.
    """
    keys = []
    for number, secret in enumerate(settings.api_keys, 1):
        key = secret.get_secret_value().strip(ASCII_SPACE)
        if key:
            keys.append(checked_key(key, f"server.api_keys: key {number}"))
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
    if is_loopback(host):
        return
    if not keys:
        raise PermissionError(
            f"refusing to listen on {host!r} without an API key: set LIT3R_SERVER__API_KEYS or "
            "LIT3R_SERVER__API_KEY_FILE (or pass --api-key-file), or bind to 127.0.0.1"
        )
    short = sum(len(key) < MIN_EXPOSED_KEY_CHARS for key in keys)
    if short:
        raise PermissionError(
            f"refusing to listen on {host!r}: {short} API key(s) shorter than {MIN_EXPOSED_KEY_CHARS} characters "
            "(e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))'` makes a good one)"
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
    token = token.strip(ASCII_SPACE)  # not str.strip(): "key\xa0" is another key, not this one
    return token if scheme.lower() == "bearer" and token else None


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
