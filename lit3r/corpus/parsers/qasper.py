"""QASPER JSON, in the original layout and in the Hugging Face column layout.

Original (``qasper-*-v0.3.json``): one object ``{paper_id: {title, abstract,
full_text: [{section_name, paragraphs}], qas, figures_and_tables}}``.

Hugging Face: one record per paper ``{id, title, abstract, full_text:
{section_name: [...], paragraphs: [[...], ...]}, qas, figures_and_tables:
{caption: [...], file: [...]}}``, found as a JSON list, as several objects one
after another in one file, or one per line.

Both become the same :class:`ParsedPaper`: one text block per non-empty
paragraph under its section (nested QASPER headings ``A ::: B`` are kept as
written), and one table or figure block per caption, since QASPER keeps only
the captions of floats. Questions are not part of the corpus; :func:`read_qasper_records`
returns the raw records for the evaluation code.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from lit3r.corpus.parsers import ParseError, read_text
from lit3r.corpus.parsers.jsonstream import iter_json_values
from lit3r.corpus.textutil import clean_text
from lit3r.models import Block, Paper, ParsedPaper

_FLOAT_ID = re.compile(r"^\s*(Table|Figure|Fig\.)\s*([0-9]+|[IVX]+)\b", re.IGNORECASE)


def read_qasper_records(path: Path) -> dict[str, dict[str, Any]]:
    """QASPER papers of a file as ``{paper_id: record in the original layout}`` (both layouts accepted).

    Strict, as an evaluation needs the whole file: the first malformed or non-QASPER value is a ParseError.
    """
    records: dict[str, dict[str, Any]] = {}
    for entry in iter_json_values(read_text(path)):
        if entry.error:
            raise ParseError(path, f"{entry.where}: {entry.error}")
        value = entry.value
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, dict):
                raise ParseError(path, f"expected JSON objects of papers, found {type(item).__name__}")
            if is_hf_row(item):
                records[str(item["id"])] = hf_row_to_original(item, path)
            elif is_original_mapping(item):
                records.update({str(pid): rec for pid, rec in item.items()})
            else:
                raise ParseError(path, "not a QASPER file: papers need 'title' and 'full_text'")
    if not records:
        raise ParseError(path, "no papers found")
    return records


def is_hf_row(item: dict[str, Any]) -> bool:
    """A QASPER paper in the Hugging Face column layout."""
    return "id" in item and isinstance(item.get("full_text"), dict) and "paragraphs" in item["full_text"]


def is_original_mapping(item: dict[str, Any]) -> bool:
    """QASPER's original ``{paper_id: {title, full_text: [...]}}`` mapping."""
    return bool(item) and all(
        isinstance(v, dict) and isinstance(v.get("full_text"), list) and "title" in v for v in item.values()
    )


def looks_like_mapping(item: dict[str, Any]) -> bool:
    """A mapping of paper ids to QASPER papers, some of which may be damaged: every value is an object and
    some value has a 'title' or 'full_text' (a paper record has text values: its title, its id)."""
    values = list(item.values())
    return (
        bool(values)
        and all(isinstance(v, dict) for v in values)
        and any("full_text" in v or "title" in v for v in values)
    )


def hf_row_to_original(item: dict[str, Any], path: Path) -> dict[str, Any]:
    """Convert one Hugging Face row to the original layout (questions included)."""
    full_text = item.get("full_text") or {}
    if isinstance(full_text, dict):
        names = full_text.get("section_name") or []
        paragraphs = full_text.get("paragraphs") or []
        if len(names) != len(paragraphs):
            raise ParseError(path, f"paper {item.get('id')}: section_name and paragraphs differ in length")
        full_text = [{"section_name": n, "paragraphs": p} for n, p in zip(names, paragraphs, strict=True)]
    floats = item.get("figures_and_tables") or []
    if isinstance(floats, dict):
        floats = [
            {"caption": c, "file": f} for c, f in zip(floats.get("caption", []), floats.get("file", []), strict=False)
        ]
    return {
        "title": item.get("title", ""),
        "abstract": item.get("abstract", ""),
        "full_text": full_text,
        "figures_and_tables": floats,
        "qas": _hf_qas(item.get("qas")),
    }


def _hf_qas(qas: Any) -> list[dict[str, Any]]:
    """Hugging Face stores questions column-wise; turn them back into a list of question objects."""
    if not isinstance(qas, dict):
        return list(qas or [])
    out = []
    for i, question in enumerate(qas.get("question", [])):
        answers_col = qas.get("answers", [])[i] if i < len(qas.get("answers", [])) else {}
        answers = []
        for j, answer in enumerate(answers_col.get("answer", [])):
            answers.append(
                {"answer": answer, "annotation_id": (answers_col.get("annotation_id") or [None] * (j + 1))[j]}
            )
        out.append({"question": question, "question_id": qas["question_id"][i], "answers": answers})
    return out


def float_id(caption: str) -> tuple[str, str | None]:
    """The block type and object id a float caption names, e.g. ``('table', 'Table 2')``."""
    match = _FLOAT_ID.match(caption)
    if not match:
        return "figure", None
    kind = "table" if match.group(1).lower() == "table" else "figure"
    return kind, f"{'Table' if kind == 'table' else 'Figure'} {match.group(2)}"


def to_parsed_paper(paper_id: str, record: dict[str, Any], source: str) -> ParsedPaper:
    """One QASPER record (original layout) as a ParsedPaper."""
    blocks: list[Block] = []
    for section in record.get("full_text") or []:
        name = clean_text(section.get("section_name") or "").strip() or None
        for paragraph in section.get("paragraphs") or []:
            paragraph = clean_text(paragraph or "").strip()
            if paragraph:
                blocks.append(Block(type="text", text=paragraph, section=name))
    for item in record.get("figures_and_tables") or []:
        caption = clean_text(item.get("caption") or "").strip()
        if caption:
            kind, object_id = float_id(caption)
            blocks.append(Block(type=kind, text=caption, object_id=object_id, section=None))
    paper = Paper(
        id=str(paper_id),
        title=clean_text(record.get("title") or "").strip() or str(paper_id),
        abstract=clean_text(record.get("abstract") or "").strip(),
        source=source,
        source_format="qasper",
    )
    return ParsedPaper(paper=paper, blocks=blocks).with_spans()


def parse_qasper(path: Path) -> list[ParsedPaper]:
    """Every paper of a QASPER file (original or Hugging Face layout)."""
    records = read_qasper_records(path)
    return [to_parsed_paper(pid, record, str(path)) for pid, record in records.items()]
