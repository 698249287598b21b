"""The two-stage LLM reader (seed §2.2, Appendix C) with deterministic validation and an extractive fallback.

Stage 1 judges each candidate paper on its own, in parallel: relevant, sufficient, supporting chunk ids.
Stage 2 answers from the accepted papers: facts (value, unit, paper, chunk, quote), calculations, and the answer
in the requested form with citations by chunk id. The model may reason first; only the JSON inside the last
``<final_answer>`` block is read, so its chain of thought never reaches the answer.

The stage-2 output is checked: every cited chunk id must be one of the given chunks, the chosen option one of the
given letters, a requested table must have the requested columns. An invalid reply gets one repair prompt; a
second invalid reply, or a failed call, hands the question to the deterministic ``fallback`` (the extractive
reader). Citations become numbered markers ``[n]`` whose quotes are verbatim text of the cited chunk.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from lit3r.llm.errors import LLMError
from lit3r.llm.trace import TraceRecorder
from lit3r.llm.wrapper import LLM
from lit3r.models import ABSTENTION, Answer, Chunk, Citation, Fallback, Paper
from lit3r.prompts.common import READER_SYSTEM, AnswerSpec
from lit3r.prompts.reader import (
    FINAL_CLOSE,
    FINAL_OPEN,
    render_paper,
    render_read_paper,
    render_repair,
    render_synthesize,
)
from lit3r.reading.assurance import assessed
from lit3r.reading.tables import quote_cell

FallbackReader = Callable[[str, Sequence[Chunk], AnswerSpec], Answer]
"""The deterministic reader called with the question, every given chunk and the answer spec."""

_MARKER = re.compile(r"\[([^\[\]]*::[^\[\]]*)\]")
_SPACE = re.compile(r"\s+")
QUOTE_CHARS = 300


class PaperJudgement(BaseModel):
    """Stage 1: the verdict on one candidate paper."""

    relevant: bool = Field(description="The paper holds evidence the answer needs, or is a paper asked about.")
    sufficient: bool = Field(default=False, description="This paper alone holds everything the answer needs.")
    supporting_chunk_ids: list[str] = Field(default_factory=list, description="Ids of the supporting chunks.")
    reason: str = Field(default="", description="One sentence on what the paper shows or lacks.")


class Fact(BaseModel):
    """One value stated by one chunk."""

    value: str = Field(description="The value or statement.")
    unit: str = Field(default="", description="Its unit, if any.")
    paper_id: str = Field(default="", description="The paper stating it.")
    chunk_id: str = Field(description="The chunk stating it.")
    quote: str = Field(default="", description="A short verbatim quote from that chunk.")


class Calculation(BaseModel):
    """One explicit calculation or comparison over facts."""

    description: str = ""
    expression: str = ""
    result: str = ""


class Synthesis(BaseModel):
    """Stage 2: the JSON of the final block."""

    sufficient: bool = Field(default=True, description="False when the evidence does not answer the question.")
    facts: list[Fact] = Field(default_factory=list)
    calculations: list[Calculation] = Field(default_factory=list)
    answer: str = Field(default="", description="The answer with [chunk id] citations.")
    option: str | None = Field(default=None, description="The chosen option letter.")
    table: list[dict[str, Any]] | None = Field(default=None, description="Rows by column name.")


@dataclass
class PaperVerdict:
    """Stage 1's outcome for one paper: the judgement (ids outside the paper dropped) or the call's error."""

    paper_id: str
    judgement: PaperJudgement | None = None
    error: str | None = None
    dropped_ids: list[str] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        """True when the paper goes to stage 2."""
        return self.judgement is not None and self.judgement.relevant


@dataclass
class ReaderResult:
    """The answer and how it was reached (for the trace and tests)."""

    answer: Answer
    verdicts: list[PaperVerdict] = field(default_factory=list)
    synthesis: Synthesis | None = None
    repaired: bool = False
    fallback: Fallback | None = None
    """Why the deterministic reader answered instead (None: the model's answer stands)."""


class SynthesisError(ValueError):
    """A stage-2 reply without a usable final block."""


def final_block(text: str) -> str | None:
    """The inside of the last ``<final_answer>`` block (an unclosed last block runs to the end), else None."""
    start = text.rfind(FINAL_OPEN)
    if start < 0:
        return None
    body = text[start + len(FINAL_OPEN) :]
    end = body.find(FINAL_CLOSE)
    body = body if end < 0 else body[:end]
    start, end = body.find("{"), body.rfind("}")
    return body[start : end + 1] if 0 <= start < end else body.strip()  # without fences or prose around


def parse_synthesis(text: str) -> Synthesis:
    """The :class:`Synthesis` in the final block of ``text``; reasoning outside the block is ignored."""
    block = final_block(text)
    if block is None:
        raise SynthesisError("the reply has no final_answer block: end it with one")
    try:
        return Synthesis.model_validate_json(block)
    except ValidationError as exc:
        problem = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'JSON'}: {e['msg']}" for e in exc.errors()[:5])
        raise SynthesisError(f"the final block is not a valid answer object ({problem})") from exc


def cited_ids(text: str) -> list[str]:
    """Chunk ids cited in ``text`` by ``[id]`` or ``[id, id]`` markers, in order, repeats kept."""
    return [part.strip() for m in _MARKER.finditer(text) for part in re.split(r"[,;]", m.group(1)) if part.strip()]


def strip_markers(text: str) -> str:
    """``text`` without chunk-id markers, spacing folded."""
    return _SPACE.sub(" ", _MARKER.sub("", text)).strip()


def choose_option(value: str | None, options: Mapping[str, str]) -> str | None:
    """The option letter ``value`` names ('C', '(c)', 'C.', 'Option C' or the option's text), else None."""
    if value is None:
        return None
    text = _SPACE.sub(" ", str(value)).strip()
    letter = re.sub(r"^(?:option\s+)?[(\[]?\s*(\w+)\s*[)\].:]?$", r"\1", text, flags=re.IGNORECASE)
    by_letter = {k.strip().upper(): k for k in options}
    if letter.upper() in by_letter:
        return by_letter[letter.upper()]
    by_text = {_SPACE.sub(" ", v).strip().casefold(): k for k, v in options.items()}
    return by_text.get(text.casefold())


def _table_columns(row: Mapping[str, Any], columns: Sequence[str]) -> dict[str, str] | None:
    """``row`` keyed by the requested ``columns`` (key case and spacing ignored), else None if one is missing."""
    keyed = {_SPACE.sub(" ", str(k)).strip().casefold(): v for k, v in row.items()}
    wanted = list(columns) or [str(k) for k in row]
    out = {}
    for column in wanted:
        key = _SPACE.sub(" ", column).strip().casefold()
        if key not in keyed:
            return None
        out[column] = "" if keyed[key] is None else strip_markers(str(keyed[key]))
    return out


def check_synthesis(synthesis: Synthesis, chunks: Mapping[str, Chunk], spec: AnswerSpec) -> list[str]:
    """What is wrong with a stage-2 answer: unknown chunk ids, no citation, a cited chunk no fact quotes, a quote
    that is not in its chunk, a foreign option, a bad table."""
    if not synthesis.sufficient:
        return []
    errors = [
        f"fact {i} cites unknown chunk id '{f.chunk_id}'"
        for i, f in enumerate(synthesis.facts, 1)
        if f.chunk_id not in chunks
    ]
    cited = cited_ids(synthesis.answer)
    errors += [f"the answer cites unknown chunk id '{c}'" for c in dict.fromkeys(cited) if c not in chunks]
    if not synthesis.answer.strip():
        errors.append('"answer" is empty')
    elif not cited:
        errors.append("the answer cites no chunk: cite the chunk ids of the facts it uses, e.g. [p42::c0007]")
    errors += quote_errors(synthesis, chunks)
    if "multiple_choice" in spec.types and spec.options and choose_option(synthesis.option, spec.options) is None:
        errors.append(f'"option" {synthesis.option!r} is not one of the options {", ".join(spec.options)}')
    if "table" in spec.types:
        errors += _table_errors(synthesis.table, chunks, spec.columns)
    return errors


def quote_errors(synthesis: Synthesis, chunks: Mapping[str, Chunk]) -> list[str]:
    """Each cited chunk needs a fact quoting it, and each fact's quote must stand in its chunk (spacing, case,
    dashes and line-end hyphenation aside: :func:`locate_quote`)."""
    errors = []
    for i, fact in enumerate(synthesis.facts, 1):
        chunk = chunks.get(fact.chunk_id)
        if chunk is not None and fact.quote.strip() and locate_quote(fact.quote, chunk.text) is None:
            errors.append(f"fact {i}: its quote {fact.quote[:80]!r} is not in chunk '{fact.chunk_id}': copy it exactly")
    quoted = {f.chunk_id for f in synthesis.facts if f.quote.strip()}
    for chunk_id in dict.fromkeys(cited_ids(synthesis.answer)):
        if chunk_id in chunks and chunk_id not in quoted:
            errors.append(f"the answer cites '{chunk_id}' but no fact quotes it: add a fact with a verbatim quote")
    return errors


def locate_quote(quote: str, text: str) -> str | None:
    """The slice of ``text`` that ``quote`` copies, allowing other spacing, case, quote marks and dashes, and a
    word broken at a line end ('retrie- val'); None when ``text`` does not hold it."""
    words = re.findall(r"\w+", quote)
    if not words:
        return None
    gap = r"(?:[\W_]|-\s*)*?"
    pattern = gap.join(_word_pattern(w) for w in words)
    match = re.search(pattern, text, flags=re.IGNORECASE)
    return match.group(0) if match else None


def _word_pattern(word: str) -> str:
    """A word that may be split by a hyphen and white space at a line end."""
    return r"(?:-\s*)?".join(map(re.escape, word))


def _table_errors(table: list[dict[str, Any]] | None, chunks: Mapping[str, Chunk], columns: list[str]) -> list[str]:
    """Errors of a requested table: missing, empty, rows lacking columns, cells citing unknown chunks."""
    if not table:
        return ['a table was requested but "table" is missing or has no rows']
    errors = []
    for number, row in enumerate(table, 1):
        if _table_columns(row, columns) is None:
            errors.append(f"table row {number} does not have exactly the columns {', '.join(columns)}")
        cells = " ".join(str(v) for v in row.values())
        errors += [f"table row {number} cites unknown chunk id '{c}'" for c in cited_ids(cells) if c not in chunks]
    return errors


def verbatim_quote(text: str, quote: str) -> str:
    """The slice of the chunk ``text`` that the (checked) ``quote`` copies, cut to :data:`QUOTE_CHARS`."""
    located = locate_quote(quote, text)
    if located is None:  # check_synthesis refuses such answers; never show a quote the chunk does not hold
        raise SynthesisError(f"the quote {quote[:80]!r} is not in its chunk")
    return located if len(located) <= QUOTE_CHARS else located[:QUOTE_CHARS].rsplit(" ", 1)[0]


def to_answer(
    question: str, synthesis: Synthesis, chunks: Mapping[str, Chunk], spec: AnswerSpec, ranking: Sequence[str]
) -> Answer:
    """The :class:`Answer` of a checked synthesis: chunk-id markers renumbered ``[1]``, ``[2]``, ... in order of
    first use, each with a verbatim quote (the matching fact's quote when the chunk holds it). The chosen option
    is given as its text, like the extractive reader gives it (its letter is the key of ``spec.options``)."""
    if not synthesis.sufficient:
        return Answer(
            question=question, text=ABSTENTION, sufficient=False, candidate_papers=list(ranking), answers_question=False
        )
    numbers: dict[str, int] = {}
    for chunk_id in cited_ids(synthesis.answer):
        numbers.setdefault(chunk_id, len(numbers) + 1)

    def renumber(match: re.Match[str]) -> str:
        parts = [p.strip() for p in re.split(r"[,;]", match.group(1)) if p.strip()]
        return "".join(f"[{numbers[p]}]" for p in dict.fromkeys(parts))

    citations = []
    for chunk_id, number in numbers.items():
        chunk = chunks[chunk_id]
        fact = next(f for f in synthesis.facts if f.chunk_id == chunk_id and f.quote.strip())
        quote = verbatim_quote(chunk.text, fact.quote)
        citations.append(
            Citation(
                number=number,
                chunk_id=chunk_id,
                paper_id=chunk.paper_id,
                locator=chunk.locator,
                quote=quote,
                cell=quote_cell(chunk, quote),
            )
        )
    letter = choose_option(synthesis.option, spec.options) if spec.options else None
    table = None
    if "table" in spec.types and synthesis.table:
        table = [row for row in (_table_columns(r, spec.columns) for r in synthesis.table) if row is not None]
    answer = Answer(
        question=question,
        text=_MARKER.sub(renumber, synthesis.answer).strip(),
        citations=citations,
        sufficient=True,
        option=spec.options[letter] if letter is not None else None,
        table=table,
        candidate_papers=list(ranking),
    )
    return assessed(question, answer, list(chunks.values()))


class LLMReader:
    """Stage 1 per paper in a thread pool, stage 2 over the accepted papers, one repair, then ``fallback``.

    Args:
        llm: the model wrapper.
        fallback: the deterministic reader answering when stage 2 fails (the extractive reader).
        max_workers: parallel stage-1 calls.
        chunks_per_paper: chunks shown per paper (the given order is kept; best first is the caller's job).
        chunk_chars: characters each shown chunk is cut to.
        recorder: receives stage-1 verdicts and fallback notes.
    """

    name = "llm"

    def __init__(
        self,
        llm: LLM,
        fallback: FallbackReader,
        *,
        max_workers: int = 4,
        chunks_per_paper: int = 8,
        chunk_chars: int = 2000,
        recorder: TraceRecorder | None = None,
    ) -> None:
        self.llm = llm
        self.fallback = fallback
        self.max_workers = max(1, max_workers)
        self.chunks_per_paper = chunks_per_paper
        self.chunk_chars = chunk_chars
        self.recorder = recorder if recorder is not None else TraceRecorder()

    def read(
        self, question: str, papers: Sequence[Paper], chunks: Sequence[Chunk], spec: AnswerSpec | None = None
    ) -> Answer:
        """The answer to ``question`` from ``chunks`` of the candidate ``papers`` (best first)."""
        return self.run(question, papers, chunks, spec).answer

    def run(
        self, question: str, papers: Sequence[Paper], chunks: Sequence[Chunk], spec: AnswerSpec | None = None
    ) -> ReaderResult:
        """Like :meth:`read`, with the stage-1 verdicts, the parsed synthesis and any fallback reason."""
        spec = spec or AnswerSpec()
        by_paper: dict[str, list[Chunk]] = {}
        for chunk in chunks:
            by_paper.setdefault(chunk.paper_id, []).append(chunk)
        candidates = [p for p in papers if by_paper.get(p.id)]
        ranking = [p.id for p in papers]
        verdicts = self.judge(question, candidates, by_paper, spec)
        accepted = [(p, v) for p, v in zip(candidates, verdicts, strict=True) if v.accepted]
        if verdicts and all(v.error for v in verdicts):
            return self._fallback(question, chunks, spec, verdicts, "stage 1 failed for every paper")
        if not accepted:
            abstain = Answer(question=question, text=ABSTENTION, sufficient=False, candidate_papers=ranking)
            return ReaderResult(abstain, verdicts)
        return self.synthesize(question, accepted, by_paper, chunks, spec, verdicts, ranking)

    def judge(
        self, question: str, papers: Sequence[Paper], by_paper: Mapping[str, list[Chunk]], spec: AnswerSpec
    ) -> list[PaperVerdict]:
        """Stage 1 for every paper, in parallel, in ``papers`` order."""
        if not papers:
            return []
        workers = min(self.max_workers, len(papers))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="reader") as pool:
            verdicts = list(pool.map(lambda p: self._judge_one(question, p, by_paper[p.id], spec), papers))
        stage1 = [{"paper_id": v.paper_id, "accepted": v.accepted, "error": v.error} for v in verdicts]
        self.recorder.add("note", "read.stage1", {"verdicts": stage1})
        return verdicts

    def _judge_one(self, question: str, paper: Paper, chunks: list[Chunk], spec: AnswerSpec) -> PaperVerdict:
        """One stage-1 call; supporting ids outside the paper's shown chunks are dropped."""
        shown = chunks[: self.chunks_per_paper]
        prompt = render_read_paper(question, render_paper(paper, shown, chars=self.chunk_chars), spec)
        messages = [SystemMessage(READER_SYSTEM), HumanMessage(prompt)]
        try:
            judgement = self.llm.structured(messages, PaperJudgement, name=f"read.paper[{paper.id}]")
        except LLMError as exc:
            self.recorder.add("note", "read.paper.failed", {"paper_id": paper.id, "error": str(exc)})
            return PaperVerdict(paper.id, error=str(exc))
        own = {c.id for c in shown}
        ids = [i.strip() for i in dict.fromkeys(judgement.supporting_chunk_ids)]
        kept = [i for i in ids if i in own]
        judgement = judgement.model_copy(update={"supporting_chunk_ids": kept})
        return PaperVerdict(paper.id, judgement, dropped_ids=[i for i in ids if i not in own])

    def synthesize(
        self,
        question: str,
        accepted: Sequence[tuple[Paper, PaperVerdict]],
        by_paper: Mapping[str, list[Chunk]],
        chunks: Sequence[Chunk],
        spec: AnswerSpec,
        verdicts: list[PaperVerdict],
        ranking: list[str],
    ) -> ReaderResult:
        """Stage 2 with one repair; the fallback answers when the call fails or the repair is invalid too."""
        blocks = []
        for paper, verdict in accepted:
            assert verdict.judgement is not None  # accepted verdicts carry a judgement
            support = set(verdict.judgement.supporting_chunk_ids)
            shown = [c for c in by_paper[paper.id] if c.id in support] or by_paper[paper.id][: self.chunks_per_paper]
            blocks.append(render_paper(paper, shown, note=verdict.judgement.reason, chars=self.chunk_chars))
        known = {c.id: c for c in chunks}
        messages: list[BaseMessage] = [
            SystemMessage(READER_SYSTEM),
            HumanMessage(render_synthesize(question, blocks, spec)),
        ]
        errors: list[str] = []
        for attempt in range(2):
            name = "read.synthesize.repair" if attempt else "read.synthesize"
            try:
                reply = self.llm.invoke(messages, name=name)
            except LLMError as exc:
                return self._fallback(question, chunks, spec, verdicts, f"stage 2 call failed: {exc}")
            try:
                synthesis = parse_synthesis(reply.text)
                errors = check_synthesis(synthesis, known, spec)
            except SynthesisError as exc:
                errors = [str(exc)]
            if not errors:
                answer = to_answer(question, synthesis, known, spec, ranking)
                return ReaderResult(answer, verdicts, synthesis, repaired=attempt == 1)
            messages = [*messages, AIMessage(reply.text), HumanMessage(render_repair(errors))]
        reason = "invalid stage-2 output after repair: " + "; ".join(errors)
        return self._fallback(question, chunks, spec, verdicts, reason)

    def _fallback(
        self, question: str, chunks: Sequence[Chunk], spec: AnswerSpec, verdicts: list[PaperVerdict], reason: str
    ) -> ReaderResult:
        """The deterministic reader's answer, noted with ``reason``."""
        fallback = Fallback(stage="read", reason=reason)
        self.recorder.fallback(fallback)
        return ReaderResult(self.fallback(question, chunks, spec), verdicts, fallback=fallback)
