"""An :class:`~lit3r.models.Answer` as a LitTraceQA submission row (``sample_submission.jsonl``'s format).

A row is ``{"query_id", "gold_papers", "evidence", "answer", "candidate_papers"}``:

* ``gold_papers``: the cited papers, in citation order (none when the agent abstained);
* ``evidence``: one item per cited chunk, ``{"paper_id", "source_type", "evidence_text_or_value", "locator"}``.
  The source type follows the chunk type (``text`` and ``title_abstract`` -> ``text_span``, ``table``,
  ``figure``, ``equation`` -> ``equation_algorithm``); the locator holds what is known of ``page``, ``section``,
  ``paragraph_id`` and the object id under the field the scorer reads (``table_id``, ``figure_id``,
  ``equation_id``);
* ``answer``: ``freeform.text`` (the answer without citation markers; empty on abstention), ``multiple_choice.gold``
  (the chosen option's letter: :attr:`Answer.option` holds the option's text, mapped back to its letter with the
  question's options) when options were given, and ``table.rows`` when the answer has a table;
* ``candidate_papers``: the final paper ranking, best first (scored as candidate recall@k).

:func:`answer_inputs` answers a LitTraceQA inputs file (``validation_inputs.jsonl``'s format: ``query_id``,
``question``, ``answer_types``, optionally ``options`` or ``answer.multiple_choice.options`` and ``table_schema``)
with an app :class:`~lit3r.app.session.Session` over the current corpus and writes one row per question as it is
answered (``lit3r eval littraceqa-answer``). A row has the answer parts its question asks for: a
multiple-choice question without options gets an empty letter, a table question without a table answer empty
rows, as in ``sample_submission.jsonl``.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lit3r.evals.answers import strip_markers
from lit3r.evals.jsonl import iter_jsonl
from lit3r.evals.littraceqa import SubmissionFormatError, validate_submission_row
from lit3r.models import Answer, Chunk, ChunkType, Citation
from lit3r.textutil import fold_key

if TYPE_CHECKING:
    from lit3r.app.session import Session

SOURCE_TYPES: dict[ChunkType, str] = {
    "title_abstract": "text_span",
    "text": "text_span",
    "table": "table",
    "figure": "figure",
    "equation": "equation_algorithm",
}
"""The LitTraceQA source type of each chunk type."""
OBJECT_FIELDS = {"table": "table_id", "figure": "figure_id", "equation_algorithm": "equation_id"}
"""The locator field that names the object, by source type."""

Options = Mapping[str, str] | Sequence[str]
"""Multiple-choice options: ``{letter: text}`` as LitTraceQA gives them, or a list lettered A, B, C, ..."""
ANSWER_TYPES = ("freeform", "multiple_choice", "table")
"""The answer types a LitTraceQA question may ask for."""


class ChunkIndex(Protocol):
    """What the conversion reads from an index: chunks by id (a :class:`~lit3r.index.corpus_index.CorpusIndex`)."""

    @property
    def chunk_by_id(self) -> Mapping[str, Chunk]: ...


def lettered(options: Options | None) -> dict[str, str]:
    """``{letter: option text}``: a mapping as given, a list lettered A, B, C, ... in order."""
    if not options:
        return {}
    if isinstance(options, Mapping):
        return {str(letter): str(text) for letter, text in options.items()}
    return {string.ascii_uppercase[i]: str(text) for i, text in enumerate(options)}


def option_letter(option: str | None, options: Options | None) -> str:
    """The letter of the chosen option given as its text (exact, then white space and case folded); "" if none.

    A value that is already one of the letters is returned as it is.
    """
    choices = lettered(options)
    if not option or not choices:
        return ""
    for letter, text in choices.items():
        if text == option:
            return letter
    folded = fold_key(option)
    for letter, text in choices.items():
        if fold_key(text) == folded:
            return letter
    return option.strip().upper() if option.strip().upper() in choices else ""


def source_type(citation: Citation, index: ChunkIndex) -> str:
    """The LitTraceQA source type of a cited chunk (by its type; by its object id when the chunk is unknown)."""
    chunk = index.chunk_by_id.get(citation.chunk_id)
    if chunk is not None:
        return SOURCE_TYPES[chunk.type]
    object_id = (citation.locator.object_id or "").lower()
    return next((kind for kind in ("table", "figure") if object_id.startswith(kind)), "text_span")


def evidence_item(citation: Citation, index: ChunkIndex) -> dict[str, Any]:
    """One evidence item for a citation: paper, source type, the quoted text and the locator."""
    kind = source_type(citation, index)
    where = citation.locator
    locator: dict[str, Any] = {"page": where.page, "section": where.section, "paragraph_id": where.paragraph}
    if kind in OBJECT_FIELDS:
        locator[OBJECT_FIELDS[kind]] = where.object_id
    return {
        "paper_id": citation.paper_id,
        "source_type": kind,
        "evidence_text_or_value": citation.quote,
        "locator": {key: value for key, value in locator.items() if value is not None},
    }


def freeform_text(answer: Answer) -> str:
    """The answer without citation markers, white space folded; "" when the agent abstained."""
    return strip_markers(answer.text) if answer.sufficient else ""


def to_littraceqa_row(
    query_id: str,
    answer: Answer,
    index: ChunkIndex,
    *,
    options: Options | None = None,
    answer_types: Sequence[str] = (),
) -> dict[str, Any]:
    """A LitTraceQA submission row for one answer (see the module docstring for the fields).

    Args:
        query_id: The question's ``query_id``.
        answer: The agent's answer.
        index: The index the answer cites (chunk types decide the evidence source types).
        options: The question's options (``{letter: text}`` or a list lettered A, B, ...); when given, the row has
            ``answer.multiple_choice.gold``.
        answer_types: The question's ``answer_types``: a multiple-choice or table part is written for each one
            asked for even when the answer has none (an empty letter, no rows).
    """
    cited = answer.citations if answer.sufficient else []
    items = [evidence_item(c, index) for c in cited]
    reply: dict[str, Any] = {"freeform": {"text": freeform_text(answer)}}
    if options or "multiple_choice" in answer_types:
        reply["multiple_choice"] = {"gold": option_letter(answer.option, options) if answer.sufficient else ""}
    if answer.table is not None and answer.sufficient:
        reply["table"] = {"rows": [dict(row) for row in answer.table]}
    elif "table" in answer_types:
        reply["table"] = {"rows": []}
    return {
        "query_id": query_id,
        "gold_papers": list(dict.fromkeys(c.paper_id for c in cited)),
        "evidence": _unique(items),
        "answer": reply,
        "candidate_papers": list(answer.candidate_papers),
    }


def question_options(row: Mapping[str, Any]) -> dict[str, str]:
    """The ``{letter: text}`` options of a LitTraceQA question row (``answer.multiple_choice.options``), or {}."""
    choice = (row.get("answer") or {}).get("multiple_choice") or {}
    return lettered(choice.get("options") or row.get("options"))


@dataclass(frozen=True)
class LitTraceQuestion:
    """One question of a LitTraceQA inputs file."""

    query_id: str
    question: str
    answer_types: list[str] = field(default_factory=lambda: ["freeform"])
    options: dict[str, str] = field(default_factory=dict)


def read_inputs(path: Path) -> list[LitTraceQuestion]:
    """The questions of a LitTraceQA inputs file; :class:`SubmissionFormatError` names the line and the field of
    the first malformed row (not an object, no ``query_id`` or ``question``, an unknown answer type, options that
    are not a mapping, a repeated ``query_id``) or says the file holds no question."""
    questions: list[LitTraceQuestion] = []
    seen: set[str] = set()
    for row, where in iter_jsonl(Path(path), SubmissionFormatError):
        if not isinstance(row, Mapping):
            raise SubmissionFormatError(f"{where}: expected a JSON object, found {type(row).__name__}")
        query_id, question = row.get("query_id"), row.get("question")
        if not isinstance(query_id, str) or not query_id.strip():
            raise SubmissionFormatError(f"{where}: missing or empty query_id")
        if not isinstance(question, str) or not question.strip():
            raise SubmissionFormatError(f"{where}: query {query_id!r} has no question text (field 'question')")
        types = row.get("answer_types") or ["freeform"]
        if not isinstance(types, list) or any(t not in ANSWER_TYPES for t in types):
            raise SubmissionFormatError(f"{where}: answer_types must be a list of {', '.join(ANSWER_TYPES)}")
        choice = (row.get("answer") or {}).get("multiple_choice") if isinstance(row.get("answer"), Mapping) else None
        options = row.get("options") or (choice.get("options") if isinstance(choice, Mapping) else None) or {}
        if not isinstance(options, Mapping | list):
            raise SubmissionFormatError(f"{where}: options must map letters to option texts")
        if query_id.strip() in seen:
            raise SubmissionFormatError(f"{where}: query_id {query_id!r} appears twice")
        seen.add(query_id.strip())
        questions.append(LitTraceQuestion(query_id.strip(), question, list(types), lettered(options)))
    if not questions:
        raise SubmissionFormatError(f"{path}: no questions")
    return questions


@dataclass
class AnsweredFile:
    """What :func:`answer_inputs` wrote: the file, the questions answered and how many abstained."""

    path: Path
    answered: int = 0
    abstained: int = 0
    traces: list[str] = field(default_factory=list)


def answer_inputs(
    session: Session,
    questions: Sequence[LitTraceQuestion],
    out: Path,
    *,
    planner: str | None = None,
    on_answer: Callable[[LitTraceQuestion, Answer], None] | None = None,
) -> AnsweredFile:
    """Answer each question with ``session`` over its corpus and write its submission row at once (a run that stops
    keeps the rows written so far); multiple-choice options go to the agent in letter order."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    written = AnsweredFile(out)
    with out.open("w", encoding="utf-8") as handle:
        for question in questions:
            options = list(question.options.values()) or None
            answer = session.ask(question.question, options=options, planner=planner)  # type: ignore[arg-type]
            row = to_littraceqa_row(
                question.query_id, answer, session.index, options=question.options, answer_types=question.answer_types
            )
            validate_submission_row(row, f"submission row for {question.query_id}")
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            handle.flush()
            written.answered += 1
            written.abstained += not answer.sufficient
            if answer.trace_path:
                written.traces.append(str(answer.trace_path))
            if on_answer is not None:
                on_answer(question, answer)
    return written


def write_submission(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    """Write submission rows as JSON lines, each checked with :func:`validate_submission_row` (no repeated ids)."""
    path = Path(path)
    seen: set[str] = set()
    lines = []
    for number, row in enumerate(rows, start=1):
        query_id = validate_submission_row(row, f"submission row {number}")
        if query_id in seen:
            raise SubmissionFormatError(f"submission row {number}: query_id {query_id!r} appears twice")
        seen.add(query_id)
        lines.append(json.dumps(row, ensure_ascii=False) + "\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _unique(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items without exact repeats, first occurrence kept."""
    seen: set[str] = set()
    out = []
    for item in items:
        key = json.dumps(item, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out
