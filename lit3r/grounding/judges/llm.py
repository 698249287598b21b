"""A chat model as a judge: P(yes) from the verdict token's log-probabilities, else a structured verdict.

The yes/no request is sent with ``logprobs=True, top_logprobs=5`` bound to the model; ``ChatOpenAI`` puts
what the server returns in ``response_metadata["logprobs"]``. The score is then P(yes) / (P(yes) + P(no))
over the alternatives of the verdict token (:func:`lit3r.llm.logprobs.yes_probability`). When the server
exposes no log-probabilities the judge says so in the reason and, from then on, asks for a structured verdict
``{"supported": bool, "confidence": float}`` instead (score: the confidence in "supported").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from lit3r.grounding.judge import JudgeError, Judgement
from lit3r.llm.logprobs import yes_probability
from lit3r.prompts.grounding import JUDGE_SYSTEM, render_judge

if TYPE_CHECKING:
    from lit3r.llm.wrapper import LLM

TOP_LOGPROBS = 5


class SupportVerdict(BaseModel):
    """Whether the evidence supports the claim."""

    supported: bool = Field(description="True when the evidence states the claim or it follows directly from it.")
    confidence: float = Field(ge=0, le=1, description="Probability, 0 to 1, that this verdict is right.")


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
        self._scored = llm.bind(logprobs=True, top_logprobs=TOP_LOGPROBS)

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
