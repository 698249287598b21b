"""Domain models: what a paper, a parsed block, a chunk and its locator are.

Every stage passes these plain pydantic objects along: parsers produce
:class:`ParsedPaper`, chunkers turn its blocks into :class:`Chunk` objects, and
indexes and tools return chunks whose :class:`Locator` points back at the exact
place in the paper (page, section, paragraph, table or figure, character span).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field, computed_field

ChunkType = Literal["title_abstract", "text", "table", "figure", "equation"]
"""The five chunk types of the Lit3R design."""

BlockType = Literal["text", "table", "figure", "equation"]
"""What a parser can find in a paper's body (title and abstract live on Paper)."""

CHUNK_TYPES: tuple[ChunkType, ...] = ("title_abstract", "text", "table", "figure", "equation")

BLOCK_SEPARATOR = "\n\n"
"""How blocks are joined into a paper's canonical text, which spans index into."""


class Reference(BaseModel):
    """One entry of a paper's reference list."""

    raw: str = Field(description="The reference as it appears in the paper.")
    title: str | None = Field(default=None, description="The cited work's title, when it could be parsed.")
    authors: list[str] = Field(default_factory=list, description="Author names, when parsed.")
    year: int | None = Field(default=None, description="Publication year, when parsed.")
    resolved_id: str | None = Field(
        default=None,
        description="Id of the corpus paper this reference was matched to (by DOI or arXiv id, else normalised title).",
    )
    doi: str | None = Field(default=None, description="The DOI the reference gives, normalised (lowercase, bare).")
    arxiv_id: str | None = Field(default=None, description="The arXiv id the reference gives, without version.")


class Paper(BaseModel):
    """A paper's bibliographic record."""

    id: str = Field(description="Corpus-unique paper id (QASPER/arXiv id, front-matter id or file-derived slug).")
    title: str = Field(description="Title as given by the source.")
    abstract: str = Field(default="", description="Abstract text; empty when the source has none.")
    venue: str | None = Field(default=None, description="Venue, e.g. 'ACL'.")
    year: int | None = Field(default=None, description="Publication year.")
    authors: list[str] = Field(default_factory=list, description="Author names in order.")
    references: list[Reference] = Field(default_factory=list, description="The parsed reference list.")
    source: str | None = Field(default=None, description="File the paper was ingested from.")
    source_format: str | None = Field(default=None, description="Parser that produced it: qasper, pdf, markdown, ...")
    doi: str | None = Field(default=None, description="DOI, normalised (lowercase, no 'doi:' or doi.org prefix).")
    arxiv_id: str | None = Field(default=None, description="arXiv id without version ('2401.01234', 'hep-th/9901001').")
    citation_key: str | None = Field(
        default=None, description="Citation key from the library (BibTeX key, Better BibTeX or Zotero citation key)."
    )
    entry_type: str | None = Field(default=None, description="BibTeX entry type from the library, e.g. 'article'.")
    library: str | None = Field(
        default=None,
        description="The library the metadata came from, e.g. 'zotero:/home/ada/Zotero' or 'bibtex:/x.bib'.",
    )
    library_key: str | None = Field(default=None, description="The item's key in that library (Zotero item key).")
    collections: list[str] = Field(
        default_factory=list, description="Library collections holding the paper, as paths ('Thesis/Chapter 2')."
    )
    tags: list[str] = Field(default_factory=list, description="Library tags (keywords) of the paper.")
    url: str | None = Field(default=None, description="The paper's URL from the library.")

    @property
    def venue_tag(self) -> str | None:
        """The ``[VENUE YEAR]`` tag the title-abstract chunk starts with, when known."""
        parts = [p for p in (self.venue, str(self.year) if self.year else None) if p]
        return f"[{' '.join(parts)}]" if parts else None

    @property
    def resolved_references(self) -> list[str]:
        """Ids of corpus papers this paper cites, in reference-list order, without duplicates."""
        return list(dict.fromkeys(r.resolved_id for r in self.references if r.resolved_id))


class Locator(BaseModel):
    """Where a chunk sits in its paper. Unknown parts stay ``None``."""

    page: int | None = Field(default=None, description="1-based page number (PDF sources).")
    section: str | None = Field(default=None, description="Heading of the section the text is under.")
    paragraph: int | None = Field(
        default=None, description="0-based index of the chunk's first paragraph among the paper's body blocks."
    )
    paragraph_end: int | None = Field(default=None, description="Index of the chunk's last paragraph (inclusive).")
    object_id: str | None = Field(default=None, description="Table or figure id, e.g. 'Table 2' or 'Figure 1'.")
    char_start: int | None = Field(default=None, description="Start offset in the paper's canonical text.")
    char_end: int | None = Field(default=None, description="End offset (exclusive) in the paper's canonical text.")

    def describe(self) -> str:
        """A short human-readable rendering, e.g. ``p. 3 · §2 Method · Table 1``."""
        parts = []
        if self.page is not None:
            parts.append(f"p. {self.page}")
        if self.section:
            parts.append(f"§ {self.section}")
        if self.object_id:
            parts.append(self.object_id)
        if self.paragraph is not None:
            end = f"-{self.paragraph_end}" if self.paragraph_end not in (None, self.paragraph) else ""
            parts.append(f"¶ {self.paragraph}{end}")
        if self.char_start is not None:
            parts.append(f"chars {self.char_start}-{self.char_end}")
        return " · ".join(parts)


class Block(BaseModel):
    """A structural unit a parser found in a paper's body: a paragraph, table, figure caption or equation."""

    type: BlockType = Field(description="What the block holds.")
    text: str = Field(description="The block's text (tables as pipe rows, figures as their caption).")
    page: int | None = Field(default=None, description="1-based page the block starts on.")
    section: str | None = Field(default=None, description="Heading the block sits under.")
    object_id: str | None = Field(default=None, description="Table or figure id, when the block is one.")
    char_start: int | None = Field(default=None, description="Start offset in the paper's canonical text.")
    char_end: int | None = Field(default=None, description="End offset (exclusive) in the canonical text.")


class ParsedPaper(BaseModel):
    """A paper and its body blocks, as one parser produced them: the input of every chunker."""

    paper: Paper
    blocks: list[Block] = Field(default_factory=list)

    def canonical_text(self) -> str:
        """Title, abstract and every block joined by blank lines; spans index into this."""
        return BLOCK_SEPARATOR.join([self.paper.title, self.paper.abstract, *(b.text for b in self.blocks)])

    def with_spans(self) -> ParsedPaper:
        """Return a copy whose blocks carry their character spans in :meth:`canonical_text`."""
        offset = len(self.paper.title) + len(BLOCK_SEPARATOR) + len(self.paper.abstract) + len(BLOCK_SEPARATOR)
        blocks = []
        for block in self.blocks:
            blocks.append(block.model_copy(update={"char_start": offset, "char_end": offset + len(block.text)}))
            offset += len(block.text) + len(BLOCK_SEPARATOR)
        return self.model_copy(update={"blocks": blocks})

    @property
    def is_empty(self) -> bool:
        """True when the paper holds no text at all beyond its title."""
        return not self.paper.abstract.strip() and not any(b.text.strip() for b in self.blocks)


class Chunk(BaseModel):
    """A retrievable unit of a paper, with its locator."""

    id: str = Field(description="Corpus-unique chunk id: '<paper id>::c<ordinal>'.")
    paper_id: str = Field(description="Id of the paper it belongs to.")
    type: ChunkType = Field(description="One of the five chunk types.")
    text: str = Field(description="The text that is indexed and shown (headers included for the QASPER chunker).")
    locator: Locator = Field(default_factory=Locator)


def chunk_id(paper_id: str, ordinal: int) -> str:
    """The id of the ``ordinal``-th chunk of a paper."""
    return f"{paper_id}::c{ordinal:04d}"


class EvidenceChunk(BaseModel):
    """One pool chunk as the verifier sees it."""

    chunk_id: str = Field(description="The chunk's id.")
    score: float = Field(description="The chunk's pool score.")
    text: str = Field(description="The chunk text, cut to verify_chunk_chars.")


class PaperEvidence(BaseModel):
    """One of the top pool papers with its best chunks (seed: top 20 papers, 2 chunks, 1,800 characters)."""

    paper_id: str = Field(description="The paper's id.")
    title: str = Field(description="The paper's title.")
    chunks: list[EvidenceChunk] = Field(description="Its best pool chunks, best first.")


ABSTENTION = "Insufficient evidence: the indexed papers do not contain a passage that answers this question."
"""The text of every abstaining answer, whichever reader abstained (the one sentinel callers may test for)."""


class TableCell(BaseModel):
    """The row (and, when one value is meant, the column) of a table chunk that a citation quotes."""

    table: str | None = Field(default=None, description="The table's id, e.g. 'Table 1'.")
    row: int = Field(ge=1, description="1-based body row (the header row is not counted).")
    row_label: str | None = Field(default=None, description="The row's first cell, e.g. the method it reports.")
    column: str | None = Field(default=None, description="The column's header, when the answer is one cell.")
    value: str | None = Field(default=None, description="That cell's text, when a column is named.")

    def describe(self) -> str:
        """``Table 1 · row 5 (Reciprocal rank fusion) · Recall@10 = 0.63``."""
        parts = [self.table] if self.table else []
        parts.append(f"row {self.row}" + (f" ({self.row_label})" if self.row_label else ""))
        if self.column:
            parts.append(f"{self.column} = {self.value}" if self.value is not None else self.column)
        return " · ".join(parts)


class Citation(BaseModel):
    """One numbered citation of an answer: the chunk it points at and the verbatim text it relies on."""

    number: int = Field(description="The n of the inline marker [n] in the answer text (1-based, stable in a thread).")
    chunk_id: str = Field(description="Id of the cited chunk; always a chunk of the corpus.")
    paper_id: str = Field(description="Id of the cited chunk's paper.")
    locator: Locator = Field(description="Where the cited chunk sits in its paper.")
    quote: str = Field(description="Text quoted verbatim from the cited chunk that supports the claim.")
    cell: TableCell | None = Field(
        default=None,
        description="When the quote is one row of a table chunk: the table, the row and (for one value) the column.",
    )
    quotes: list[str] = Field(
        default_factory=list,
        description="When readers set it: the verbatim quote of each sentence that cites this chunk, in the order of "
        "the [n] markers in the text (the k-th [n] rests on quotes[k]); ``quote`` spans them all.",
    )


class ClaimCheck(BaseModel):
    """The verdict on one sentence of an answer, judged against the text of the chunks it cites."""

    text: str = Field(description="The sentence without its citation markers.")
    chunk_ids: list[str] = Field(default_factory=list, description="The chunks it cites (none: unsupported).")
    supported: bool = Field(description="Whether the judge found it supported by those chunks.")
    score: float = Field(description="The judge's support score in [0, 1].")
    reason: str = Field(default="", description="The judge's short reason, e.g. 'quoted' or 'P(entailment)=0.12'.")
    action: Literal["kept", "removed", "marked"] = Field(description="What verification did with the sentence.")


FallbackStage = Literal["planner", "decompose", "verify", "hyde", "read"]
"""The steps that have an offline path to fall back to."""
OFFLINE_PATHS: dict[str, str] = {
    "planner": "the fixed Lit3R sequence went on",
    "decompose": "the question itself was searched",
    "verify": "the evidence counted as insufficient for that round",
    "hyde": "the query itself was the dense query",
    "read": "the extractive reader answered",
}
"""What runs instead when each step falls back."""


MODEL_TEXT = "[model text: in the trace]"
"""Stands, in an answer's ``fallbacks``, where a reason quoted what a model wrote."""
_QUOTED = re.compile(r"""(?<![\w'"])(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")(?![\w'"])""")
"""A quoted stretch as ``repr`` writes one (opening quote not after a letter, as in "reader's")."""


class Fallback(BaseModel):
    """A step of a run that fell back to its offline path (its model call failed, or its reply stayed invalid)."""

    stage: FallbackStage = Field(description="The step that fell back.")
    reason: str = Field(description="Why: the error, or what was wrong with the model's reply.")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def instead(self) -> str:
        """What ran instead (:data:`OFFLINE_PATHS`)."""
        return OFFLINE_PATHS[self.stage]

    def describe(self) -> str:
        """One line: ``'<stage>: <reason>; <what ran instead>'`` (the answer's ``fallbacks`` entries), with every
        quoted stretch of the reason (the model's text a check refused: a quote, an input value) replaced by
        :data:`MODEL_TEXT`; the trace's ``fallback`` events keep the reason whole."""
        return f"{self.stage}: {_QUOTED.sub(MODEL_TEXT, self.reason)}; {self.instead}"


class Answer(BaseModel):
    """What the agent returns for one question."""

    question: str = Field(description="The question as asked (or as rewritten into a standalone question).")
    text: str = Field(description="The answer with inline citation markers [n]; the insufficiency message if none.")
    citations: list[Citation] = Field(default_factory=list, description="Every marker used in the text, in order.")
    sufficient: bool = Field(description="False when the evidence was judged insufficient and the system abstained.")
    option: str | None = Field(default=None, description="The chosen option, for multiple-choice questions.")
    table: list[dict[str, str]] | None = Field(default=None, description="Rows of a table answer, by column name.")
    candidate_papers: list[str] = Field(default_factory=list, description="The final paper ranking, best first.")
    rounds: int = Field(default=0, description="Retrieval rounds run.")
    trace_path: str | None = Field(default=None, description="The JSON trace of this answer.")
    supported_fraction: float | None = Field(
        default=None, description="Share of the answer's claims its citations support; None: not verified or no claims."
    )
    claims: list[ClaimCheck] = Field(
        default_factory=list, description="The verdict on each claim (sentence), removed ones included."
    )
    verified_by: str | None = Field(
        default=None,
        description="The judge that checked the claims after the guards ('exact': the quotes are verbatim, which "
        "says nothing of whether they answer the question; 'nli'; 'llm'); None when not verified.",
    )
    answers_question: bool | None = Field(
        default=None,
        description="Whether the answer supplies what the question asks: the kind it asks for was found (a verdict for "
        "a yes/no question, a number for a 'how many', an option for a multiple choice) in evidence that holds the "
        "question's terms; False for an abstention; None when the reader does not say.",
    )
    confidence: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="How sure the reader is that the answer is right, in [0, 1] (a chosen verdict: its probability "
        "among the options; a quoted answer: the evidence's coverage of the question); None when the reader does "
        "not say. Independent of the quote check: verified quotes can still fail to answer.",
    )
    unmentioned: list[str] = Field(
        default_factory=list,
        description="Words of a yes/no question that no paper read mentions (technical words: a named method, tool "
        "or resource), on whose absence its 'No' rests; for any other question, the names it asks about that no "
        "paper read mentions, on whose absence it abstains; empty otherwise.",
    )
    fallbacks: list[str] = Field(
        default_factory=list,
        description="Each step that fell back to its offline path, and why (e.g. 'read: stage 2 call failed: ...; "
        "the extractive reader answered'): :meth:`Fallback.describe` of each of ``fallback_steps``; empty when every "
        "configured model step ran.",
    )
    fallback_steps: list[Fallback] = Field(
        default_factory=list, description="The same fallbacks as records: the stage, the reason and what ran instead."
    )


EventType = Literal[
    "node", "tool", "llm", "ranking", "verdict", "decompose", "hyde", "read", "verify", "rewrite", "note", "fallback"
]
"""What a trace event records: a graph node's turn, a tool call, a model call, a ranking, a verification verdict,
a decomposition, a HyDE passage, the reader's step, claim verification, a chat rewrite, an instant note, or a
step's fall back to its offline path (data: a :class:`Fallback`'s fields)."""


class TraceEvent(BaseModel):
    """One step of an answer's trace: a node, a tool call, a model call, a ranking or a verdict."""

    type: EventType = Field(description="The kind of step (see :data:`EventType`).")
    name: str = Field(description="Node, tool or step name.")
    round: int | None = Field(default=None, description="Retrieval round (1-based) the step belongs to.")
    started_at: str = Field(description="ISO 8601 UTC start time.")
    duration_ms: float = Field(default=0.0, description="Wall-clock duration in milliseconds.")
    data: dict = Field(default_factory=dict, description="Arguments, rankings, scores, prompts, raw outputs, tokens.")
