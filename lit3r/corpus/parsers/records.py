"""JSON and JSON-lines files of papers: QASPER (both layouts) or generic paper records.

A file may hold one JSON document, a list, several documents one after another
or one per line (JSON lines), optionally gzipped (recognised by content). Each value is recognised as:

* QASPER's original mapping ``{paper_id: {title, abstract, full_text, ...}}``;
* a QASPER row in the Hugging Face layout (``full_text`` with column lists);
* one QASPER paper with its id inside (``{id, title, full_text: [...]}``);
* a generic paper record (S2ORC-like)::

    {"id": "p1", "title": "...", "abstract": "...", "venue": "ACL", "year": 2024,
     "authors": ["A. Author" | {"name": ...}],
     "sections": [{"heading": "1 Introduction", "paragraphs": ["...", "..."]}],
     "body_text": [{"section": "...", "text": "..."}],     # S2ORC style, instead of sections
     "text": "plain body text",                            # or this
     "tables": [{"id": "Table 1", "caption": "...", "text": "| a | b |"}],
     "figures": [{"id": "Figure 1", "caption": "..."}],
     "references": ["raw reference string" | {"title": ..., "raw": ..., "year": ...}]}

  ``id`` and ``title`` are required, with at least an abstract or some body text.

A record that cannot become a paper (malformed JSON on its line, a QASPER paper
without ``full_text``, a wrong-typed field, no title) is left out with a message
naming its position and id, passed to ``on_skip``; the other records go in. A file
from which no paper comes is a :class:`ParseError` that names the first problems.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lit3r.corpus.parsers import OnSkip, ParseError, read_text
from lit3r.corpus.parsers.jsonstream import iter_json_values
from lit3r.corpus.parsers.qasper import is_hf_row, looks_like_mapping, to_parsed_paper
from lit3r.corpus.parsers.schema import HFFloats, HFRow, PaperRecord, QasperPaper, describe
from lit3r.corpus.textutil import clean_text
from lit3r.models import Block, Paper, ParsedPaper, Reference
from lit3r.settings import LimitsSettings

log = logging.getLogger(__name__)
SHOWN_PROBLEMS = 3
"""How many record problems the error of a file without any paper quotes."""


class RecordError(Exception):
    """One record that cannot become a paper; the message names what is wrong with it."""


def parse_records(
    path: Path, *, limits: LimitsSettings | None = None, on_skip: OnSkip | None = None
) -> list[ParsedPaper]:
    """Every paper in a JSON or JSON-lines file; records that cannot be read are reported to ``on_skip``."""
    path = Path(path)
    papers, problems = records_from_text(read_text(path, limits), str(path))
    if not papers:
        shown = "; ".join(problems[:SHOWN_PROBLEMS])
        more = f" (and {len(problems) - SHOWN_PROBLEMS} more)" if len(problems) > SHOWN_PROBLEMS else ""
        raise ParseError(path, f"no papers found: {shown}{more}" if problems else "no papers found")
    for problem in problems:
        if on_skip is not None:
            on_skip(problem)
        else:
            log.warning("%s: skipped %s", path, problem)
    return papers


def records_from_text(text: str, source: str) -> tuple[list[ParsedPaper], list[str]]:
    """The papers of a JSON text and one message per record that could not become a paper."""
    papers: list[ParsedPaper] = []
    problems: list[str] = []
    for where, item in _records(text, problems):
        for make in _readers(item, source):
            try:
                papers.append(make())
            except RecordError as exc:
                problems.append(f"{where}: {exc}")
    return papers, problems


def _records(text: str, problems: list[str]) -> Iterator[tuple[str, Any]]:
    """``(where, value)`` for every candidate record; malformed JSON goes to ``problems``."""
    for entry in iter_json_values(text):
        if entry.error is not None:
            problems.append(f"{entry.where}: {entry.error}")
        elif isinstance(entry.value, list):
            for number, item in enumerate(entry.value, start=1):
                yield f"{entry.where}, item {number}", item
        else:
            yield entry.where, entry.value


def _readers(item: Any, source: str) -> list[Callable[[], ParsedPaper]]:
    """One reader per paper the record holds: each paper of a QASPER mapping is read (or skipped) alone."""
    if isinstance(item, dict) and not is_hf_row(item) and looks_like_mapping(item):
        return [partial(_qasper, clean_text(str(key)).strip(), record, source) for key, record in item.items()]
    return [partial(_paper, item, source)]


def _paper(item: Any, source: str) -> ParsedPaper:
    """The paper one record holds; raises RecordError naming what is wrong with it."""
    if not isinstance(item, dict):
        raise RecordError(f"expected a JSON object of a paper, found {_kind(item)}")
    if is_hf_row(item):
        return _hf_row(item, source)
    if isinstance(item.get("full_text"), list) and ("id" in item or "paper_id" in item):
        return _qasper(clean_text(str(item.get("id") or item.get("paper_id"))).strip(), item, source)
    if not {"id", "paper_id", "title"} & set(item):
        keys = ", ".join(sorted(map(str, item))[:6])
        raise RecordError(f"not a paper record (no 'id' or 'title'; its keys: {keys or 'none'})")
    return _generic(item, source)


def _qasper(paper_id: str, record: Any, source: str) -> ParsedPaper:
    if not paper_id:
        raise RecordError("a paper needs a non-empty id")
    try:
        paper = QasperPaper.model_validate(record)
    except ValidationError as exc:
        raise RecordError(f"paper {paper_id!r}: {describe(exc)}") from exc
    parsed = to_parsed_paper(paper_id, paper.model_dump(), source)
    return _with_text(parsed, paper_id)


def _hf_row(item: dict[str, Any], source: str) -> ParsedPaper:
    paper_id = str(item.get("id"))
    try:
        row = HFRow.model_validate(item)
    except ValidationError as exc:
        raise RecordError(f"paper {paper_id!r}: {describe(exc)}") from exc
    names, paragraphs = row.full_text.section_name, row.full_text.paragraphs
    if names and len(names) != len(paragraphs):
        raise RecordError(f"paper {paper_id!r}: section_name and paragraphs differ in length")
    sections = [
        {"section_name": names[i] if names else None, "paragraphs": [p for p in paras if p is not None]}
        for i, paras in enumerate(paragraphs)
    ]
    floats = row.figures_and_tables
    if isinstance(floats, HFFloats):
        captions = [{"caption": c} for c in floats.caption]
    else:
        captions = [f.model_dump() for f in floats or []]
    record = {"title": row.title, "abstract": row.abstract, "full_text": sections, "figures_and_tables": captions}
    paper_id = clean_text(row.id).strip()
    if not paper_id:
        raise RecordError("a paper needs a non-empty id")
    return _with_text(to_parsed_paper(paper_id, record, source), paper_id)


def _with_text(parsed: ParsedPaper, paper_id: str) -> ParsedPaper:
    if parsed.is_empty:
        raise RecordError(f"paper {paper_id!r}: no abstract and no body text")
    return parsed


def _generic(item: dict[str, Any], source: str) -> ParsedPaper:
    hint = item.get("id") or item.get("paper_id") or item.get("title")
    named = f"record {str(hint)[:40]!r}" if isinstance(hint, str | int) and str(hint).strip() else "record"
    try:
        record = PaperRecord.model_validate(item)
    except ValidationError as exc:
        raise RecordError(f"{named}: {describe(exc)}") from exc
    title = clean_text(record.title or "").strip()
    paper_id = clean_text(record.id or record.paper_id or "").strip()
    if not paper_id:
        raise RecordError(f"{named}: a paper needs an 'id'")
    if not title:
        raise RecordError(f"paper {paper_id!r}: a paper needs a 'title'")
    year = str(record.year or "").strip()
    paper = Paper(
        id=paper_id,
        title=title,
        abstract=clean_text(record.abstract or "").strip(),
        venue=clean_text(record.venue or "").strip() or None,
        year=int(year) if year.isdigit() and len(year) <= 4 else None,
        authors=[clean_text(a if isinstance(a, str) else a.name).strip() for a in record.authors],
        references=[_reference(r) for r in record.references],
        source=source,
        source_format="records",
    )
    parsed = ParsedPaper(paper=paper, blocks=_body_blocks(record) + _float_blocks(record))
    if parsed.is_empty:
        raise RecordError(f"paper {paper_id!r}: no abstract and no body text")
    return parsed.with_spans()


def _body_blocks(record: PaperRecord) -> list[Block]:
    blocks: list[Block] = []
    for section in record.sections:
        heading = section.heading or section.section or section.section_name
        for paragraph in section.paragraphs:
            _add(blocks, "text", paragraph, section=heading)
    for entry in record.body_text:
        _add(blocks, "text", entry.text or "", section=entry.section)
    for paragraph in (record.text or record.full_text or "").split("\n\n"):
        _add(blocks, "text", paragraph)
    return blocks


def _float_blocks(record: PaperRecord) -> list[Block]:
    blocks: list[Block] = []
    for kind, entries in (("table", record.tables), ("figure", record.figures)):
        for entry in entries:
            text = "\n".join(p for p in (entry.caption, entry.text) if p)
            _add(blocks, kind, text, object_id=entry.id, page=entry.page)
    return blocks


def _add(blocks: list[Block], kind: str, text: str, **where: Any) -> None:
    text = clean_text(text).strip()
    if text:
        section = where.pop("section", None)
        heading = clean_text(section).strip() if section else ""
        blocks.append(Block(type=kind, text=text, section=heading or None, **where))


def _reference(entry: str | Any) -> Reference:
    if not isinstance(entry, str):
        raw = clean_text(entry.raw or entry.title or "")
        return Reference(raw=raw, title=clean_text(entry.title) if entry.title else None, year=entry.year)
    from lit3r.corpus.references import parse_reference

    return parse_reference(clean_text(entry))


def _kind(value: Any) -> str:
    return {str: "a string", int: "a number", float: "a number", bool: "true/false", type(None): "null"}.get(
        type(value), type(value).__name__
    )
