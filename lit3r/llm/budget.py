"""Per-question budget: tokens, money and wall-clock seconds.

The budget only counts and reports; it never raises. The graph reads :attr:`Budget.exhausted` and, when it
returns an :class:`Exhaustion`, skips further planning and forces the answer step with what it has. Retrieval
rounds are not a budget: their one cap is ``settings.retriever.max_rounds``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from lit3r.settings.llm import LLMSettings


@dataclass(frozen=True)
class Exhaustion:
    """Which limit a question's budget has reached, and by how much."""

    kind: Literal["tokens", "cost", "time"]
    detail: str
    """E.g. 'tokens: 1200 of 1000 used'."""


@dataclass
class Budget:
    """Limits for one question and what has been used so far. ``None`` means no limit."""

    max_tokens: int | None = None
    max_seconds: float | None = None
    max_cost: float | None = None
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    tokens: int = 0
    cost: float = 0.0
    calls: int = 0
    started: float = field(init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.started = self.clock()

    @classmethod
    def for_question(
        cls,
        llm: LLMSettings,
        *,
        max_seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> Budget:
        """A budget with the token and cost limits of ``llm`` and the given time limit."""
        return cls(max_tokens=llm.token_budget, max_seconds=max_seconds, max_cost=llm.cost_budget, clock=clock)

    def charge(self, tokens: int, cost: float = 0.0) -> None:
        """Count one model call that used ``tokens`` (prompt + completion) and cost ``cost``."""
        with self._lock:
            self.tokens += tokens
            self.cost += cost
            self.calls += 1

    @property
    def elapsed_s(self) -> float:
        """Seconds since the budget was created."""
        return self.clock() - self.started

    @property
    def remaining_tokens(self) -> int | None:
        """Tokens left before the token limit (never negative), or None without a limit."""
        return None if self.max_tokens is None else max(0, self.max_tokens - self.tokens)

    @property
    def exhausted(self) -> Exhaustion | None:
        """Which limit is reached (tokens, then cost, then time), or None while some of each is left."""
        elapsed = self.elapsed_s
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            return Exhaustion("tokens", f"tokens: {self.tokens} of {self.max_tokens} used")
        if self.max_cost is not None and self.cost >= self.max_cost:
            return Exhaustion("cost", f"cost: {self.cost:.4f} of {self.max_cost:.4f} spent")
        if self.max_seconds is not None and elapsed >= self.max_seconds:
            return Exhaustion("time", f"time: {elapsed:.1f} s of {self.max_seconds:g} s elapsed")
        return None

    def snapshot(self) -> dict[str, Any]:
        """Usage and limits as plain data, for the trace."""
        exhausted = self.exhausted
        return {
            "tokens": self.tokens,
            "cost": self.cost,
            "calls": self.calls,
            "elapsed_s": round(self.elapsed_s, 3),
            "limits": {"tokens": self.max_tokens, "cost": self.max_cost, "seconds": self.max_seconds},
            "exhausted": exhausted.detail if exhausted else None,
        }
