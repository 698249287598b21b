"""JSON and JSON-lines files of papers: QASPER (both layouts) or generic paper records.

A file may hold one JSON document, a list, several documents one after another
or one per line (``.jsonl``), optionally gzipped. Each value is recognised as:

* QASPER's original mapping ``{paper_id: {title, abstract, full_text, ...}}``;
* a QASPER row in the Hugging Face layout (``full_text`` with column lists);
* a generic paper record (S2ORC-like)::

    {"id": "p1", "title": "...", "abstract": "...", "venue": "ACL", "year": 2024,
     "authors": ["A. Author" | {"name": ...}],
     "sections": [{"heading": "1 Introduction", "paragraphs": ["...", "..."]}],
     "body_text": [{"section": "...", "text": "..."}],     # S2ORC style, instead of sections
     "text": "plain body text",                            # or this
     "tables": [{"id": "Table 1", "caption": "...", "text": "| a | b |"}],
     "figures": [{"id": "Figure 1", "caption": "..."}],
     "references": ["raw reference string" | {"title": ..., "raw": ..., "year": ...}]}

  Only ``title`` is required, with at least an abstract or some body text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lit3r.corpus.parsers import ParseError
from lit3r.corpus.parsers.qasper import (
    hf_row_to_original,
    is_hf_row,
    is_original_mapping,
    iter_json_values,
    read_text,
    to_parsed_paper,
)
from lit3r.models import Block, Paper, ParsedPaper, Reference


def parse_records(path: Path) -> list[ParsedPaper]:
    """Every paper in a JSON or JSON-lines file."""
    papers: list[ParsedPaper] = []
    for number, value in enumerate(iter_json_values(read_text(path), path), start=1):
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, dict):
                raise ParseError(path, f"record {number}: expected a JSON object, found {type(item).__name__}")
            if is_original_mapping(item):
                papers.extend(to_parsed_paper(pid, rec, str(path)) for pid, rec in item.items())
            elif is_hf_row(item):
                papers.append(to_parsed_paper(str(item["id"]), hf_row_to_original(item, path), str(path)))
            else:
                papers.append(_generic(item, path, number))
    if not papers:
        raise ParseError(path, "no papers found")
    return papers


def _generic(item: dict[str, Any], path: Path, number: int) -> ParsedPaper:
    title = str(item.get("title") or "").strip()
    if not title:
        raise ParseError(path, f"record {number}: a paper needs a 'title'")
    paper_id = str(item.get("id") or item.get("paper_id") or "").strip()
    if not paper_id:
        raise ParseError(path, f"record {number} ({title[:40]!r}): a paper needs an 'id'")
    blocks = _body_blocks(item) + _float_blocks(item)
    year = item.get("year")
    paper = Paper(
        id=paper_id,
        title=title,
        abstract=str(item.get("abstract") or "").strip(),
        venue=item.get("venue") or None,
        year=int(year) if isinstance(year, int | str) and str(year).isdigit() else None,
        authors=[a["name"] if isinstance(a, dict) else str(a) for a in item.get("authors") or []],
        references=[_reference(r) for r in item.get("references") or []],
        source=str(path),
        source_format="records",
    )
    parsed = ParsedPaper(paper=paper, blocks=blocks).with_spans()
    if parsed.is_empty:
        raise ParseError(path, f"record {number} ({paper_id}): no abstract and no body text")
    return parsed


def _body_blocks(item: dict[str, Any]) -> list[Block]:
    blocks: list[Block] = []
    for section in item.get("sections") or []:
        heading = section.get("heading") or section.get("section") or section.get("section_name")
        for paragraph in section.get("paragraphs") or []:
            if paragraph and str(paragraph).strip():
                blocks.append(Block(type="text", text=str(paragraph).strip(), section=heading))
    for entry in item.get("body_text") or []:
        if (entry.get("text") or "").strip():
            blocks.append(Block(type="text", text=entry["text"].strip(), section=entry.get("section")))
    text = item.get("text") or (item.get("full_text") if isinstance(item.get("full_text"), str) else None)
    for paragraph in str(text or "").split("\n\n"):
        if paragraph.strip():
            blocks.append(Block(type="text", text=paragraph.strip()))
    return blocks


def _float_blocks(item: dict[str, Any]) -> list[Block]:
    blocks = []
    for kind, key in (("table", "tables"), ("figure", "figures")):
        for entry in item.get(key) or []:
            text = "\n".join(p for p in (entry.get("caption"), entry.get("text")) if p)
            if text.strip():
                blocks.append(Block(type=kind, text=text.strip(), object_id=entry.get("id"), page=entry.get("page")))
    return blocks


def _reference(entry: Any) -> Reference:
    if isinstance(entry, dict):
        raw = entry.get("raw") or entry.get("title") or ""
        year = entry.get("year")
        return Reference(raw=raw, title=entry.get("title"), year=year if isinstance(year, int) else None)
    from lit3r.corpus.references import parse_reference

    return parse_reference(str(entry))
