"""Parsers: one module per source format, each turning a file into ParsedPaper objects.

A parser is a function ``parse(path) -> list[ParsedPaper]`` that raises
:class:`ParseError` (naming the file and the problem) for a file it cannot
read. :func:`read_file` is the entry point ingest uses: it looks at the file's
bytes first (:mod:`lit3r.corpus.sniff`), so a PDF is read as a PDF whatever its
name, gzip is recognised by its magic number, and images, archives and random
bytes are refused by what they are. :func:`parser_for` picks a parser from the
name alone.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable
from pathlib import Path

from lit3r.corpus.sniff import HEAD_BYTES, UndecodableText, decode_text, sniff
from lit3r.models import ParsedPaper
from lit3r.settings import LimitsSettings

Parser = Callable[[Path], list[ParsedPaper]]
OnSkip = Callable[[str], None]
"""Called with one message per record a multi-record file leaves out (its position, id and problem)."""

SUPPORTED_SUFFIXES = (".json", ".json.gz", ".jsonl", ".jsonl.gz", ".pdf", ".md", ".markdown", ".txt")
_RECORD_SUFFIXES = (".json", ".json.gz", ".jsonl", ".jsonl.gz")


class ParseError(Exception):
    """A file that cannot be ingested; the message names the file and the problem."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


def parser_for(path: Path) -> Parser | None:
    """The parser for ``path`` by its suffix, or None when lit3r does not read that kind of file."""
    name = path.name.lower()
    if name.endswith(_RECORD_SUFFIXES):
        from lit3r.corpus.parsers.records import parse_records

        return parse_records
    if name.endswith(".pdf"):
        from lit3r.corpus.parsers.pdf import parse_pdf

        return parse_pdf
    if name.endswith((".md", ".markdown")):
        from lit3r.corpus.parsers.markdown import parse_markdown

        return parse_markdown
    if name.endswith(".txt"):
        from lit3r.corpus.parsers.text import parse_text

        return parse_text
    return None


def read_file(
    path: Path,
    limits: LimitsSettings | None = None,
    on_skip: OnSkip | None = None,
    on_page: Callable[[int, int], None] | None = None,
    isolate: bool = True,
) -> list[ParsedPaper]:
    """Every paper in ``path``, with the parser its content (then its name) calls for.

    A PDF under any name is parsed as a PDF; a file named ``.pdf`` that is not one, an image,
    an archive, binary data or an empty file is a :class:`ParseError` saying what it is.
    Records that a JSON file leaves out are reported through ``on_skip``. A PDF of more than
    ``limits.max_pdf_pages`` pages is refused from its page count; ``on_page(done, total)`` follows its
    reading, in a time-limited child process unless ``isolate`` is False (the caller is one already).
    """
    limits = limits or LimitsSettings()
    kind = sniff(_head(path))
    if kind.kind == "empty":
        raise ParseError(path, "the file is empty")
    if kind.kind == "binary":
        raise ParseError(path, f"{kind.what}, not a paper lit3r can read")
    if kind.kind == "pdf":
        from lit3r.corpus.parsers.pdf import parse_pdf

        return parse_pdf(path, isolate=isolate, max_pages=limits.max_pdf_pages, on_page=on_page)
    name = path.name.lower()
    if name.endswith(".pdf"):
        raise ParseError(path, f"not a PDF file (no %PDF header; it holds {_described(kind.kind)})")
    if name.endswith(_RECORD_SUFFIXES):
        from lit3r.corpus.parsers.records import parse_records

        return parse_records(path, limits=limits, on_skip=on_skip)
    if kind.kind == "gzip":
        raise ParseError(path, "gzip-compressed data; lit3r unpacks only .json.gz and .jsonl.gz files")
    parse_content = _text_parser(name)
    if parse_content is None:
        raise ParseError(path, f"unsupported file type; lit3r reads {', '.join(SUPPORTED_SUFFIXES)}")
    text = read_text(path, limits)
    if len(text) > limits.max_paper_chars:
        raise ParseError(path, too_long(len(text), limits))
    return parse_content(text, path)


def _text_parser(name: str) -> Callable[[str, Path], list[ParsedPaper]] | None:
    """The parser of a one-paper text format (Markdown, plain text) by file name."""
    if name.endswith((".md", ".markdown")):
        from lit3r.corpus.parsers.markdown import parse_markdown_text

        return parse_markdown_text
    if name.endswith(".txt"):
        from lit3r.corpus.parsers.text import parse_plain_text

        return parse_plain_text
    return None


def too_long(chars: int, limits: LimitsSettings, what: str = "the file holds") -> str:
    """The message for text over ``limits.max_paper_chars``."""
    return (
        f"{what} {chars:,} characters, more than one paper may hold "
        f"(limits.max_paper_chars = {limits.max_paper_chars:,}; LIT3R_LIMITS__MAX_PAPER_CHARS raises it)"
    )


def _described(kind: str) -> str:
    return {"text": "text", "gzip": "gzip-compressed data"}.get(kind, kind)


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(HEAD_BYTES)
    except OSError as exc:
        raise ParseError(path, f"cannot read the file ({exc.strerror or exc})") from exc


def read_bytes(path: Path, limits: LimitsSettings | None = None) -> bytes:
    """The file's bytes, unpacked when they are gzip data (by content, not name), at most ``limits.max_file_mb``."""
    limit = int((limits or LimitsSettings()).max_file_mb * 1e6)
    try:
        with path.open("rb") as handle:
            compressed = handle.read(2) == b"\x1f\x8b"
            handle.seek(0)
            if not compressed:
                return handle.read()
            with gzip.GzipFile(fileobj=handle) as unpacked:
                data = unpacked.read(limit + 1)
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise ParseError(path, f"damaged gzip data ({exc})") from exc
    except OSError as exc:
        raise ParseError(path, f"cannot read the file ({exc.strerror or exc})") from exc
    if len(data) > limit:
        raise ParseError(path, f"unpacks to more than limits.max_file_mb = {limits_mb(limit)} MB")
    return data


def limits_mb(limit_bytes: int) -> str:
    return f"{limit_bytes / 1e6:g}"


def read_text(path: Path, limits: LimitsSettings | None = None) -> str:
    """The file's text (unpacked when gzip), its encoding detected (:func:`~lit3r.corpus.sniff.decode_text`),
    line ends normalised to ``\\n``; a file that is not text is a :class:`ParseError` saying why."""
    data = read_bytes(path, limits)
    try:
        text, _encoding = decode_text(data)
    except UndecodableText as exc:
        raise ParseError(path, str(exc)) from exc
    return text.replace("\r\n", "\n").replace("\r", "\n")
