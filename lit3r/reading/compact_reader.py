"""The compact reader: one short schema-constrained call a 0.5B-1.5B local model can follow, one repair at most.

The model sees a few numbered passages (:mod:`lit3r.reading.passages`: the best stretches of the evidence chunks,
``[1]``, ``[2]`` instead of long chunk ids) and fills one :class:`CompactReply`: the passages it rests on, each
with a verbatim quote, the answer's kind (``span``, ``sentence``, ``yes``, ``no``, ``unanswerable``) and a short
answer. llama.cpp constrains the forced tool call to the schema, so every reply parses.

Validation repairs what it can without a model call (each repair is named in the result and the trace):

* a passage number written as text (``"[2]"``, ``"P2"``) is read as the number; a quote that is not in the
  passage it names but in another one is moved to that passage; a quote with other spacing, case or dashes is
  replaced by the passage's own words (:func:`lit3r.reading.llm_reader.locate_quote`);
* an answer of kind span/sentence that says "Yes"/"No" or "unanswerable" is read as that kind; a missing quote
  is the answer itself when the answer is copied from the passage; an empty answer is the first quote;
* an answer whose numbers or content words are not in the cited text (the grounding guards,
  :func:`lit3r.grounding.guards.support_problem`) is replaced by its first quote, which is; so is an answer
  that only repeats the question's words ("lexical features" for "What lexical features are extracted?"): it
  tells the reader nothing the question did not;
* an answer longer than :data:`MAX_SENTENCES` sentences is cut to them, and each sentence gets the markers;
* "yes"/"no" for a question not worded as a yes/no question is no answer: the quote answers;
* with ``verbatim`` (set when claims are checked by the exact judge), a span or sentence not copied from a cited
  passage gives way to its quote; words copied with other spacing or case are given as the passage has them.

The one repair call is spent on a reply with no quote found in any passage (or, for a multiple-choice question,
no valid letter), and on an answer that names nothing but the question's words and :data:`GENERIC_WORDS`; such
an answer is usable (answered by its quote), so it stands when the repair names nothing either or the call
fails. A second reply without a placeable quote, or a failed call with nothing usable, hands the question to the
deterministic ``fallback``.
"unanswerable" (the model's own judgement) abstains, as the gate's verdict already does before the reader runs.

The answer is written so its claim carries the quoted words: yes/no as ``option`` "Yes"/"No" and the text
"Yes — <words> [1]" (the claim check reads the words: the stretch of the quote that covers the question's terms,
:func:`polar_words`), a span or a sentence as "<answer> [1]".
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, field_validator

from lit3r.answers import OPTION_SEPARATOR, split_sentences
from lit3r.answers.question import NO, YES, answer_form, implicit_options
from lit3r.grounding.guards import support_problem
from lit3r.llm.errors import LLMError
from lit3r.llm.trace import TraceRecorder
from lit3r.llm.wrapper import LLM
from lit3r.models import ABSTENTION, Answer, Chunk, Citation, Fallback, Paper
from lit3r.prompts.common import AnswerSpec
from lit3r.prompts.compact import (
    COMPACT_GENERIC,
    COMPACT_SYSTEM,
    render_compact,
    render_compact_repair,
    render_passages,
)
from lit3r.reading.assurance import assessed
from lit3r.reading.llm_reader import QUOTE_CHARS, FallbackReader, choose_option, locate_quote
from lit3r.reading.passages import Passage, select_passages
from lit3r.reading.polarity import cue_spans
from lit3r.reading.scoring import query_terms
from lit3r.reading.spans import best_clause, covering_span
from lit3r.reading.tables import quote_cell

AnswerKind = Literal["span", "sentence", "yes", "no", "unanswerable"]
GENERIC_WORDS = (
    "all various variety different several many multiple some certain range set sets kind kinds type types "
    "other others such these those their its our own proposed given specific main new existing approach approaches "
    "method methods model models technique techniques"
)
"""Words that name nothing by themselves: an answer made of them and the question's words ("all datasets", "a
variety of language pairs", "the proposed model") tells the reader nothing the question did not."""
MAX_SUPPORT = 3
MAX_SENTENCES = 2
ANSWER_CHARS = 400
"""The longest answer the grammar lets a local model write (two sentences fit; a reply cut off at ``max_tokens``
is broken JSON, so a bound in the grammar keeps long replies whole)."""
_UNANSWERABLE = re.compile(
    r"^(?:unanswerable|not (?:stated|mentioned|given|specified|reported)|unknown|n/?a|none|"
    r"(?:the )?passages? do(?:es)? not (?:say|answer|mention|state).*|insufficient.*)\.?$",
    re.IGNORECASE,
)


class Support(BaseModel):
    """One passage the answer rests on."""

    passage: int = Field(description="The passage number, e.g. 2 for [2].")
    quote: str = Field(
        description="Words copied exactly from that passage.",
        json_schema_extra={"maxLength": QUOTE_CHARS},  # the grammar's bound, not a validation error
    )

    @field_validator("passage", mode="before")
    @classmethod
    def _number(cls, value: object) -> object:
        """'[2]', 'P2', 'passage 2' -> 2 (a number written as text is still that number)."""
        if isinstance(value, str) and (found := re.search(r"\d+", value)):
            return int(found.group())
        return value


class CompactReply(BaseModel):
    """The compact reader's one JSON object. Every field is required and ``support`` holds at least one quote, so a
    grammar built from the schema makes a small model write them (an optional field it simply leaves out: the
    0.5B model did, every time); for "unanswerable" the quote is the passage that came closest."""

    support: list[Support] = Field(
        min_length=1,
        description="Passages the answer rests on, with quotes.",
        json_schema_extra={"maxItems": MAX_SUPPORT},  # more are ignored, so the grammar does not let them be written
    )
    kind: AnswerKind = Field(description="span, sentence, yes, no or unanswerable.")
    answer: str = Field(
        description="The short answer; empty for yes, no and unanswerable.",
        json_schema_extra={"maxLength": ANSWER_CHARS},
    )

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value


@dataclass
class CompactResult:
    """The answer and how it was reached (for the trace and tests)."""

    answer: Answer
    passages: list[Passage] = field(default_factory=list)
    reply: CompactReply | None = None
    repairs: list[str] = field(default_factory=list)
    """The deterministic repairs applied to the accepted reply."""
    repaired: bool = False
    """Whether the repair call was spent."""
    fallback: Fallback | None = None
    """Why the deterministic reader answered instead (None: the model's answer stands)."""


@dataclass
class _Reading:
    """One reply interpreted: the answer, or the errors a repair call should fix."""

    answer: Answer | None
    errors: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    retry: list[str] = field(default_factory=list)
    """Why a usable answer is still worth the repair call (it names nothing the question did not)."""


def _abstain(question: str, ranking: list[str]) -> Answer:
    return Answer(
        question=question, text=ABSTENTION, sufficient=False, candidate_papers=ranking, answers_question=False
    )


def _cited(text: str, markers: str) -> str:
    """``text`` with the markers closing each of its sentences (before a final period), so every claim cites."""
    text = text.strip()
    pieces = [text[start:end] for start, end in split_sentences(text)] or [text]
    return " ".join(f"{p[:-1].rstrip()} {markers}." if p.endswith(".") else f"{p} {markers}" for p in pieces)


def polar_words(question: str, passage: Passage, quote: str) -> str:
    """What a yes/no answer says after its "Yes — ": the shortest stretch of the quote's deciding clause that holds
    the question's terms and any negation (the offline reader's rule, :func:`lit3r.reading.forms.polar_answer`,
    which doubled its yes/no Answer F1 over quoting the clause); the clause when that stretch is under three
    words (a lone "data" states nothing a judge can check), else the quote."""
    at = passage.text.find(quote)
    if at < 0:
        return quote
    text, span = passage.chunk.text, (passage.start + at, passage.start + at + len(quote))
    question_terms = query_terms(question)
    clause = best_clause(text, span, question_terms)
    window = covering_span(text, clause, question_terms, keep=cue_spans(text, *clause))
    if window is not None and len(split_sentences(text, *window)) == 1 and len(text[slice(*window)].split()) >= 3:
        return text[slice(*window)]
    return text[slice(*clause)] if len(text[slice(*clause)].split()) >= 3 else quote


def names_nothing(question: str, answer: str) -> bool:
    """Whether ``answer`` says nothing but the question's words and :data:`GENERIC_WORDS` (an empty answer does
    not count: it is repaired otherwise)."""
    terms = query_terms(answer)
    return bool(answer.strip()) and terms <= query_terms(question) | _GENERIC_TERMS


_GENERIC_TERMS = query_terms(GENERIC_WORDS)


def _cut(quote: str) -> str:
    return quote if len(quote) <= QUOTE_CHARS else quote[:QUOTE_CHARS].rsplit(" ", 1)[0]


class CompactReader:
    """Numbered passages, one structured read, deterministic repairs, one repair call, then ``fallback``.

    Args:
        llm: the model wrapper.
        fallback: the deterministic reader answering when the read fails (the extractive reader).
        passages: how many passages the model is shown.
        passage_chars: the most characters of one passage.
        min_overlap: the grounding guard's share of content words an answer must take from its cited text.
        verbatim: answer in quoted words only (what the exact claim judge accepts): a span or sentence not copied
            from a cited passage gives way to its quote.
        recorder: receives the passages shown, the repairs and fallback notes.
    """

    name = "compact"

    def __init__(
        self,
        llm: LLM,
        fallback: FallbackReader,
        *,
        passages: int = 6,
        passage_chars: int = 600,
        min_overlap: float = 0.5,
        verbatim: bool = False,
        recorder: TraceRecorder | None = None,
    ) -> None:
        self.llm = llm
        self.fallback = fallback
        self.passages = passages
        self.passage_chars = passage_chars
        self.min_overlap = min_overlap
        self.verbatim = verbatim
        self.recorder = recorder if recorder is not None else TraceRecorder()

    def read(
        self, question: str, papers: Sequence[Paper], chunks: Sequence[Chunk], spec: AnswerSpec | None = None
    ) -> Answer:
        """The answer to ``question`` from ``chunks`` (best first)."""
        return self.run(question, papers, chunks, spec).answer

    def run(
        self, question: str, papers: Sequence[Paper], chunks: Sequence[Chunk], spec: AnswerSpec | None = None
    ) -> CompactResult:
        """Like :meth:`read`, with the passages, the accepted reply, its repairs and any fallback reason."""
        spec = spec or AnswerSpec()
        ranking = [p.id for p in papers]
        passages = select_passages(question, chunks, count=self.passages, chars=self.passage_chars)
        shown = [{"n": p.number, "chunk_id": p.chunk.id} for p in passages]
        self.recorder.add("note", "read.passages", {"passages": shown})
        if not passages:
            return CompactResult(_abstain(question, ranking))
        shown = render_passages([(p.number, p.text, p.chunk.locator.section) for p in passages])
        options = spec.options if "multiple_choice" in spec.types else {}
        prompt = render_compact(question, shown, form=answer_form(question), options=options)
        messages: list[BaseMessage] = [SystemMessage(COMPACT_SYSTEM), HumanMessage(prompt)]
        errors: list[str] = []
        reason = ""
        kept: tuple[CompactReply, _Reading, bool] | None = None  # the first usable reply, and whether repaired
        for attempt in range(2):
            name = "read.compact.repair" if attempt else "read.compact"
            try:
                reply = self.llm.structured(messages, CompactReply, name=name)
            except LLMError as exc:
                reason = f"{name} failed: {exc}"
                break
            reading = self.interpret(question, reply, passages, spec, ranking)
            if reading.answer is not None and not reading.retry:
                return self._accept(reply, reading, passages, repaired=attempt == 1)
            if reading.answer is not None and kept is None:  # it stands if the repair names nothing either
                kept = (reply, reading, attempt == 1)
            errors = reading.retry or reading.errors
            reason = "invalid reply after repair: " + "; ".join(errors)
            replied = AIMessage(json.dumps(reply.model_dump(), ensure_ascii=False))
            messages = [*messages, replied, HumanMessage(render_compact_repair(errors))]
        if kept is not None:
            return self._accept(kept[0], kept[1], passages, repaired=kept[2])
        return self._fallback(question, chunks, spec, passages, reason)

    def _accept(
        self, reply: CompactReply, reading: _Reading, passages: list[Passage], *, repaired: bool
    ) -> CompactResult:
        """The result of an accepted reply, recorded."""
        assert reading.answer is not None
        self.recorder.add("note", "read.compact.accepted", {"answer_kind": reply.kind, "repairs": reading.repairs})
        return CompactResult(reading.answer, passages, reply, reading.repairs, repaired=repaired)

    def interpret(
        self, question: str, reply: CompactReply, passages: Sequence[Passage], spec: AnswerSpec, ranking: list[str]
    ) -> _Reading:
        """The answer a reply gives after the deterministic repairs, or the errors that need the repair call."""
        repairs: list[str] = []
        kind, text = reply.kind, " ".join(reply.answer.split())
        if kind in ("span", "sentence") and text.rstrip(".!").casefold() in ("yes", "no"):
            kind = text.rstrip(".!").casefold()  # type: ignore[assignment]
            repairs.append(f"kind {reply.kind} answering {text!r} read as {kind}")
        if kind != "unanswerable" and _UNANSWERABLE.match(text):
            repairs.append(f"answer {text!r} read as unanswerable")
            kind = "unanswerable"
        if kind == "unanswerable":
            return _Reading(_abstain(question, ranking), repairs=repairs)
        support, errors = self.locate(reply, text if kind == "span" else "", passages, repairs)
        if not support:
            return _Reading(None, errors or ["no quote copied exactly from a passage: support is empty"])
        letter = None
        if spec.options and "multiple_choice" in spec.types:
            letter = choose_option(text, spec.options)
            if letter is None:
                return _Reading(None, [f'"answer" {text!r} is not one of the letters {", ".join(spec.options)}'])
        retry = (
            [COMPACT_GENERIC.format(answer=text)]
            if kind in ("span", "sentence") and names_nothing(question, text)
            else []
        )
        shown = list({p.chunk.id: p.chunk for p in passages}.values())
        answer = assessed(question, self.compose(question, kind, text, support, spec, letter, repairs), shown)
        return _Reading(answer.model_copy(update={"candidate_papers": ranking}), repairs=repairs, retry=retry)

    def locate(
        self, reply: CompactReply, span: str, passages: Sequence[Passage], repairs: list[str]
    ) -> tuple[list[tuple[Passage, str]], list[str]]:
        """Each support's passage and the passage's own words for its quote; the errors of those not found."""
        by_number = {p.number: p for p in passages}
        found: list[tuple[Passage, str]] = []
        errors: list[str] = []
        for item in reply.support[:MAX_SUPPORT]:
            named = by_number.get(item.passage)
            quote = locate_quote(item.quote, named.text) if named is not None else None
            if quote is None:
                for other in passages:
                    if (quote := locate_quote(item.quote, other.text)) is not None:
                        repairs.append(f"quote of passage {item.passage} found in passage {other.number}")
                        named = other
                        break
            if quote is None and named is not None and span and (quote := locate_quote(span, named.text)):
                repairs.append(f"passage {item.passage}: its quote is not in it; the answer itself is")
            if quote is None or named is None:
                errors.append(f"passage {item.passage}: the quote {item.quote[:80]!r} is not in any passage")
                continue
            if quote != item.quote:
                repairs.append(f"passage {named.number}: quote taken verbatim from the passage")
            if all(p.number != named.number for p, _ in found):
                found.append((named, quote))
        if not found and span:
            for passage in passages:
                if (quote := locate_quote(span, passage.text)) is not None:
                    repairs.append(f"no quote found; the answer is copied from passage {passage.number}")
                    return [(passage, quote)], []
        return found, errors

    def compose(
        self,
        question: str,
        kind: str,
        text: str,
        support: list[tuple[Passage, str]],
        spec: AnswerSpec,
        letter: str | None,
        repairs: list[str],
    ) -> Answer:
        """The cited answer: yes/no and options as "<choice> — <quote> [1]", spans and sentences as "<answer> [1]"."""
        citations = [
            Citation(
                number=n,
                chunk_id=p.chunk.id,
                paper_id=p.chunk.paper_id,
                locator=p.chunk.locator,
                quote=_cut(quote),
                cell=quote_cell(p.chunk, quote),
            )
            for n, (p, quote) in enumerate(support, 1)
        ]
        markers = "".join(f"[{c.number}]" for c in citations)
        first = citations[0].quote
        choice = spec.options[letter] if letter is not None else None
        if choice is None and kind in ("yes", "no"):
            choice = YES if kind == "yes" else NO
            if choice not in implicit_options(question):  # a Yes answers no question that is not worded as one
                repairs.append(f"kind {kind} for a question not asked as yes/no: the first quote answers")
                choice, text = None, first
        if choice is not None:
            words = polar_words(question, *support[0]) if letter is None else first
            text = f"{choice}{OPTION_SEPARATOR}{_cited(words, markers)}"
            return Answer(question=question, text=text, citations=citations, option=choice, sufficient=True)
        text = self.grounded_text(question, text, first, support, repairs)
        sentences = split_sentences(text)
        if len(sentences) > MAX_SENTENCES:
            repairs.append(f"answer cut to its first {MAX_SENTENCES} sentences")
            text = text[: sentences[MAX_SENTENCES - 1][1]]
        return Answer(question=question, text=_cited(text, markers), citations=citations, sufficient=True)

    def grounded_text(
        self, question: str, text: str, first: str, support: list[tuple[Passage, str]], repairs: list[str]
    ) -> str:
        """The answer's words, or the first quote when they are empty, not grounded in the cited text, only the
        question's words again, or (with ``verbatim``) not copied from a cited passage; copied words are given as
        the passage has them."""
        if not text:
            repairs.append("empty answer: the first quote answers")
            return first
        cited = " ".join(p.chunk.text for p, _ in support)
        if (problem := support_problem(text, cited, self.min_overlap)) is not None:
            repairs.append(f"answer not grounded ({problem}): the first quote answers")
            return first
        if names_nothing(question, text):
            repairs.append("answer only repeats the question's words: the first quote answers")
            return first
        copied = next((found for p, _ in support if (found := locate_quote(text, p.text)) is not None), None)
        if copied is not None:
            return copied
        if self.verbatim:
            repairs.append("answer not copied from a cited passage (verbatim answers): the first quote answers")
            return first
        return text

    def _fallback(
        self, question: str, chunks: Sequence[Chunk], spec: AnswerSpec, passages: list[Passage], reason: str
    ) -> CompactResult:
        """The deterministic reader's answer, noted with ``reason``."""
        fallback = Fallback(stage="read", reason=reason)
        self.recorder.fallback(fallback)
        return CompactResult(self.fallback(question, chunks, spec), passages, fallback=fallback)
