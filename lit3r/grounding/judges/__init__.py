"""The three judges behind :class:`lit3r.grounding.judge.Judge`, and :func:`make_judge` to pick one.

* :class:`ExactJudge` ('exact'): the extractive mode's check, verbatim containment;
* :class:`NLIJudge` ('nli'): an NLI cross-encoder's P(entailment) (imports torch when built);
* :class:`LLMJudge` ('llm'): the chat model's P(yes), or its structured verdict.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from lit3r.grounding.judge import Judge, JudgeConfigError
from lit3r.grounding.judges.exact import ExactJudge

if TYPE_CHECKING:
    from lit3r.llm.wrapper import LLM
    from lit3r.settings import GroundingSettings

__all__ = ["ExactJudge", "judge_kind", "make_judge"]


def judge_kind(settings: GroundingSettings, *, has_llm: bool) -> str:
    """The judge ``settings.judge`` names, with 'auto' resolved (nli_model set > chat model > exact)."""
    if settings.judge != "auto":
        return settings.judge
    if settings.nli_model:
        return "nli"
    return "llm" if has_llm else "exact"


def make_judge(settings: GroundingSettings, llm: LLM | None = None) -> Judge:
    """The judge the settings name; :class:`JudgeConfigError` when what it needs is missing."""
    kind = judge_kind(settings, has_llm=llm is not None)
    if kind == "exact":
        return ExactJudge()
    if kind == "nli":
        if not settings.nli_model:
            raise JudgeConfigError("judge 'nli' needs grounding.nli_model (a local path or a hub name)")
        return _nli_judge(settings.nli_model, settings.threshold)
    if llm is None:
        raise JudgeConfigError("judge 'llm' needs a chat model: set llm.provider, or use judge 'exact' or 'nli'")
    from lit3r.grounding.judges.llm import LLMJudge

    return LLMJudge(llm, threshold=settings.threshold)


@lru_cache(maxsize=2)
def _nli_judge(model: str, threshold: float) -> Judge:
    """One loaded NLI judge per (model, threshold) in a process: runs share it instead of reloading weights."""
    from lit3r.grounding.judges.nli import NLIJudge

    return NLIJudge(model, threshold=threshold)
