"""The LLM verdict on a claim from one paper's passages: structured output, quotes verified against the chunks.

The chat model (through :class:`lit3r.llm.wrapper.LLM`: retries, trace records, budget) replies with a
:class:`StanceReply`. Each quote must stand in the passage it names: the passage sentence that holds it (compared
loosely: case, quotes, dashes and white space, :func:`lit3r.grounding.judges.exact.normalise`) is shown, else the
sentence holding nine tenths of its words; a quote with neither is dropped. What is shown is always
the chunk's own text. A verdict left without a standing quote, or a failed call, falls back to the offline
verdict, and the reason says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from lit3r.grounding.judges.exact import normalise
from lit3r.grounding.lexicon import words
from lit3r.grounding.stance import OfflineStance, PaperVerdict, Passage, Quote, Verdict, sentence_spans
from lit3r.prompts.stance import STANCE_SYSTEM, render_stance

if TYPE_CHECKING:
    from lit3r.llm.wrapper import LLM

MAX_QUOTES = 3
NEAR = 0.9


class QuoteReply(BaseModel):
    passage: int = Field(description="Number of the passage the quote is copied from (1-based).")
    quote: str = Field(description="A sentence copied exactly from that passage.")
    role: Literal["supports", "contradicts"]


class StanceReply(BaseModel):
    """What the paper says about the claim."""

    verdict: Verdict
    confidence: float = Field(ge=0, le=1, description="Probability, 0 to 1, that the verdict is right.")
    quotes: list[QuoteReply] = Field(default_factory=list)


def standing_quote(quote: str, text: str) -> str | None:
    """The sentence of ``text`` that ``quote`` stands for: the one holding it (loosely compared), else the one
    holding :data:`NEAR` of its words; None when there is none (what is shown is always the chunk's own text)."""
    wanted, mine = normalise(quote), set(words(quote))
    if not wanted or not mine:
        return None
    sentences = [text[start:end] for start, end in sentence_spans(text)]
    for sentence in sentences:
        if wanted in normalise(sentence):
            return sentence
    best, share = None, 0.0
    for sentence in sentences:
        found = len(mine & set(words(sentence))) / len(mine)
        if found > share:
            best, share = sentence, found
    return best if share >= NEAR else None


class LLMStance:
    """The verdict of a chat model, its quotes verified; the offline verdict when it gives none that stands."""

    name = "llm"

    def __init__(self, llm: LLM, fallback: OfflineStance | None = None) -> None:
        self.llm = llm
        self.fallback = fallback or OfflineStance()

    def judge(self, claim: str, passages: Sequence[Passage]) -> PaperVerdict:
        from lit3r.llm.errors import LLMError

        messages = [SystemMessage(STANCE_SYSTEM), HumanMessage(render_stance(claim, [p.text for p in passages]))]
        try:
            reply = self.llm.structured(messages, StanceReply, name="check.stance")
        except LLMError as exc:
            return self._fallback(claim, passages, f"the model failed: {exc}")
        quotes = []
        for item in reply.quotes[:MAX_QUOTES]:
            if not 1 <= item.passage <= len(passages):
                continue
            passage = passages[item.passage - 1]
            text = standing_quote(item.quote, passage.text)
            if text is not None:
                quotes.append(Quote(passage.chunk_id, text, item.role, reply.confidence))
        if reply.verdict == "not_addressed":
            return PaperVerdict("not_addressed", reply.confidence, [], 0.0, 0.5, "llm: not addressed", "llm")
        if not quotes:
            return self._fallback(claim, passages, f"llm said {reply.verdict} with no quote standing in its passage")
        roles = {q.role for q in quotes}
        verdict: Verdict = reply.verdict
        if verdict in ("supports", "contradicts") and verdict not in roles:
            return self._fallback(claim, passages, f"llm said {verdict} but quoted only {'/'.join(sorted(roles))}")
        if verdict == "mixed" and len(roles) < 2:
            verdict = roles.pop()  # type: ignore[assignment]
        support = (
            reply.confidence if verdict == "supports" else 1 - reply.confidence if verdict == "contradicts" else 0.5
        )
        return PaperVerdict(verdict, reply.confidence, quotes, 1.0, support, f"llm {reply.verdict}", "llm")

    def _fallback(self, claim: str, passages: Sequence[Passage], why: str) -> PaperVerdict:
        found = self.fallback.judge(claim, passages)
        return PaperVerdict(
            found.verdict, found.confidence, found.quotes, found.relevance, found.support,
            f"{why}; offline verdict: {found.reason}", "offline",
        )  # fmt: skip
