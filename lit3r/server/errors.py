"""Errors as JSON: every failure a client sees is ``{"error": {"code", "message"}}``, never a traceback.

The app layer's errors (:mod:`lit3r.app.errors`) are mapped here once: :data:`KIND_STATUS` gives each kind its
HTTP status (:data:`CODE_STATUS` the codes that differ), the error's own code is the body's ``code``.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from lit3r.app.errors import AppError, Kind, classify

log = logging.getLogger(__name__)

CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    415: "unsupported_type",
    422: "invalid_request",
    429: "too_many_requests",
    500: "internal_error",
    503: "unavailable",
}


KIND_STATUS: dict[Kind, int] = {"user": 422, "not_found": 404, "unavailable": 400, "upstream": 502}
"""The HTTP status of each kind of app error."""
CODE_STATUS = {"no_index": 409}
"""App error codes whose status is not their kind's (no index yet: a conflict the ingest job resolves)."""


class ApiError(Exception):
    """An error answered as JSON with ``status``, a stable ``code`` and a message for people."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers


def as_api_error(exc: BaseException) -> ApiError:
    """What a client is told about a failure: an app error with its status, anything else a 500 (logged with
    its traceback)."""
    if isinstance(exc, ApiError):
        return exc
    error = classify(exc)
    if error is None:
        log.error("request failed", exc_info=exc)
        return ApiError(500, "internal_error", f"the request failed ({type(exc).__name__}); see the server log")
    return ApiError(CODE_STATUS.get(error.code, KIND_STATUS[error.kind]), error.code, error.message)


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    """The one error document."""
    return {"error": {"code": code, "message": message, **extra}}


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None, **extra: Any):
    return JSONResponse(error_body(code, message, **extra), status_code=status, headers=headers)


def _location(loc: tuple | list) -> str:
    return ".".join(str(part) for part in loc) or "request"


def validation_message(errors: list[dict[str, Any]]) -> str:
    """``body.question: Field required; query.k: ...``: each problem with the field it concerns."""
    return "; ".join(f"{_location(e.get('loc', ()))}: {e.get('msg', 'invalid')}" for e in errors[:10])


def install_error_handlers(app: FastAPI) -> None:
    """Answer API errors, HTTP errors, validation errors and unexpected exceptions as JSON."""

    @app.exception_handler(ApiError)
    async def _api(_request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(AppError)
    async def _app(_request: Request, exc: AppError) -> JSONResponse:
        error = as_api_error(exc)
        return error_response(error.status, error.code, error.message)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = CODES.get(exc.status_code, "error")
        message = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).phrase
        return error_response(exc.status_code, code, message, getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")} for e in exc.errors()
        ]
        return error_response(422, "invalid_request", validation_message(errors), details=errors)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(500, "internal_error", f"internal error ({type(exc).__name__}); see the server log")
