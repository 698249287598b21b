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
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from lit3r.evals.answers import strip_markers
from lit3r.evals.littraceqa import SubmissionFormatError, validate_submission_row
from lit3r.models import Answer, Chunk, ChunkType, Citation
from lit3r.textutil import fold_key

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
) -> dict[str, Any]:
    """A LitTraceQA submission row for one answer (see the module docstring for the fields).

    Args:
        query_id: The question's ``query_id``.
        answer: The agent's answer.
        index: The index the answer cites (chunk types decide the evidence source types).
        options: The question's options (``{letter: text}`` or a list lettered A, B, ...); when given, the row has
            ``answer.multiple_choice.gold``.
    """
    cited = answer.citations if answer.sufficient else []
    items = [evidence_item(c, index) for c in cited]
    reply: dict[str, Any] = {"freeform": {"text": freeform_text(answer)}}
    if options:
        reply["multiple_choice"] = {"gold": option_letter(answer.option, options) if answer.sufficient else ""}
    if answer.table is not None and answer.sufficient:
        reply["table"] = {"rows": [dict(row) for row in answer.table]}
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
