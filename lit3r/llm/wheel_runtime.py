"""gpt4all's prebuilt llama.cpp as a generator: a prompt in, its continuation out, the shared prefix kept.

:class:`Gpt4AllGenerator` runs one GGUF on the CPU through gpt4all's binding (``LLModel.prompt_model``);
:class:`PrefixCache` decides which part of a new prompt is already in the model's context and where to split the
rest. Tests pass any object with :class:`Generator`'s ``generate`` instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

REPEAT_PENALTY = 1.0
REPEAT_LAST_N = 64
"""No repeat penalty (1.0; llama-cpp-python's server defaults to 1.1 over the last 64 tokens). The readers copy
quotes verbatim from passages in the prompt, so a penalty on recent tokens penalises the very words to copy (and
the prompt's worked example). Measured side by side with the packaged 1.5B model (docs/BENCHMARKS.md, session 11):
QASPER in paper, first 24 questions, Answer F1 0.223 at 1.0 against 0.175 at 1.1 (7 answers differ); PubMedQA
every 20th, 68.0 against 72.0 (one answer differs); SciFact every 16th claim, "mixed" 6 times of 13 against 11."""
PROMPT_BATCH = 128
"""Prompt tokens per batch (gpt4all's upper bound)."""


@dataclass
class Generation:
    """One completion: the text after the prompt, token counts, and why it stopped."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # "stop" (end of turn or the caller's stop), "length" (max_tokens)
    reused_tokens: int = 0
    """Prompt tokens not evaluated again: the prefix shared with earlier calls."""


class Generator(Protocol):
    """Continues a prompt (tests pass a scripted one)."""

    def generate(
        self,
        prompt: str,
        *,
        max_tokens: int,
        temperature: float,
        boundaries: Sequence[int] = (),
        stop: Callable[[str], bool] | None = None,
    ) -> Generation:
        """The continuation of ``prompt``; ``stop(text so far)`` ends it early; ``boundaries`` are offsets where
        the prompt may be split for prefix reuse."""
        ...


class ContextOverflow(ValueError):
    """The prompt does not fit the context window."""


def line_boundaries(text: str, end: int) -> list[int]:
    """Offsets up to ``end`` right after a run of newlines that is followed by a non-space character: splitting
    a byte-level BPE prompt there tokenizes as the whole does (no pre-token spans such a point)."""
    return [m.end() for m in re.finditer(r"\n+(?=\S)", text[:end])]


class PrefixCache:
    """Which pieces of a prompt are in the model's context already, and how to split the rest.

    The pieces evaluated so far are remembered with their token counts; a new prompt that starts with some of
    them rewinds the context to their end and evaluates only the rest. The rest is split at message starts
    and, for a byte-level BPE tokenizer, at the last line boundary the new prompt shares with the previous one,
    so a fixed instruction block at the head of a message is evaluated once it has been seen twice (llama.cpp's
    server reuses the prefix shared with the previous call token by token).
    """

    def __init__(self, *, bpe: bool) -> None:
        self.bpe = bpe
        self.pieces: list[tuple[str, int]] = []
        """The prompt pieces in the context now, in order, with their token counts."""

    def plan(self, prompt: str, boundaries: Sequence[int] = ()) -> tuple[int, int, list[tuple[int, int]]]:
        """(pieces kept, their tokens, the (start, end) spans of ``prompt`` still to evaluate, in order)."""
        kept = chars = tokens = 0
        for text, count in self.pieces:
            if not prompt.startswith(text, chars):
                break
            kept, chars, tokens = kept + 1, chars + len(text), tokens + count
        cuts = {b for b in boundaries if chars < b < len(prompt)}
        if self.bpe and self.pieces:
            previous = "".join(text for text, _ in self.pieces)
            shared = next((i for i, (a, b) in enumerate(zip(prompt, previous, strict=False)) if a != b), None)
            shared = min(len(prompt), len(previous)) if shared is None else shared
            cuts.update(b for b in line_boundaries(prompt, shared)[-1:] if chars < b < len(prompt))
        edges = [chars, *sorted(cuts), len(prompt)]
        return kept, tokens, list(zip(edges, edges[1:], strict=False))

    def keep(self, kept: int, evaluated: list[tuple[str, int]]) -> None:
        """The context now holds the first ``kept`` pieces, then ``evaluated``."""
        self.pieces = self.pieces[:kept] + evaluated


class Gpt4AllGenerator:
    """gpt4all's llama.cpp on one GGUF, CPU only, with the evaluated prompt kept between calls (:class:`PrefixCache`).

    gpt4all evaluates a prompt in pieces, each continuing the context (``n_past``): setting ``n_past`` back to
    the end of the pieces a new prompt shares drops the rest of the context (llama.cpp's KV cache past it).
    """

    def __init__(self, model: Path, *, n_ctx: int, n_threads: int, bpe: bool) -> None:
        from gpt4all import GPT4All

        self._gpt4all = GPT4All(
            model.name, model_path=str(model.parent), allow_download=False, device="cpu", n_ctx=n_ctx, verbose=False
        )
        self.model = self._gpt4all.model
        self.model.set_thread_count(n_threads)
        self.cache = PrefixCache(bpe=bpe)

    def _run(self, text: str, n_predict: int, params: dict[str, Any], on_token: Callable[[int, str], bool]) -> int:
        """Evaluate ``text`` after the context (then generate up to ``n_predict`` tokens); its prompt tokens."""
        count = 0

        def prompt_callback(_token: int) -> bool:
            nonlocal count
            count += 1
            return True

        self.model._prompt_callback = prompt_callback  # the binding passes this one to llama.cpp for each token
        # "%1%2": the prompt as it is; a template without %2 would have gpt4all append a blank line after the reply
        self.model.prompt_model(text, "%1%2", on_token, n_predict=n_predict, special=True, **params)
        return count

    def generate(
        self,
        prompt: str,
        *,
        max_tokens: int,
        temperature: float,
        boundaries: Sequence[int] = (),
        stop: Callable[[str], bool] | None = None,
    ) -> Generation:
        kept, past, spans = self.cache.plan(prompt, boundaries)
        params: dict[str, Any] = {"repeat_penalty": REPEAT_PENALTY, "repeat_last_n": REPEAT_LAST_N}
        params["n_batch"] = PROMPT_BATCH
        params |= {"temp": 0.0, "top_k": 1} if temperature <= 0 else {"temp": temperature, "top_k": 40, "top_p": 0.95}
        self.cache.keep(kept, [])  # until this call has finished, the context past the kept pieces is unknown
        self.model._set_context(reset_context=True)
        self.model.context.n_past = past
        out: list[str] = []
        errors: list[str] = []
        stopped = False

        def on_token(token: int, piece: str) -> bool:
            nonlocal stopped
            if token == -1:  # gpt4all reports an error (a prompt beyond the context) as a response
                errors.append(piece)
                return False
            out.append(piece)
            if stop is not None and stop("".join(out)):
                stopped = True
                return False
            return True

        evaluated = []
        for n, (a, b) in enumerate(spans):
            count = self._run(prompt[a:b], max_tokens if n == len(spans) - 1 else 0, params, on_token)
            if errors:
                raise ContextOverflow(errors[0])
            evaluated.append((prompt[a:b], count))
        self.cache.keep(kept, evaluated)
        finish = "length" if not stopped and len(out) >= max_tokens else "stop"
        return Generation("".join(out), past + sum(n for _, n in evaluated), len(out), finish, reused_tokens=past)
