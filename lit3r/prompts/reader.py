"""Reader prompts: stage 1 judges one candidate paper, stage 2 answers from the accepted papers, REPAIR retries.

Every reader call sends :data:`~lit3r.prompts.common.READER_SYSTEM` and one user message rendered here. Stage 2
may reason first (chain of thought) but must end with one ``<final_answer>`` block holding JSON; only that
block is read (:data:`FINAL_OPEN` / :data:`FINAL_CLOSE`).
"""

from __future__ import annotations

from collections.abc import Sequence

from lit3r.models import ABSTENTION, Chunk, Paper
from lit3r.prompts.common import (
    CITATION_RULES,
    AnswerSpec,
    chunk_block,
    evidence_block,
    fill,
    neutralise,
    paper_block,
    render_answer_spec,
)

FINAL_OPEN, FINAL_CLOSE = "<final_answer>", "</final_answer>"
"""The tags of the one block of a stage-2 reply that is parsed."""

READ_PAPER = """Stage 1 of answering a question: judge ONE candidate paper.

<question>
{question}
</question>

<answer_spec>
{answer_spec}
</answer_spec>

The candidate paper and its retrieved chunks:
{paper}

Policy:
1. The paper is relevant when its chunks hold evidence the answer needs (a value, a statement, a table row or \
a figure the question asks about), or when it is clearly a paper the question is about (its title, method name, \
venue and year match the question).
2. A paper that only discusses the topic in general, or only cites the paper the question is about, is not \
relevant.
3. "sufficient": true when this paper alone holds everything the answer needs.
4. "supporting_chunk_ids": the ids of the chunks that hold the evidence, copied exactly, most useful first; [] \
when the paper is not relevant.
5. "reason": one sentence on what the paper shows or lacks.
Judge only from the chunks shown, never from what you may know about the paper.

Reply with JSON: {{"relevant": true, "sufficient": false, "supporting_chunk_ids": ["..."], "reason": "..."}}"""
"""Stage-1 policy (Figure 8); placeholders: question, answer_spec, paper."""

SYNTHESIZE = (
    """Stage 2: answer the question from the papers accepted in stage 1.

<question>
{question}
</question>

<answer_spec>
{answer_spec}
</answer_spec>

{evidence}

Procedure:
1. Re-check each stage-1 note against the chunks; ignore chunks that do not bear on the question.
2. Collect the facts the answer needs: each is one value (with its unit, if any) stated by one chunk, with a \
short quote copied verbatim from that chunk.
3. Do every calculation or comparison explicitly, from the collected facts only.
4. Ground each requested component (each value, each option, each table cell) in its own fact.
5. When the evidence does not answer the question, set "sufficient" to false and "answer" to \""""
    + ABSTENTION
    + """\".

"""
    + CITATION_RULES
    + """

Output format:
{format_rules}

Think step by step first if that helps. Then end your reply with exactly one final block:
<final_answer>
{{"sufficient": true, "facts": [{{"value": "...", "unit": "...", "paper_id": "...", "chunk_id": "...", \
"quote": "..."}}], "calculations": [{{"description": "...", "expression": "...", "result": "..."}}], \
"answer": "... [chunk id]", "option": null, "table": null}}
</final_answer>
Fill "option" and "table" only when the output format asks for them. Only the JSON inside the final block is \
read; everything before it is discarded."""
)
"""Stage-2 synthesis; placeholders: question, answer_spec, evidence (accepted papers), format_rules."""

REPAIR = (
    """Your previous reply cannot be used:

<errors>
{errors}
</errors>

Answer again from the same evidence.

"""
    + CITATION_RULES
    + """
End your reply with exactly one <final_answer> block holding the corrected JSON object."""
)
"""One retry after an invalid stage-2 reply; placeholder: errors."""

FORMAT_RULES = {
    "freeform": '- "answer": the answer as short as the question allows (a value with its unit, a name, a '
    "phrase or one or two sentences), with citations.",
    "multiple_choice": '- "option": the letter of the one option the evidence supports, exactly one of: {letters}.',
    "table": '- "table": a list of rows, one object per row with exactly these keys: {columns}; cells hold plain '
    'values without citations. "answer" then summarises the table in one sentence, with citations.',
}
"""Per answer type, what the final block must hold; placeholders: letters (multiple_choice), columns (table)."""


def render_format_rules(spec: AnswerSpec | None) -> str:
    """The :data:`FORMAT_RULES` lines of the requested answer types (free form always included)."""
    spec = spec or AnswerSpec()
    lines = [FORMAT_RULES["freeform"]]
    if "multiple_choice" in spec.types and spec.options:
        lines.append(fill(FORMAT_RULES["multiple_choice"], letters=", ".join(spec.options)))
    if "table" in spec.types:
        columns = ", ".join(f'"{neutralise(c)}"' for c in spec.columns) or "the columns the question asks for"
        lines.append(fill(FORMAT_RULES["table"], columns=columns))
    return "\n".join(lines)


def render_chunk(chunk: Chunk, chars: int = 2000) -> str:
    """A chunk block with its type and locator (page, section, object id), text cut to ``chars``."""
    locator = chunk.locator
    return chunk_block(
        chunk.id,
        chunk.text[:chars],
        type=chunk.type,
        page=locator.page,
        section=locator.section,
        object=locator.object_id,
    )


def render_paper(paper: Paper, chunks: Sequence[Chunk], *, note: str | None = None, chars: int = 2000) -> str:
    """A paper block: id, venue, year, title, an optional stage-1 note, its chunks."""
    rendered = [render_chunk(c, chars) for c in chunks]
    return paper_block(paper.id, paper.title, rendered, venue=paper.venue, year=paper.year, note=note)


def render_read_paper(question: str, paper_text: str, spec: AnswerSpec | None = None) -> str:
    """The stage-1 prompt for one paper rendered by :func:`render_paper` (wrapped in evidence tags)."""
    return fill(
        READ_PAPER,
        question=neutralise(question),
        answer_spec=render_answer_spec(spec),
        paper=evidence_block([paper_text]),
    )


def render_synthesize(question: str, papers: Sequence[str], spec: AnswerSpec | None = None) -> str:
    """The stage-2 prompt over paper blocks rendered by :func:`render_paper`."""
    return fill(
        SYNTHESIZE,
        question=neutralise(question),
        answer_spec=render_answer_spec(spec),
        evidence=evidence_block(papers),
        format_rules=render_format_rules(spec),
    )


def render_repair(errors: Sequence[str]) -> str:
    """The repair prompt listing what was wrong, one error a line."""
    return fill(REPAIR, errors="\n".join(f"- {neutralise(e)}" for e in errors) or "- (unknown error)")
