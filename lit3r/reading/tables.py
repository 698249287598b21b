"""Superlative questions over a table: "Which method reached the highest recall?" answered by the row that does.

A sentence rarely says which row of a table is best; the table says it by its numbers. When the question asks
for an extreme (``highest``, ``best``, ``largest``, ``most``, ``top``; ``lowest``, ``smallest``, ``fewest``,
``least``, ``worst``) and an evidence table has a numeric column the question names (its header shares a term
with the question, or it is the table's only numeric column and the caption or header shares one), the answer is
the row holding that column's extreme, quoted verbatim with its citation (the cells as
:func:`lit3r.corpus.tables.read_table` reads them), provided the table names what a "which X" question asks for
(:func:`asked_term`: a table of rankings does not say which lambda was best). "Best" and "worst" read the column's
direction from its header: error, loss, latency, time, cost, perplexity and unsupported-claim columns are better
when lower. Nothing is computed that the row does not show, and a table without such a column is left to the
sentence reader.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from lit3r.answers.sentences import cell_number
from lit3r.corpus.tables import read_table
from lit3r.models import Answer, Chunk, TableCell
from lit3r.reading.quotes import Candidate
from lit3r.reading.scoring import query_terms, terms

_HIGH = re.compile(r"\b(?:highest|largest|greatest|most|maximum|top|higher)\b", re.IGNORECASE)
_LOW = re.compile(r"\b(?:lowest|smallest|fewest|least|minimum|lower)\b", re.IGNORECASE)
_BEST = re.compile(r"\b(?:best|strongest|better)\b", re.IGNORECASE)
_WORST = re.compile(r"\b(?:worst|weakest|worse)\b", re.IGNORECASE)
_LOWER_IS_BETTER = re.compile(
    r"\b(?:err\w*|loss|latency|time|seconds?|ms|cost|perplexity|ppl|unsupported|wer|cer|rmse|mae|mse)\b",
    re.IGNORECASE,
)


def wanted_extreme(question: str, header: str) -> str | None:
    """``"max"``, ``"min"`` or None: which end of a column headed ``header`` the question asks for."""
    if _HIGH.search(question):
        return "max"
    if _LOW.search(question):
        return "min"
    lower_better = bool(_LOWER_IS_BETTER.search(header))
    if _BEST.search(question):
        return "min" if lower_better else "max"
    if _WORST.search(question):
        return "max" if lower_better else "min"
    return None


_ASKED = re.compile(r"^\W*(?:(?:in|on|for|with|from|of)\s+)?(?:which|what)\s+([^\W\d_][\w-]*)", re.IGNORECASE)
_NOT_ASKED = frozenset({"is", "are", "was", "were", "does", "do", "did", "has", "have", "had", "the", "a", "an", "of"})


def asked_term(question: str) -> str | None:
    """The term of what a "which X ..." / "what X ..." question asks for ("Which lambda was best ...?" -> the stem
    of ``lambda``; "Which BM25 configuration ...?" -> ``bm25``), or None ("What is the best ...?")."""
    match = _ASKED.search(question)
    if match is None or match.group(1).lower() in _NOT_ASKED:
        return None
    found = list(terms([match.group(1)])[0])
    return found[0] if found else None


def asks_extreme(question: str) -> bool:
    """Whether the question asks for an extreme at all."""
    return any(p.search(question) for p in (_HIGH, _LOW, _BEST, _WORST))


def superlative_row(question: str, pool: Sequence[Candidate]) -> Candidate | None:
    """The table row of the evidence that holds the extreme the question asks for (see the module docstring)."""
    found = superlative_cell(question, pool)
    return found[0] if found else None


def superlative_cell(question: str, pool: Sequence[Candidate]) -> tuple[Candidate, str] | None:
    """The table row holding the extreme the question asks for, and the header of the column it was read from."""
    if not asks_extreme(question):
        return None
    query = query_terms(question)
    tables: dict[str, list[Candidate]] = {}
    for candidate in pool:
        if candidate.chunk.type == "table":
            tables.setdefault(candidate.chunk.id, []).append(candidate)
    for rows in tables.values():
        found = _extreme_row(question, query, rows)
        if found is not None:
            return found
    return None


def _extreme_row(question: str, query: set[str], units: list[Candidate]) -> tuple[Candidate, str] | None:
    """The row of one table's units that holds the asked-for extreme of the column the question names, and that
    column's header."""
    table = read_table(units[0].chunk.text)
    asked = asked_term(question)
    if asked is not None and asked not in terms([units[0].chunk.text])[0]:
        return None  # "Which lambda was best ...?": a table naming no lambda does not say which one was
    row_units = [u for u in units if " | " in u.text][1:]  # the header's unit first, then one per body row
    if len(table.rows) < 2 or len(row_units) != len(table.rows):
        return None
    header = table.header
    rows = [(u, cells) for u, cells in zip(row_units, table.rows, strict=True) if len(cells) == len(header)]
    numeric = [
        j
        for j in range(1, len(header))
        if sum(cell_number(cells[j]) is not None for _, cells in rows) >= max(2, len(rows) // 2 + 1)
    ]
    if not numeric:
        return None
    named = [j for j in numeric if set(terms([header[j]])[0]) & query]
    if len(named) == 1:
        column = named[0]
    elif not named and len(numeric) == 1 and set(terms([table.caption + " " + " ".join(header)])[0]) & query:
        column = numeric[0]
    else:
        return None
    direction = wanted_extreme(question, header[column])
    values = [(u, cell_number(cells[column])) for u, cells in rows]
    values = [(u, v) for u, v in values if v is not None]
    if direction is None or len(values) < 2:
        return None
    pick = max if direction == "max" else min
    best = pick(v for _, v in values)
    winners = [u for u, v in values if v == best]
    return (winners[0], header[column]) if len(winners) == 1 else None


_REFERENCE = re.compile(r"\bTable\s+(\d+)", re.IGNORECASE)


def referenced_tables(
    evidence: Sequence[Chunk], paper_chunks: Mapping[str, Sequence[Chunk]], question: str | None = None
) -> list[Chunk]:
    """The evidence with tables of its papers added: after each chunk that names a table of its paper ("Table 1
    gives ..."), that table's own chunk (the sentence points at the numbers, the table holds them); and when
    ``question`` asks for an extreme (:func:`asks_extreme`), every table of each paper read, after that paper's
    first chunk (the extreme is read off a table's column, :func:`superlative_row`). Figures are not added: their
    chunk is a caption, which restates what the sentence says. Each table is added once, in evidence order."""
    present = {c.id for c in evidence}
    every_table = question is not None and asks_extreme(question)
    seen_papers: set[str] = set()
    out: list[Chunk] = []
    for chunk in evidence:
        out.append(chunk)
        first_of_paper = chunk.paper_id not in seen_papers
        seen_papers.add(chunk.paper_id)
        if chunk.type in ("table", "figure"):
            continue
        names = {f"Table {n}" for n in _REFERENCE.findall(chunk.text)}
        for other in paper_chunks.get(chunk.paper_id, ()):
            if other.id in present or other.type != "table":
                continue
            if other.locator.object_id in names or (every_table and first_of_paper):
                out.append(other)
                present.add(other.id)
    return out


def row_cell(candidate: Candidate, column: str | None = None) -> TableCell | None:
    """The :class:`~lit3r.models.TableCell` of a quoted table row (its table, 1-based row, first cell; with
    ``column``, that column's value), or None when the unit is not a body row of a table chunk."""
    if candidate.chunk.type != "table" or " | " not in candidate.text:
        return None
    return _cell_of_line(candidate.chunk, candidate.unit.start, column)


def quote_cell(chunk: Chunk, quote: str) -> TableCell | None:
    """The :class:`~lit3r.models.TableCell` of a quote taken from one body row of a table chunk (an LLM reader's
    quote, or any citation's): the row, and the column when the quote is exactly one of the row's cells after the
    first; None when the chunk is no table, or the quote is in no body row or in several (a header, a caption, a
    value that repeats: which row is meant is not known)."""
    quote = quote.strip()
    if chunk.type != "table" or not quote or "\n" in quote:
        return None
    table = read_table(chunk.text)
    wanted = _folded(quote)
    rows = [r for r, cells in enumerate(table.rows, 1) if wanted in _folded(" | ".join(cells))]
    if len(rows) != 1:
        return None
    row, cells = rows[0], table.rows[rows[0] - 1]
    matches = [c for c in range(1, len(cells)) if _folded(cells[c]) == wanted]
    column = table.header[matches[0]] if len(matches) == 1 and matches[0] < len(table.header) else None
    return TableCell(
        table=chunk.locator.object_id or table.label,
        row=row,
        row_label=cells[0] if cells else None,
        column=column,
        value=table.cell(row, column) if column else None,
    )


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def _cell_of_line(chunk: Chunk, start: int, column: str | None) -> TableCell | None:
    """The cell of the row whose line starts at ``start`` in a table chunk's text (the header is line 0)."""
    table = read_table(chunk.text)
    row = sum(" | " in line for line in chunk.text[:start].split("\n"))
    if not 1 <= row <= len(table.rows):
        return None
    cells = table.rows[row - 1]
    value = table.cell(row, column) if column else None
    return TableCell(
        table=chunk.locator.object_id or table.label,
        row=row,
        row_label=cells[0] if cells else None,
        column=column if value is not None else None,
        value=value,
    )


def with_cells(answer: Answer, chosen: Sequence[Candidate], column: str | None = None) -> Answer:
    """The answer with each citation that quotes exactly one table row naming its cell (:func:`row_cell`)."""
    by_chunk: dict[str, list[Candidate]] = {}
    for candidate in chosen:
        by_chunk.setdefault(candidate.chunk.id, []).append(candidate)
    citations = []
    for citation in answer.citations:
        units = by_chunk.get(citation.chunk_id, [])
        cell = row_cell(units[0], column) if len(units) == 1 else None
        citations.append(citation.model_copy(update={"cell": cell}) if cell else citation)
    return answer.model_copy(update={"citations": citations})
