"""Per-question budget: tokens, money, wall-clock seconds and retrieval rounds.

The budget only counts and reports; it never raises. The graph reads :attr:`Budget.exhausted` and, when it
names a reason, skips further planning and forces the answer step with what it has.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lit3r.llm.settings import LLMSettings


@dataclass
class Budget:
    """Limits for one question and what has been used so far. ``None`` means no limit."""

    max_tokens: int | None = None
    max_seconds: float | None = None
    max_rounds: int | None = None
    max_cost: float | None = None
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    tokens: int = 0
    cost: float = 0.0
    rounds: int = 0
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
        max_rounds: int | None = 3,
        clock: Callable[[], float] = time.monotonic,
    ) -> Budget:
        """A budget with the token and cost limits of ``llm`` and the given time and round limits."""
        return cls(
            max_tokens=llm.token_budget,
            max_seconds=max_seconds,
            max_rounds=max_rounds,
            max_cost=llm.cost_budget,
            clock=clock,
        )

    def charge(self, tokens: int, cost: float = 0.0) -> None:
        """Count one model call that used ``tokens`` (prompt + completion) and cost ``cost``."""
        with self._lock:
            self.tokens += tokens
            self.cost += cost
            self.calls += 1

    def complete_round(self) -> int:
        """Count one finished retrieve-verify round; returns the number of rounds done."""
        with self._lock:
            self.rounds += 1
            return self.rounds

    @property
    def elapsed_s(self) -> float:
        """Seconds since the budget was created."""
        return self.clock() - self.started

    @property
    def remaining_tokens(self) -> int | None:
        """Tokens left before the token limit (never negative), or None without a limit."""
        return None if self.max_tokens is None else max(0, self.max_tokens - self.tokens)

    @property
    def exhausted(self) -> str | None:
        """Why the budget is spent (e.g. ``'tokens: 1200 of 1000 used'``), or None while some is left."""
        elapsed = self.elapsed_s
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            return f"tokens: {self.tokens} of {self.max_tokens} used"
        if self.max_cost is not None and self.cost >= self.max_cost:
            return f"cost: {self.cost:.4f} of {self.max_cost:.4f} spent"
        if self.max_seconds is not None and elapsed >= self.max_seconds:
            return f"time: {elapsed:.1f} s of {self.max_seconds:g} s elapsed"
        if self.max_rounds is not None and self.rounds >= self.max_rounds:
            return f"rounds: {self.rounds} of {self.max_rounds} done"
        return None

    def snapshot(self) -> dict[str, Any]:
        """Usage and limits as plain data, for the trace."""
        return {
            "tokens": self.tokens,
            "cost": self.cost,
            "rounds": self.rounds,
            "calls": self.calls,
            "elapsed_s": round(self.elapsed_s, 3),
            "limits": {
                "tokens": self.max_tokens,
                "cost": self.max_cost,
                "seconds": self.max_seconds,
                "rounds": self.max_rounds,
            },
            "exhausted": self.exhausted,
        }
