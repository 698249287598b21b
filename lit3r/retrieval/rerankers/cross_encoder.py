"""Cross-encoder rerankers: one forward pass per (query, passage) pair.

Three recipes, chosen from the checkpoint's own ``config.json`` when ``kind='auto'``:

* encoder (``*ForSequenceClassification``, the bge-reranker family): FlagEmbedding's
  ``FlagReranker``; the score is the classification logit.
* llm, Qwen3-Reranker (``Qwen3ForCausalLM``): FlagEmbedding 1.4.2 has no class for it, so the
  model card's recipe is done here: its system prompt and chat frame, and the score is
  ``logit("yes") - logit("no")`` at the last position (the log-odds of the model card's
  ``softmax([no, yes])[yes]``).
* llm, other decoders (bge-reranker-v2-gemma style): FlagEmbedding's ``FlagLLMReranker``; the
  score is the ``"Yes"`` logit after its A:/B: prompt.

Scores are raw (logits / log-odds) unless ``normalize=True`` applies a sigmoid. Weights load on the
first :meth:`CrossEncoderReranker.score` call, from a local folder, the Hugging Face cache or, unless
``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE`` is set, the hub; missing weights raise ``ValueError``.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

import numpy as np
import torch

Kind = Literal["auto", "encoder", "llm"]
_NOT_NEEDED = ["*.onnx", "onnx/*", "openvino/*", "*.h5", "*.msgpack", "*.ot", "*.gguf"]  # skipped on download

QWEN3_SYSTEM = (
    "Judge whether the Document meets the requirements based on the Query and the Instruct provided. "
    'Note that the answer can only be "yes" or "no".'
)
QWEN3_PREFIX = f"<|im_start|>system\n{QWEN3_SYSTEM}<|im_end|>\n<|im_start|>user\n"
QWEN3_SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
QWEN3_PAIR = "<Instruct>: {instruction}\n<Query>: {query}\n<Document>: {document}"
# The model card's default instruction is for web search; the card invites task-specific ones.
QWEN3_INSTRUCTION = "Given a question about scientific papers, retrieve passages that answer the question"


class _Backend(Protocol):
    def compute_score(self, sentence_pairs: list[tuple[str, str]], **kwargs) -> list[float]: ...


def _offline() -> bool:
    """Whether the environment forbids hub access (read at call time, not at import)."""
    flags = (os.environ.get(name, "") for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))
    return any(flag.strip().lower() in {"1", "true", "yes", "on"} for flag in flags)


def resolve_weights(model: str) -> Path:
    """A local folder holding ``model``: a path, the Hugging Face cache, or (when online) a hub download.

    Raises:
        ValueError: naming the model, when the weights are not on this machine and cannot be fetched.
    """
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, HFValidationError

    from lit3r.index.model_files import resolve_model_path

    try:
        return resolve_model_path(model)
    except ValueError as local_error:
        if _offline() or Path(model).expanduser().is_absolute():
            why = " and HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE forbids downloads" if _offline() else ""
            raise ValueError(f"reranker model {model!r}: weights not found locally{why}") from local_error
    try:
        return Path(snapshot_download(model, ignore_patterns=_NOT_NEEDED))
    except (HfHubHTTPError, HFValidationError, OSError) as exc:
        raise ValueError(f"reranker model {model!r}: not found locally and could not be downloaded: {exc}") from exc


def model_kind(path: Path) -> Literal["encoder", "llm"]:
    """'encoder' for sequence-classification checkpoints, 'llm' for causal-LM ones (from ``config.json``)."""
    config_file = path / "config.json"
    if not config_file.exists():
        raise ValueError(f"reranker model at {path}: no config.json")
    architectures = json.loads(config_file.read_text(encoding="utf-8")).get("architectures") or []
    if any("ForSequenceClassification" in a for a in architectures):
        return "encoder"
    if any("ForCausalLM" in a for a in architectures):
        return "llm"
    raise ValueError(f"reranker model at {path}: cannot tell the reranker kind from architectures {architectures}")


def _model_type(path: Path) -> str:
    return str(json.loads((path / "config.json").read_text(encoding="utf-8")).get("model_type", ""))


def _device() -> str:
    return "cuda:0" if torch.cuda.is_available() else "cpu"


class Qwen3Reranker:
    """Qwen3-Reranker scored with the model card's prompt: log-odds of "yes" against "no" at the last token."""

    def __init__(self, path: str, *, use_fp16: bool = False, instruction: str = QWEN3_INSTRUCTION) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.device = _device()
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        dtype = torch.float16 if use_fp16 and self.device != "cpu" else torch.float32
        self.model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype).to(self.device).eval()
        self.instruction = instruction
        self.prefix = self.tokenizer.encode(QWEN3_PREFIX, add_special_tokens=False)
        self.suffix = self.tokenizer.encode(QWEN3_SUFFIX, add_special_tokens=False)
        self.yes_id = self.tokenizer.convert_tokens_to_ids("yes")
        self.no_id = self.tokenizer.convert_tokens_to_ids("no")
        if self.tokenizer.unk_token_id is not None and self.tokenizer.unk_token_id in (self.yes_id, self.no_id):
            raise ValueError(f"reranker model at {path}: no 'yes'/'no' tokens, not a Qwen3-Reranker checkpoint")

    def _inputs(self, pairs: list[tuple[str, str]], max_length: int) -> dict[str, torch.Tensor]:
        texts = [QWEN3_PAIR.format(instruction=self.instruction, query=q, document=d) for q, d in pairs]
        budget = max(1, max_length - len(self.prefix) - len(self.suffix))
        ids = self.tokenizer(texts, add_special_tokens=False, truncation=True, max_length=budget)["input_ids"]
        rows = [self.prefix + row + self.suffix for row in ids]
        width, pad = max(len(row) for row in rows), self.tokenizer.pad_token_id or 0
        input_ids = torch.tensor([[pad] * (width - len(row)) + row for row in rows])  # left padding
        mask = torch.tensor([[0] * (width - len(row)) + [1] * len(row) for row in rows])
        positions = (mask.cumsum(-1) - 1).clamp(min=0)  # count from each sequence's first real token
        inputs = {"input_ids": input_ids, "attention_mask": mask, "position_ids": positions}
        return {key: value.to(self.device) for key, value in inputs.items()}

    @torch.inference_mode()
    def compute_score(
        self, sentence_pairs: list[tuple[str, str]], *, batch_size: int, max_length: int, normalize: bool
    ) -> list[float]:
        """One score per pair: ``logit(yes) - logit(no)``, or its sigmoid (= P(yes)) when ``normalize``."""
        scores: list[float] = []
        for start in range(0, len(sentence_pairs), batch_size):
            inputs = self._inputs(sentence_pairs[start : start + batch_size], max_length)
            last = self.model(**inputs).logits[:, -1, :].float()
            log_odds = last[:, self.yes_id] - last[:, self.no_id]
            scores.extend((torch.sigmoid(log_odds) if normalize else log_odds).cpu().tolist())
        return scores


def _load_backend(path: Path, kind: Literal["encoder", "llm"], use_fp16: bool) -> tuple[_Backend, str]:
    """The scoring object for a checkpoint and the recipe's name."""
    if kind == "llm" and _model_type(path) == "qwen3":
        return Qwen3Reranker(str(path), use_fp16=use_fp16), "qwen3"
    from FlagEmbedding import FlagLLMReranker, FlagReranker

    if kind == "llm":
        return FlagLLMReranker(str(path), use_fp16=use_fp16, devices=_device()), "flag-llm"
    return FlagReranker(str(path), use_fp16=use_fp16, devices=_device()), "flag-encoder"


class CrossEncoderReranker:
    """A cross-encoder reranker (bge-reranker, bge-reranker-v2-gemma, Qwen3-Reranker), loaded on first use.

    Args:
        model: A local folder or a Hugging Face model name.
        use_fp16: Half precision on GPU (ignored on CPU).
        batch_size: Pairs per forward pass.
        max_length: Tokens per (query, passage) pair; passages are truncated first.
        kind: 'encoder', 'llm', or 'auto' to read it from the checkpoint's architectures.
        normalize: Sigmoid the raw logits into (0, 1).
    """

    def __init__(
        self,
        model: str,
        *,
        use_fp16: bool = False,
        batch_size: int = 32,
        max_length: int = 512,
        kind: Kind = "auto",
        normalize: bool = False,
    ) -> None:
        if kind not in ("auto", "encoder", "llm"):
            raise ValueError(f"kind must be 'auto', 'encoder' or 'llm', not {kind!r}")
        self.model = model
        self.name = f"cross-encoder:{model}"
        self.use_fp16, self.batch_size, self.max_length = use_fp16, batch_size, max_length
        self.kind, self.normalize = kind, normalize
        self.recipe: str | None = None
        self._backend: _Backend | None = None
        self._lock = threading.Lock()

    def _load(self) -> _Backend:
        with self._lock:
            if self._backend is None:
                path = resolve_weights(self.model)
                kind = model_kind(path) if self.kind == "auto" else self.kind
                self._backend, self.recipe = _load_backend(path, kind, self.use_fp16)
            return self._backend

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One score per passage, higher is more relevant; raw logits unless ``normalize``."""
        if not passages:
            return []
        backend = self._load()
        pairs = [(query, passage) for passage in passages]
        scores = backend.compute_score(
            pairs, batch_size=self.batch_size, max_length=self.max_length, normalize=self.normalize
        )
        return [float(s) for s in np.atleast_1d(np.asarray(scores, dtype=np.float64))]
