"""The entailment judge interface every grounding step and citation metric is written against."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class Judgement:
    """One verdict: does ``premise`` support ``hypothesis``?"""

    supported: bool
    score: float
    """Probability-like support score in [0, 1]; ``supported`` is ``score >= threshold`` for scored judges."""
    reason: str = ""
    """Short machine-readable reason ('quoted', 'entailment', 'llm yes', 'not found in premise', ...)."""


@runtime_checkable
class Judge(Protocol):
    """Decides whether a premise (evidence text) entails a hypothesis (a claim).

    Implementations: the exact check of the extractive mode, an NLI cross-encoder, an LLM judge.
    ``judge_many`` exists so batched models score several pairs in one forward pass.
    """

    name: str

    def judge(self, premise: str, hypothesis: str) -> Judgement: ...

    def judge_many(self, pairs: Sequence[tuple[str, str]]) -> list[Judgement]: ...


class JudgeError(RuntimeError):
    """A judge could not give a verdict (its model call failed); the answer is left unverified."""


class JudgeConfigError(ValueError):
    """The settings cannot build the judge they name (no model path, no chat model, no entailment label)."""
