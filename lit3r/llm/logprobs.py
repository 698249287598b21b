"""Reading a yes/no verdict's probability from the token log-probabilities an OpenAI-compatible server returns.

A request sent with ``logprobs=True, top_logprobs=N`` gets, per generated token, its log-probability and the
``N`` likeliest alternatives; langchain-openai puts them in ``AIMessage.response_metadata["logprobs"]``. The
LLM reranker (a JSON verdict ``{"relevant": "yes"}``) and the LLM judge (a bare "yes"/"no") both score by
:func:`yes_probability` at the token that carries the verdict.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

YES, NO = "yes", "no"


def verdict_word(token: object) -> str | None:
    """'yes' or 'no' when a token reads as that word (case, spaces, quotes and punctuation ignored), else None."""
    word = str(token or "").strip().strip(".,:;!\"'").lower()
    return word if word in (YES, NO) else None


def yes_probability(logprobs: Mapping[str, Any] | None) -> float | None:
    """P(yes) / (P(yes) + P(no)) at the first generated token that reads yes or no, over its alternatives.

    Tokens before it (JSON punctuation, a key, white space) are skipped. When no alternative of that token
    reads yes or no (the server returned no alternatives), the token itself decides: 1.0 or 0.0. None when the
    reply has no log-probabilities or no token reads yes or no.
    """
    for entry in (logprobs or {}).get("content") or []:
        chosen = verdict_word(entry.get("token"))
        if chosen is None:
            continue
        mass = {YES: 0.0, NO: 0.0}
        for alternative in entry.get("top_logprobs") or [entry]:
            word = verdict_word(alternative.get("token"))
            if word is not None:
                mass[word] += math.exp(float(alternative.get("logprob", -math.inf)))
        total = mass[YES] + mass[NO]
        return mass[YES] / total if total > 0 else float(chosen == YES)
    return None
