"""Retriever prompts (seed Appendix C, Figures 3-6): query decomposition, evidence verification, HyDE.

Every retriever call sends :data:`~lit3r.prompts.common.RETRIEVER_SYSTEM` and one user message rendered here.
When the question names a venue and a year, :data:`VENUE_YEAR_LINE` goes into the decomposition prompt: before
the paragraph about the local index in round 1, after it in later rounds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from lit3r.models import Chunk, Paper, PaperEvidence
from lit3r.prompts.common import (
    AnswerSpec,
    chunk_block,
    evidence_block,
    fill,
    neutralise,
    paper_block,
    render_answer_spec,
)

MISSING_FILLER = "(No specific note from the LLM. Search from a different angle.)"
"""Stands in for the verifier's missing note when it is empty."""

KNOWN_VENUES = (
    "ACL",
    "EMNLP",
    "NAACL",
    "EACL",
    "AACL",
    "COLING",
    "TACL",
    "CoNLL",
    "LREC",
    "COLM",
    "NeurIPS",
    "ICML",
    "ICLR",
    "AISTATS",
    "UAI",
    "CVPR",
    "ICCV",
    "ECCV",
    "WACV",
    "BMVC",
    "AAAI",
    "IJCAI",
    "KDD",
    "SIGIR",
    "WWW",
    "CoRL",
    "TMLR",
)
"""Venue names recognised in questions, spelt as the corpus tags spell them."""

LOCAL_INDEX = """The subqueries run against a local index of paper chunks (titles with abstracts, body text, \
tables, figure captions, equations) with keyword (BM25) and dense retrieval. Spell names, datasets, metrics and \
numbers exactly as a paper would write them; use no search operators, quotes or boolean syntax."""

VENUE_YEAR_LINE = """The question is about {tag} papers: begin every subquery with the tag {tag}, exactly as \
written; each paper's title-and-abstract chunk starts with such a tag."""
"""Inserted into the decomposition prompt when the question names a venue and a year; placeholder: tag."""

DECOMPOSE_FIRST = (
    """Break the question below into search subqueries for the first retrieval round.

<question>
{question}
</question>

Write exactly {limit} subqueries. Each targets one thing the answer needs: a named method, model, dataset, \
metric, table or figure, or a paper the question describes without naming it. Prefer the distinctive terms a \
paper would use about itself; keep each subquery short (under 20 words) and self-contained.

{venue_year}"""
    + LOCAL_INDEX
    + """

Reply with JSON: {{"subqueries": ["...", "..."]}}"""
)
"""Round-1 decomposition (Figure 3); placeholders: question, limit, venue_year (a line and a blank line, or "")."""

DECOMPOSE_LATER = (
    """Earlier retrieval rounds for the question below issued the subqueries listed, and the evidence verifier \
reports what is still missing.

<question>
{question}
</question>

<previous_subqueries>
{previous}
</previous_subqueries>

<missing>
{missing}
</missing>

Write at most {limit} new subqueries that target the missing information. Do not repeat or rephrase an earlier \
subquery: try other names, synonyms, the terms a paper would use, or the table, figure or section that would \
hold the answer. If nothing new is worth searching, reply with an empty list.

"""
    + LOCAL_INDEX
    + """
{venue_year}
Reply with JSON: {{"subqueries": ["...", "..."]}}"""
)
"""Later-round decomposition (Figure 4); placeholders: question, previous, missing, limit, venue_year."""

VERIFY = """Decide whether the retrieved evidence below is enough to answer the question, and which papers \
hold evidence for it.

<question>
{question}
</question>

<answer_spec>
{answer_spec}
</answer_spec>

The top papers of the retrieval pool, each with its best chunks:
{listing}

Report:
- "papers_with_evidence": ids of the papers whose chunks hold evidence for the question (a fact the answer \
needs, or a clear sign the paper is one the question is about), best first, ids exactly as listed.
- "sufficient": true only when these chunks together hold everything the answer needs: every requested value, \
every paper the question asks for, every column of a requested table, enough to choose among the options.
- "missing": when not sufficient, what is still missing, specific enough to search for (names, datasets, \
metrics, tables, figures); "" when sufficient.

Reply with JSON: {{"papers_with_evidence": ["..."], "sufficient": false, "missing": "..."}}"""
"""Evidence verification (Figure 5); placeholders: question, answer_spec, listing."""

HYDE = """Write a short passage (80 to 150 words) in the style of a scientific paper that would answer the \
query below, using the technical vocabulary such a paper would use. Invent plausible details where needed: the \
passage is only used as a search query, never shown as an answer.

<query>
{query}
</query>

Reply with JSON: {{"passage": "..."}}"""
"""Hypothetical document for a short query (HyDE); placeholder: query."""

_YEAR = r"((?:19|20)\d{2})"


def _venue_pattern(venues: Iterable[str]) -> str:
    """An alternation of ``venues``, longest first, as one regex group."""
    return "(" + "|".join(re.escape(v) for v in sorted(venues, key=len, reverse=True)) + ")"


def venue_year_tag(question: str, venues: Iterable[str] = KNOWN_VENUES) -> str | None:
    """``[VENUE YEAR]`` when the question names a known venue and a year, else ``None``.

    Adjacent forms come first ('ACL 2025', 'ACL-2025', "ACL'25", '2025 ACL'); otherwise one venue and one year
    anywhere in the question ('NAACL papers from 2025'). The venue is spelt as in ``venues``.
    """
    canonical = {v.lower(): v for v in venues}
    if not canonical:
        return None
    venue = _venue_pattern(canonical.values())
    after = re.search(rf"\b{venue}\s*[-'’]?\s*{_YEAR}\b|\b{venue}\s*['’](\d{{2}})\b", question, re.IGNORECASE)
    if after:
        name, year = after.group(1) or after.group(3), after.group(2) or f"20{after.group(4)}"
        return f"[{canonical[name.lower()]} {year}]"
    before = re.search(rf"\b{_YEAR}\s+{venue}\b", question, re.IGNORECASE)
    if before:
        return f"[{canonical[before.group(2).lower()]} {before.group(1)}]"
    named = {canonical[m.lower()] for m in re.findall(rf"\b{venue}\b", question, re.IGNORECASE)}
    years = set(re.findall(rf"\b{_YEAR}\b", question))
    if len(named) == 1 and len(years) == 1:  # 'NAACL papers published in 2025'
        return f"[{named.pop()} {years.pop()}]"
    return None


def render_venue_year_line(tag: str) -> str:
    """:data:`VENUE_YEAR_LINE` for ``tag`` (e.g. '[ACL 2025]')."""
    return fill(VENUE_YEAR_LINE, tag=tag)


def render_decompose_first(question: str, limit: int, tag: str | None = None) -> str:
    """The round-1 decomposition prompt; the venue-year line goes before the local-index paragraph."""
    venue_year = f"{render_venue_year_line(tag)}\n\n" if tag else ""
    return fill(DECOMPOSE_FIRST, question=neutralise(question), limit=limit, venue_year=venue_year)


def render_decompose_later(
    question: str, previous: Sequence[str], missing: str, limit: int, tag: str | None = None
) -> str:
    """The later-round prompt; an empty ``missing`` becomes :data:`MISSING_FILLER`; the venue-year line goes
    after the local-index paragraph."""
    return fill(
        DECOMPOSE_LATER,
        question=neutralise(question),
        previous="\n".join(f"- {neutralise(q)}" for q in previous) or "(none)",
        missing=neutralise(missing.strip()) or MISSING_FILLER,
        limit=limit,
        venue_year=f"\n{render_venue_year_line(tag)}\n" if tag else "",
    )


def render_decompose(
    question: str, previous: Sequence[str], missing: str, limit: int, venues: Iterable[str] = KNOWN_VENUES
) -> str:
    """The decomposition prompt of the round ``previous`` implies: round 1 when nothing was asked yet."""
    tag = venue_year_tag(question, venues)
    if not previous:
        return render_decompose_first(question, limit, tag)
    return render_decompose_later(question, previous, missing, limit, tag)


def render_listing(
    papers: Mapping[str, Paper],
    evidence: Sequence[PaperEvidence],
    chunks: Mapping[str, Chunk] | None = None,
    *,
    chunk_chars: int = 1800,
    max_papers: int = 20,
    max_chunks: int = 2,
) -> str:
    """The verifier's ``{listing}``: up to ``max_papers`` papers (id, title, venue, year), each with up to
    ``max_chunks`` chunks (id, type, page, section, object id from ``chunks`` when known) cut to
    ``chunk_chars`` characters, all inside one ``<evidence>`` block."""
    chunks = chunks or {}
    blocks = []
    for item in evidence[:max_papers]:
        paper = papers.get(item.paper_id)
        rendered = []
        for shown in item.chunks[:max_chunks]:
            chunk = chunks.get(shown.chunk_id)
            locator = chunk.locator if chunk else None
            rendered.append(
                chunk_block(
                    shown.chunk_id,
                    shown.text[:chunk_chars],
                    type=chunk.type if chunk else None,
                    page=locator.page if locator else None,
                    section=locator.section if locator else None,
                    object=locator.object_id if locator else None,
                )
            )
        title = item.title or (paper.title if paper else "")
        venue, year = (paper.venue, paper.year) if paper else (None, None)
        blocks.append(paper_block(item.paper_id, title, rendered, venue=venue, year=year))
    return evidence_block(blocks)


def render_verify(question: str, listing: str, spec: AnswerSpec | None = None) -> str:
    """The verification prompt around a :func:`render_listing` listing."""
    return fill(VERIFY, question=neutralise(question), answer_spec=render_answer_spec(spec), listing=listing)


def render_hyde(query: str) -> str:
    """The HyDE prompt for ``query``."""
    return fill(HYDE, query=neutralise(query))
