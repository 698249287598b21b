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

from pydantic import ValidationError

from lit3r.corpus.parsers import ParseError, read_text
from lit3r.corpus.parsers.jsonstream import iter_json_values
from lit3r.corpus.parsers.schema import HFAnswers, HFFloats, HFQuestions, HFRow, QasperPaper, QasperQuestions, describe
from lit3r.corpus.textutil import clean_text
from lit3r.models import Block, Paper, ParsedPaper

_FLOAT_ID = re.compile(r"^\s*(Table|Figure|Fig\.)\s*([0-9]+|[IVX]+)\b", re.IGNORECASE)


def read_qasper_records(path: Path) -> dict[str, dict[str, Any]]:
    """QASPER papers of a file as ``{paper_id: record in the original layout}`` (both layouts accepted).

    Strict, as an evaluation needs the whole file: the first malformed or non-QASPER value is a ParseError.
    """
    return qasper_records_from_text(read_text(path), path)


def qasper_records_from_text(text: str, path: Path) -> dict[str, dict[str, Any]]:
    """:func:`read_qasper_records` of a file's decoded text."""
    records: dict[str, dict[str, Any]] = {}
    for entry in iter_json_values(text):
        if entry.error:
            raise ParseError(path, f"{entry.where}: {entry.error}")
        value = entry.value
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, dict):
                raise ParseError(path, f"expected JSON objects of papers, found {type(item).__name__}")
            if is_hf_row(item):
                records[str(item["id"])] = hf_row_to_original(item, path)
            elif is_original_mapping(item):
                records.update({str(pid): _checked(pid, rec, path) for pid, rec in item.items()})
            else:
                raise ParseError(path, "not a QASPER file: papers need 'title' and 'full_text'")
    if not records:
        raise ParseError(path, "no papers found")
    return records


def _checked(paper_id: Any, record: dict[str, Any], path: Path) -> dict[str, Any]:
    """An original-layout record whose paper and questions have the layout's shape (else a ParseError)."""
    try:
        QasperPaper.model_validate(record)
        QasperQuestions(qas=record.get("qas") or [])
    except ValidationError as exc:
        raise ParseError(path, f"paper {paper_id}: {describe(exc)}") from exc
    return record


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
    """Convert one Hugging Face row to the original layout (questions included); a ParseError names the
    paper and the field when the row does not have the layout's shape."""
    paper_id = item.get("id")
    try:
        row = HFRow.model_validate(item)
    except ValidationError as exc:
        raise ParseError(path, f"paper {paper_id}: {describe(exc)}") from exc
    qas = item.get("qas")
    try:
        questions = HFQuestions.model_validate(qas) if isinstance(qas, dict) else QasperQuestions(qas=qas or [])
    except ValidationError as exc:
        raise ParseError(path, f"paper {paper_id}: qas: {describe(exc)}") from exc
    names, paragraphs = row.full_text.section_name, row.full_text.paragraphs
    if len(names) != len(paragraphs):
        raise ParseError(path, f"paper {paper_id}: section_name and paragraphs differ in length")
    full_text = [
        {"section_name": n, "paragraphs": [p for p in paras if p is not None]}
        for n, paras in zip(names, paragraphs, strict=True)
    ]
    floats = row.figures_and_tables
    if isinstance(floats, HFFloats):
        captions = [{"caption": c, "file": f} for c, f in zip(floats.caption, floats.file, strict=False)]
    else:
        captions = [f.model_dump() for f in floats or []]
    return {
        "title": row.title,
        "abstract": row.abstract or "",
        "full_text": full_text,
        "figures_and_tables": captions,
        "qas": _hf_qas(questions, path, paper_id),
    }


def _hf_qas(questions: HFQuestions | QasperQuestions, path: Path, paper_id: Any) -> list[dict[str, Any]]:
    """Hugging Face stores questions column-wise; turn them back into a list of question objects."""
    if isinstance(questions, QasperQuestions):
        return [q.model_dump() for q in questions.qas]
    if len(questions.question_id) < len(questions.question):
        raise ParseError(path, f"paper {paper_id}: fewer question_id than question entries")
    out = []
    for i, question in enumerate(questions.question):
        column = questions.answers[i] if i < len(questions.answers) else HFAnswers()
        ids = column.annotation_id + [None] * len(column.answer)
        answers = [{"answer": answer, "annotation_id": ids[j]} for j, answer in enumerate(column.answer)]
        out.append({"question": question, "question_id": questions.question_id[i], "answers": answers})
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
        name = clean_text(section.get("section_name") or "") or None  # kept as written, spaces too
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
