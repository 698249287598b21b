"""An NLI cross-encoder as a judge: P(entailment) of (premise, claim) from a sequence-classification model.

Any checkpoint ``transformers`` can load with ``AutoModelForSequenceClassification`` works, from a local
path or a hub name (e.g. ``cross-encoder/nli-deberta-v3-base`` or ``microsoft/deberta-large-mnli``): the
entailment class is found in ``config.id2label`` by name. A premise longer than the model's input is cut
(``truncation="only_first"``), so the claim is always read whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lit3r.grounding.judge import JudgeConfigError, Judgement

DEFAULT_MAX_LENGTH = 512
"""Input tokens when neither the tokenizer nor the model config says less."""


def entailment_index(id2label: dict[int, str], source: str) -> int:
    """The class index whose label contains 'entail' (any case); :class:`JudgeConfigError` if none does."""
    found = [int(i) for i, label in id2label.items() if "entail" in str(label).lower()]
    if len(found) != 1:
        labels = ", ".join(f"{i}: {label!r}" for i, label in sorted(id2label.items()))
        raise JudgeConfigError(
            f"{source}: cannot tell the entailment class from config.id2label ({labels}); "
            "an NLI judge needs exactly one label containing 'entail'"
        )
    return found[0]


class NLIJudge:
    """P(entailment) of each ``(premise, hypothesis)`` pair; supported when it reaches ``threshold``.

    Args:
        model: A local path or a hub name of a sequence-classification NLI checkpoint.
        threshold: The least P(entailment) that counts as supported.
        batch_size: Pairs per forward pass in :meth:`judge_many`.
        max_length: Tokens per pair (default: the least of the tokenizer's and the model's limits, and 512).
        device: Torch device (default: CUDA when available, else CPU).
    """

    name = "nli"

    def __init__(
        self,
        model: str,
        *,
        threshold: float = 0.5,
        batch_size: int = 16,
        max_length: int | None = None,
        device: str | None = None,
    ) -> None:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model)
            self.model = AutoModelForSequenceClassification.from_pretrained(model)
        except (OSError, ValueError) as exc:
            raise JudgeConfigError(f"cannot load the NLI model {model!r}: {exc}") from exc
        self.entailment = entailment_index(self.model.config.id2label, model)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device).eval()
        self.source = model
        self.threshold = threshold
        self.batch_size = batch_size
        self.max_length = max_length or self._max_length()

    def _max_length(self) -> int:
        """The least of the tokenizer's limit, the model's position limit and :data:`DEFAULT_MAX_LENGTH`."""
        limits = [DEFAULT_MAX_LENGTH, self.tokenizer.model_max_length]
        positions = getattr(self.model.config, "max_position_embeddings", None)
        if positions:
            limits.append(positions)
        return int(min(limits))

    def scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(entailment) of each pair, in batches of ``batch_size``."""
        import torch

        out: list[float] = []
        for start in range(0, len(pairs), self.batch_size):
            batch = pairs[start : start + self.batch_size]
            inputs: Any = self.tokenizer(
                [p for p, _h in batch],
                [h for _p, h in batch],
                padding=True,
                truncation="only_first",
                max_length=self.max_length,
                return_tensors="pt",
            ).to(self.device)
            with torch.inference_mode():
                logits = self.model(**inputs).logits
            out.extend(torch.softmax(logits.float(), dim=-1)[:, self.entailment].tolist())
        return out

    def judge(self, premise: str, hypothesis: str) -> Judgement:
        """The verdict on one pair."""
        return self.judge_many([(premise, hypothesis)])[0]

    def judge_many(self, pairs: Sequence[tuple[str, str]]) -> list[Judgement]:
        """One verdict per pair, scored in batches."""
        return [
            Judgement(score >= self.threshold, score, f"P(entailment)={score:.3f}")
            for score in self.scores(list(pairs))
        ]
