"""Scripted doubles of the retrieval pieces: reranker, decomposer, verifier and HyDE writer."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lit3r.models import PaperEvidence
from lit3r.retrieval.planning import Verdict


class ScriptedReranker:
    """Reranker double: scores come from a function of (position, passage); every call is recorded."""

    def __init__(
        self, score: Callable[[int, str], float] = lambda position, passage: -float(position), name: str = "scripted"
    ) -> None:
        self.name = name
        self._score = score
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        self.calls.append((query, list(passages)))
        return [self._score(i, p) for i, p in enumerate(passages)]


class ScriptedDecomposer:
    """Returns the scripted subqueries for each round (the last entry repeats); records every call."""

    name = "scripted"

    def __init__(self, rounds: list[list[str]]) -> None:
        self.rounds = rounds
        self.calls: list[tuple[str, list[str], str, int]] = []

    def decompose(self, question: str, previous: Sequence[str], missing: str, limit: int) -> list[str]:
        self.calls.append((question, list(previous), missing, limit))
        return self.rounds[min(len(self.calls), len(self.rounds)) - 1]


class EndlessDecomposer:
    """Always has one new subquery."""

    name = "endless"

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], str]] = []

    def decompose(self, question: str, previous: Sequence[str], missing: str, limit: int) -> list[str]:
        self.calls.append((list(previous), missing))
        return [f"okapi lexical saturation variant {len(self.calls)}"]


class ScriptedVerifier:
    """Returns the scripted verdicts in turn (the last repeats); records what it saw."""

    name = "scripted"

    def __init__(self, verdicts: list[Verdict]) -> None:
        self.verdicts = verdicts
        self.seen: list[tuple[list[PaperEvidence], float | None]] = []

    def verify(self, question: str, evidence: Sequence[PaperEvidence], best_score: float | None) -> Verdict:
        self.seen.append((list(evidence), best_score))
        return self.verdicts[min(len(self.seen), len(self.verdicts)) - 1]


class AlwaysInsufficient(ScriptedVerifier):
    """Never finds enough evidence; the missing note counts the calls."""

    name = "never"

    def __init__(self) -> None:
        super().__init__([])

    @property
    def calls(self) -> int:
        return len(self.seen)

    def verify(self, question: str, evidence: Sequence[PaperEvidence], best_score: float | None) -> Verdict:
        self.seen.append((list(evidence), best_score))
        return Verdict(sufficient=False, missing=f"still missing after {self.calls}")


class ScriptedHyde:
    """Writes the same passage for every query; records the queries."""

    name = "scripted-hyde"

    def __init__(self, passage: str) -> None:
        self.passage = passage
        self.asked: list[str] = []

    def write(self, query: str) -> str:
        self.asked.append(query)
        return self.passage
