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

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lit3r.corpus.parsers import ParseError
from lit3r.models import Block, Paper, ParsedPaper

_FLOAT_ID = re.compile(r"^\s*(Table|Figure|Fig\.)\s*([0-9]+|[IVX]+)\b", re.IGNORECASE)


def read_text(path: Path) -> str:
    """The file's text, gunzipped when it ends in ``.gz``; clear errors for unreadable files."""
    try:
        raw = path.read_bytes()
        if path.name.endswith(".gz"):
            raw = gzip.decompress(raw)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise ParseError(path, f"cannot read file: {exc}") from exc
    text = raw.decode("utf-8", errors="replace")
    if not text.strip():
        raise ParseError(path, "file is empty")
    return text


def iter_json_values(text: str, path: Path) -> Iterator[Any]:
    """Every top-level JSON value in ``text``: one document, or several one after another (JSON lines too)."""
    decoder = json.JSONDecoder()
    position, length = 0, len(text)
    while True:
        while position < length and text[position].isspace():
            position += 1
        if position >= length:
            return
        try:
            value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            line = text.count("\n", 0, exc.pos) + 1
            raise ParseError(path, f"malformed JSON at line {line}: {exc.msg}") from exc
        yield value


def read_qasper_records(path: Path) -> dict[str, dict[str, Any]]:
    """QASPER papers of a file as ``{paper_id: record in the original layout}`` (both layouts accepted)."""
    records: dict[str, dict[str, Any]] = {}
    for value in iter_json_values(read_text(path), path):
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
        name = section.get("section_name") or None
        for paragraph in section.get("paragraphs") or []:
            if paragraph and paragraph.strip():
                blocks.append(Block(type="text", text=paragraph.strip(), section=name))
    for item in record.get("figures_and_tables") or []:
        caption = (item.get("caption") or "").strip()
        if caption:
            kind, object_id = float_id(caption)
            blocks.append(Block(type=kind, text=caption, object_id=object_id, section=None))
    paper = Paper(
        id=str(paper_id),
        title=(record.get("title") or "").strip() or str(paper_id),
        abstract=(record.get("abstract") or "").strip(),
        source=source,
        source_format="qasper",
    )
    return ParsedPaper(paper=paper, blocks=blocks).with_spans()


def parse_qasper(path: Path) -> list[ParsedPaper]:
    """Every paper of a QASPER file (original or Hugging Face layout)."""
    records = read_qasper_records(path)
    return [to_parsed_paper(pid, record, str(path)) for pid, record in records.items()]
