"""SPECTER2 paper encoder through ``adapters``: a base model plus proximity and ad-hoc query adapters.

Papers are embedded as ``title + tokenizer.sep_token + abstract`` (see
:func:`lit3r.index.encoders.paper_text`) with CLS pooling and the proximity
adapter active; queries go through the ad-hoc query adapter when one is given.
"""

from __future__ import annotations

import threading
from functools import lru_cache

import numpy as np
import torch
from tqdm.auto import tqdm

from lit3r.index.model_files import empty_vectors, resolve_model_path, torch_device, unit_rows
from lit3r.settings import PaperEmbedderSettings


@lru_cache(maxsize=2)
def _specter2(base: str, proximity: str | None, query: str | None):
    """A SPECTER2 base model with its proximity (active) and ad-hoc query adapters loaded."""
    from adapters import AutoAdapterModel
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True)
    model = AutoAdapterModel.from_pretrained(base, local_files_only=True)
    if proximity:
        model.load_adapter(proximity, load_as="proximity", set_active=True)
    if query:
        model.load_adapter(query, load_as="adhoc_query")
    return tokenizer, model.to(torch_device()).eval()


class Specter2Encoder:
    """SPECTER2: CLS vectors of ``title [SEP] abstract`` (proximity adapter) and of queries (ad-hoc query adapter)."""

    def __init__(self, settings: PaperEmbedderSettings) -> None:
        if not settings.model:
            raise ValueError("paper_embedder.model is not set")
        adapter_paths = [
            str(resolve_model_path(a)) if a else None for a in (settings.proximity_adapter, settings.query_adapter)
        ]
        self.tokenizer, self.model = _specter2(str(resolve_model_path(settings.model)), *adapter_paths)
        self.has_proximity, self.has_query = (p is not None for p in adapter_paths)
        self.name = f"specter2:{settings.model}"
        self.dim = int(self.model.config.hidden_size)
        self.paper_separator = self.tokenizer.sep_token
        self.settings = settings
        self._lock = threading.Lock()  # the active adapter is model state

    @torch.inference_mode()
    def _encode(self, texts: list[str], adapter: str | None, show_progress: bool) -> np.ndarray:
        if not texts:
            return empty_vectors(self.dim)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        size, out = self.settings.batch_size, np.empty((len(texts), self.dim), dtype=np.float32)
        with self._lock:
            if adapter:
                self.model.set_active_adapters(adapter)
            for start in tqdm(range(0, len(texts), size), disable=not show_progress, desc="SPECTER2"):
                rows = order[start : start + size]
                inputs = self.tokenizer(
                    [texts[i] for i in rows],
                    padding=True,
                    truncation=True,
                    max_length=self.settings.max_length,
                    return_tensors="pt",
                    return_token_type_ids=False,
                ).to(self.model.device)
                out[rows] = unit_rows(self.model(**inputs).last_hidden_state[:, 0, :])
        return out

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Vectors of ``title + sep_token + abstract`` texts (see :func:`paper_text`)."""
        return self._encode(texts, "proximity" if self.has_proximity else None, show_progress)

    def encode_queries(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Query vectors through the ad-hoc query adapter (the proximity adapter when none is given)."""
        adapter = "adhoc_query" if self.has_query else ("proximity" if self.has_proximity else None)
        return self._encode(texts, adapter, show_progress)
