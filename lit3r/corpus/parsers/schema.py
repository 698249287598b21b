"""The shapes of paper records in JSON files, checked field by field before a paper is built.

Validation with pydantic turns a wrong-typed field (``"sections": "intro"``,
``"paragraphs": [1, {"a": 2}]``) into a message that names the field, instead of
an ``AttributeError`` deep in a parser. The models are lenient where files in the
wild differ: unknown fields are ignored, numbers are accepted where text is
expected, ``null`` is accepted wherever a field is optional.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

T = TypeVar("T")


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True)


def _no_nulls(value: Any) -> Any:
    """A list with its ``null`` entries dropped (QASPER and S2ORC dumps hold some); ``null`` itself: empty."""
    if value is None:
        return []
    return [item for item in value if item is not None] if isinstance(value, list) else value


Items = Annotated[list[T], BeforeValidator(_no_nulls)]
"""A list field where ``null`` and ``null`` entries mean nothing."""


class QasperSection(_Lenient):
    section_name: str | None = None
    paragraphs: Items[str] = Field(default_factory=list)


class QasperFloat(_Lenient):
    caption: str | None = None
    file: str | None = None


class QasperPaper(_Lenient):
    """One paper of QASPER's original layout (the value under its paper id)."""

    title: str
    abstract: str | None = None
    full_text: list[QasperSection]
    figures_and_tables: Items[QasperFloat] = Field(default_factory=list)


class QasperQuestion(_Lenient):
    """One question of QASPER's original layout (only what the evaluations read is checked)."""

    question: str
    question_id: str
    answers: Items[dict[str, Any]] = Field(default_factory=list)


class QasperQuestions(_Lenient):
    qas: Items[QasperQuestion] = Field(default_factory=list)


class HFAnswers(_Lenient):
    answer: Items[dict[str, Any]] = Field(default_factory=list)
    annotation_id: list[str | None] = Field(default_factory=list)


class HFQuestions(_Lenient):
    """QASPER's questions in the Hugging Face column layout."""

    question: list[str] = Field(default_factory=list)
    question_id: list[str] = Field(default_factory=list)
    answers: list[HFAnswers] = Field(default_factory=list)


class HFFullText(_Lenient):
    section_name: list[str | None] = Field(default_factory=list)
    paragraphs: list[list[str | None]]


class HFFloats(_Lenient):
    caption: list[str | None] = Field(default_factory=list)
    file: list[str | None] = Field(default_factory=list)


class HFRow(_Lenient):
    """One paper of the Hugging Face column layout."""

    id: str
    title: str
    abstract: str | None = None
    full_text: HFFullText
    figures_and_tables: HFFloats | list[QasperFloat] | None = None


class Author(_Lenient):
    name: str


class RecordSection(_Lenient):
    heading: str | None = None
    section: str | None = None
    section_name: str | None = None
    paragraphs: Items[str] = Field(default_factory=list)


class BodyEntry(_Lenient):
    section: str | None = None
    text: str | None = None


class FloatEntry(_Lenient):
    id: str | None = None
    caption: str | None = None
    text: str | None = None
    page: int | None = None


class ReferenceEntry(_Lenient):
    title: str | None = None
    raw: str | None = None
    year: int | None = None


class PaperRecord(_Lenient):
    """A generic (S2ORC-like) paper record; see :mod:`lit3r.corpus.parsers.records`."""

    id: str | None = None
    paper_id: str | None = None
    title: str | None = None
    abstract: str | None = None
    venue: str | None = None
    year: int | str | None = None
    authors: Items[str | Author] = Field(default_factory=list)
    sections: Items[RecordSection] = Field(default_factory=list)
    body_text: Items[BodyEntry] = Field(default_factory=list)
    text: str | None = None
    full_text: str | None = None
    tables: Items[FloatEntry] = Field(default_factory=list)
    figures: Items[FloatEntry] = Field(default_factory=list)
    references: Items[str | ReferenceEntry] = Field(default_factory=list)


def describe(exc: ValidationError) -> str:
    """The first problem of a validation error as ``field 'sections[0].paragraphs': Input should be a valid list``."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    where = _location(first["loc"])
    others = {_location(e["loc"]) for e in errors} - {where}  # a union member's errors share one field
    more = f" (and {len(others)} more)" if others else ""
    if first["type"] == "missing":
        return f"no '{where}' field{more}"
    return f"field '{where}': {first['msg']}{more}"


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part in ("str", "int", "list[...]", "Author", "ReferenceEntry", "HFFloats") or "[" in str(part):
            continue  # the name of a union member pydantic tried, not a field
        else:
            text += f".{part}" if text else str(part)
    return text or "record"
