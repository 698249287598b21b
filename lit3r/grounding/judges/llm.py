"""A chat model as a judge: P(yes) from the first token's log-probabilities, else a structured verdict.

The yes/no request is sent with ``logprobs=True, top_logprobs=5`` bound to the model; ``ChatOpenAI`` puts
what the server returns in ``response_metadata["logprobs"]``. The score is then
P(yes) / (P(yes) + P(no)) over the first token's alternatives. When the server exposes no log-probabilities
the judge says so in the reason and, from then on, asks for a structured verdict
``{"supported": bool, "confidence": float}`` instead (score: the confidence in "supported").
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from lit3r.grounding.judge import JudgeError, Judgement
from lit3r.prompts.grounding import JUDGE_SYSTEM, render_judge

if TYPE_CHECKING:
    from lit3r.llm.wrapper import LLM

TOP_LOGPROBS = 5
_YES, _NO = "yes", "no"


class SupportVerdict(BaseModel):
    """Whether the evidence supports the claim."""

    supported: bool = Field(description="True when the evidence states the claim or it follows directly from it.")
    confidence: float = Field(ge=0, le=1, description="Probability, 0 to 1, that this verdict is right.")


def _word(token: str) -> str:
    """A token as a bare lower-case word ('Yes', ' yes', 'YES.' -> 'yes')."""
    return token.strip().strip(".,:;!\"'").lower()


def yes_probability(logprobs: Mapping[str, Any] | None) -> float | None:
    """P(yes) / (P(yes) + P(no)) at the first word token of an OpenAI ``logprobs`` object, or None.

    None when there are no log-probabilities, or neither "yes" nor "no" is among the first token's alternatives.
    """
    content = (logprobs or {}).get("content") or []
    first = next((t for t in content if _word(str(t.get("token", "")))), None)
    if first is None:
        return None
    alternatives = first.get("top_logprobs") or [first]
    mass = {_YES: 0.0, _NO: 0.0}
    for alternative in alternatives:
        word = _word(str(alternative.get("token", "")))
        if word in mass:
            mass[word] += math.exp(float(alternative["logprob"]))
    total = mass[_YES] + mass[_NO]
    return mass[_YES] / total if total > 0 else None


class LLMJudge:
    """Judges claims with a chat model through :class:`lit3r.llm.wrapper.LLM` (retries, trace records, budget).

    Args:
        llm: The wrapped chat model; its calls are recorded as ``grounding.judge`` (and ``.structured``).
        threshold: The least score that counts as supported.
        logprobs: Try the log-probability path first (False: always ask for a structured verdict).
    """

    name = "llm"

    def __init__(self, llm: LLM, *, threshold: float = 0.5, logprobs: bool = True) -> None:
        self.llm = llm
        self.threshold = threshold
        self.logprobs = logprobs
        self._scored = copy.copy(llm)
        self._scored.model = llm.model.bind(logprobs=True, top_logprobs=TOP_LOGPROBS)

    def judge(self, premise: str, hypothesis: str) -> Judgement:
        """The verdict on one claim; :class:`JudgeError` when the model call fails."""
        from lit3r.llm.errors import LLMError

        try:
            if self.logprobs:
                judged = self._by_logprobs(premise, hypothesis)
                if judged is not None:
                    return judged
            return self._structured(premise, hypothesis)
        except LLMError as exc:
            raise JudgeError(f"the LLM judge failed: {exc}") from exc

    def judge_many(self, pairs: Sequence[tuple[str, str]]) -> list[Judgement]:
        """One verdict per pair, one model call each."""
        return [self.judge(p, h) for p, h in pairs]

    def _by_logprobs(self, premise: str, hypothesis: str) -> Judgement | None:
        """The yes/no verdict scored by log-probabilities; None when the reply has none usable."""
        messages = [SystemMessage(JUDGE_SYSTEM), HumanMessage(render_judge(premise, hypothesis))]
        reply: AIMessage = self._scored.invoke(messages, name="grounding.judge")
        logprobs = reply.response_metadata.get("logprobs")
        if not logprobs:
            self.logprobs = False  # the server exposes none: ask for structured verdicts from now on
            return None
        score = yes_probability(logprobs)
        if score is None:
            return None
        return Judgement(score >= self.threshold, score, f"P(yes)={score:.3f}")

    def _structured(self, premise: str, hypothesis: str) -> Judgement:
        """The structured verdict; the score is the confidence that the claim is supported."""
        messages = [SystemMessage(JUDGE_SYSTEM), HumanMessage(render_judge(premise, hypothesis, structured=True))]
        verdict = self.llm.structured(messages, SupportVerdict, name="grounding.judge.structured")
        score = verdict.confidence if verdict.supported else 1.0 - verdict.confidence
        said = "yes" if verdict.supported else "no"
        return Judgement(score >= self.threshold, score, f"llm {said} (confidence {verdict.confidence:.2f})")
