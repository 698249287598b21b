"""Pointwise LLM reranking: one yes/no relevance question per passage to a chat model.

Every judgement is a call through :class:`lit3r.llm.wrapper.LLM`, so it gets that wrapper's retries (transient
errors only), a trace record and a budget charge like every other model call of the run. The score is P(yes)
read from the verdict token's log-probabilities when the endpoint returns them (OpenAI-compatible servers,
asked with ``logprobs=True``; :func:`lit3r.llm.logprobs.yes_probability`), else 1.0 / 0.0 from the JSON
verdict (validated with :class:`RelevanceVerdict`). The verdict is asked for in the text rather than through a
tool call because tool-call structured output hides the token log-probabilities. A reply that is neither
scores 0.0 with a warning; a failed call raises (:class:`~lit3r.llm.errors.LLMCallError`), since a dead
endpoint must not pass for irrelevance.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError, field_validator

from lit3r.llm.logprobs import yes_probability
from lit3r.prompts.rerank import RELEVANCE_SYSTEM, render_relevance

if TYPE_CHECKING:
    from lit3r.llm.wrapper import LLM

logger = logging.getLogger(__name__)

_JSON_OBJECT = re.compile(r"\{.*?\}", re.DOTALL)
_BARE_VERDICT = re.compile(r"\W*(yes|no)\W*", re.IGNORECASE)


class RelevanceVerdict(BaseModel):
    """The reply the prompt asks for."""

    relevant: Literal["yes", "no"] = Field(description="Whether the passage helps answer the question.")

    @field_validator("relevant", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return "yes" if value else "no"
        return value.strip().lower() if isinstance(value, str) else value


def relevance_messages(question: str, passage: str, max_chars: int) -> list[BaseMessage]:
    """The system and user messages for one (question, passage) judgement."""
    return [SystemMessage(RELEVANCE_SYSTEM), HumanMessage(render_relevance(question, passage, max_chars))]


def parse_verdict(text: str) -> RelevanceVerdict | None:
    """The JSON verdict in a reply (code fences and surrounding text allowed), a bare yes/no, or ``None``."""
    for candidate in _JSON_OBJECT.findall(text):
        try:
            return RelevanceVerdict.model_validate(json.loads(candidate))
        except (json.JSONDecodeError, ValidationError, TypeError):
            logger.debug("not a verdict object: %r", candidate)
    bare = _BARE_VERDICT.fullmatch(text)
    return RelevanceVerdict(relevant=bare.group(1)) if bare else None


def score_reply(message: AIMessage) -> float:
    """P(yes) from log-probabilities, else 1.0 / 0.0 from the verdict, else 0.0 with a warning."""
    probability = yes_probability(message.response_metadata.get("logprobs"))
    if probability is not None:
        return probability
    verdict = parse_verdict(str(message.text))
    if verdict is None:
        logger.warning("LLM reranker: unparseable relevance reply, scored 0.0: %.200r", message.text)
        return 0.0
    return 1.0 if verdict.relevant == "yes" else 0.0


class LLMPointwiseReranker:
    """Scores each passage by asking a chat model whether it helps answer the question.

    Args:
        llm: The wrapped chat model (its recorder and budget are the run's); OpenAI-compatible models are asked
            for log-probabilities.
        max_chars: Passage characters shown to the model.
        concurrency: Judgements in flight at once.
        logprobs: Ask for log-probabilities when the model takes them (off for endpoints that reject them).
        top_logprobs: Alternatives returned per token.
    """

    name = "llm"

    def __init__(
        self,
        llm: LLM,
        *,
        max_chars: int = 1800,
        concurrency: int = 4,
        logprobs: bool = True,
        top_logprobs: int = 5,
    ) -> None:
        self.max_chars, self.concurrency = max_chars, max(1, concurrency)
        self.llm = llm.bind(logprobs=True, top_logprobs=top_logprobs) if logprobs and llm.accepts_logprobs else llm

    def judge(self, question: str, passage: str) -> float:
        """The relevance score of one passage (one recorded model call, retried on transient errors)."""
        reply = self.llm.invoke(relevance_messages(question, passage, self.max_chars), name="rerank.relevance")
        return score_reply(reply)

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One P(yes)-like score per passage, in order."""
        if not passages:
            return []
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(passages))) as pool:
            return list(pool.map(lambda passage: self.judge(query, passage), passages))
