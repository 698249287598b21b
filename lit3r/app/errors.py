"""The app layer's errors: four kinds, each surface maps them once (an HTTP status, an MCP error, an exit code).

* :class:`UserError`: the request is malformed (an empty question, an unknown planner, an empty restriction);
* :class:`NotFound`: an id names nothing here (a paper, a chunk, a thread, a trace);
* :class:`Unavailable`: this set-up cannot serve the request (no index yet, no chat model for planner 'llm');
* :class:`UpstreamError`: a service the run depends on failed (a language-model call).

Each carries a stable ``code`` (``unknown_paper``, ``llm_unavailable``, ...) that the HTTP API sends as its
error code. :func:`classify` turns what the layers below raise (``IndexNotBuiltError``, ``LLMConfigError``,
``LLMError``) into one of these, so a surface has one ``except AppError`` and one table.
"""

from __future__ import annotations

from typing import ClassVar, Literal

Kind = Literal["user", "not_found", "unavailable", "upstream"]


class AppError(Exception):
    """An error the app layer reports to a surface: a ``kind``, a stable ``code`` and a message for people."""

    kind: ClassVar[Kind]
    default_code: ClassVar[str]

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code


class UserError(AppError, ValueError):
    """The request itself is wrong; the message names the field and the problem."""

    kind = "user"
    default_code = "invalid_request"


class NotFound(AppError, LookupError):
    """An id that names nothing in this corpus or home; the message names it and where to look."""

    kind = "not_found"
    default_code = "not_found"


class Unavailable(AppError):
    """This set-up cannot serve the request (no index built, no chat model configured)."""

    kind = "unavailable"
    default_code = "unavailable"


class UpstreamError(AppError):
    """A service the run needs failed (a language-model call)."""

    kind = "upstream"
    default_code = "upstream_failed"


def classify(exc: BaseException) -> AppError | None:
    """``exc`` as an :class:`AppError`, or None for an unexpected failure (a surface logs it with its traceback)."""
    from lit3r.index.corpus_index import IndexNotBuiltError  # here: importing the errors stays cheap
    from lit3r.llm.errors import LLMConfigError, LLMError

    if isinstance(exc, AppError):
        return exc
    if isinstance(exc, LLMConfigError):
        return Unavailable(str(exc), "llm_unavailable")
    if isinstance(exc, IndexNotBuiltError):
        return Unavailable(str(exc), "no_index")
    if isinstance(exc, LLMError):
        return UpstreamError(f"the language model call failed: {exc}", "llm_failed")
    return None
