"""The top-level JSON values of a file, each with its position, reading past the malformed ones.

Two layouts are told apart by content, not by name:

* JSON lines: the first non-blank line is a complete JSON value on its own. Every
  line is then read by itself, so one malformed line costs only that line.
* A stream of documents (one document, or several one after another, pretty-printed or
  not): read with ``JSONDecoder.raw_decode``. After a malformed document, reading
  resumes at the next line that starts with ``{`` or ``[`` in its first column (where
  the next top-level document of a pretty-printed stream begins), or stops.

Each value comes as a :class:`JsonValue` whose ``where`` names it for messages
(``line 7``, ``document 2 (line 40)``); a malformed one carries ``error`` instead of a value.
Nesting too deep for Python's reader and numbers too long to convert are errors of that
value, not crashes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_DECODER = json.JSONDecoder()
_DOCUMENT_START = re.compile(r"^[\[{]", re.MULTILINE)


@dataclass
class JsonValue:
    """One top-level value: where it is, and the value or why it could not be read."""

    where: str
    line: int
    value: Any = None
    error: str | None = None


def iter_json_values(text: str) -> Iterator[JsonValue]:
    """Every top-level value of ``text`` in order, malformed ones as errors (see the module docstring)."""
    first = _first_line(text)
    if first is not None and _complete_value(first):
        yield from _lines(text)
    else:
        yield from _stream(text)


def _first_line(text: str) -> str | None:
    return next((line for line in text.split("\n", 50)[:50] if line.strip()), None)


def _complete_value(line: str) -> bool:
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


def _lines(text: str) -> Iterator[JsonValue]:
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"line {number}"
        try:
            yield JsonValue(where, number, value=json.loads(line))
        except json.JSONDecodeError as exc:
            yield JsonValue(where, number, error=f"malformed JSON at column {exc.colno}: {exc.msg}")
        except (ValueError, RecursionError) as exc:
            yield JsonValue(where, number, error=_unreadable(exc))


def _stream(text: str) -> Iterator[JsonValue]:
    position, length, document = 0, len(text), 0
    while True:
        while position < length and text[position].isspace():
            position += 1
        if position >= length:
            return
        document += 1
        line = text.count("\n", 0, position) + 1
        where = f"document {document} (line {line})" if document > 1 or line > 1 else "document 1"
        try:
            value, position = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            error_line = text.count("\n", 0, exc.pos) + 1
            problem = f"malformed JSON at line {error_line}, column {exc.colno}: {exc.msg}"
            position = _resume(text, exc.pos)
            yield JsonValue(where, line, error=problem + _skipped_to(text, position))
            continue
        except (ValueError, RecursionError) as exc:
            position = _resume(text, position + 1)
            yield JsonValue(where, line, error=_unreadable(exc) + _skipped_to(text, position))
            continue
        yield JsonValue(where, line, value=value)


def _resume(text: str, after: int) -> int:
    """Where the next top-level document may start after a malformed one, or the end of the text."""
    start = text.find("\n", after)
    match = _DOCUMENT_START.search(text, start + 1) if start != -1 else None
    return match.start() if match else len(text)


def _skipped_to(text: str, position: int) -> str:
    if position >= len(text):
        return "; the rest of the file was not read"
    return f"; reading resumed at line {text.count(chr(10), 0, position) + 1}"


def _unreadable(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply to read"
    return f"unreadable JSON value ({exc})"[:300]
