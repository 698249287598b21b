"""Parsers: one module per source format, each turning a file into ParsedPaper objects.

A parser is a function ``parse(path) -> list[ParsedPaper]`` that raises
:class:`ParseError` (naming the file and the problem) for a file it cannot
read. :func:`parser_for` picks the parser from the file name.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lit3r.models import ParsedPaper

Parser = Callable[[Path], list[ParsedPaper]]


class ParseError(Exception):
    """A file that cannot be ingested; the message names the file and the problem."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


def parser_for(path: Path) -> Parser | None:
    """The parser for ``path`` by its suffix, or None when lit3r does not read that kind of file."""
    name = path.name.lower()
    if name.endswith((".json", ".json.gz", ".jsonl", ".jsonl.gz")):
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


SUPPORTED_SUFFIXES = (".json", ".json.gz", ".jsonl", ".jsonl.gz", ".pdf", ".md", ".markdown", ".txt")
