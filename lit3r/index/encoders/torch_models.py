"""Encoders run by PyTorch: sentence-transformers and FlagEmbedding.

FlagEmbedding's pooling is read from the model's own sentence-transformers
configuration, never taken from the library's CLS default.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from lit3r.index.model_files import (
    empty_vectors,
    model_pooling,
    resolve_model_path,
    torch_device,
    unit_rows,
)
from lit3r.settings import EmbedderSettings


@lru_cache(maxsize=4)
def _sentence_transformer(path: str, max_length: int, pooling: str):
    """A sentence-transformers model, with its pooling replaced when ``pooling`` is not 'auto'."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling

    model = SentenceTransformer(path, local_files_only=True)
    model.max_seq_length = max_length
    if pooling != "auto":
        mode = "lasttoken" if pooling == "last_token" else pooling
        for name, module in model.named_children():
            if isinstance(module, Pooling) and module.pooling_mode != mode:
                model._modules[name] = Pooling(module.embedding_dimension, pooling_mode=mode)
    return model


class SentenceTransformerEncoder:
    """A sentence-transformers model; the model's own query/document prompts apply unless an instruction is set."""

    paper_separator = ". "

    def __init__(self, settings: EmbedderSettings) -> None:
        path = resolve_model_path(settings.model)
        self.model = _sentence_transformer(str(path), settings.max_length, settings.pooling)
        self.name = settings.model
        self.dim = int(self.model.get_embedding_dimension())
        self.settings = settings

    def _encode(self, method, texts: list[str], show_progress: bool, prompt: str | None) -> np.ndarray:
        if not texts:
            return empty_vectors(self.dim)
        vectors = method(
            list(texts), prompt=prompt, batch_size=self.settings.batch_size, show_progress_bar=show_progress
        )
        return unit_rows(vectors)

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Passage vectors (sentence-transformers sorts by length and batches)."""
        return self._encode(self.model.encode_document, texts, show_progress, None)

    def encode_queries(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Query vectors, with the query instruction (or the model's own query prompt) prefixed."""
        prompt = self.settings.query_instruction or None
        return self._encode(self.model.encode_query, texts, show_progress, prompt)


@lru_cache(maxsize=4)
def _flag_model(path: str, pooling: str, instruction: str):
    """A FlagEmbedding embedder with an explicit pooling (never the library's default)."""
    from FlagEmbedding import FlagLLMModel, FlagModel

    device = "cuda:0" if torch_device() == "cuda" else "cpu"
    common = {"use_fp16": False, "devices": device, "query_instruction_for_retrieval": instruction or None}
    if pooling == "last_token":
        return FlagLLMModel(path, **common)
    return FlagModel(path, pooling_method=pooling, **common)


class FlagEncoder:
    """A FlagEmbedding embedder (BERT-like with CLS/mean pooling, or decoder-only with last-token pooling)."""

    paper_separator = ". "

    def __init__(self, settings: EmbedderSettings) -> None:
        path = resolve_model_path(settings.model)
        pooling = settings.pooling if settings.pooling != "auto" else model_pooling(path)
        if pooling not in ("mean", "cls", "last_token"):
            found = "no sentence-transformers pooling module" if pooling is None else f"pooling {pooling!r}"
            raise ValueError(
                f"model {settings.model!r}: {found}; FlagEmbedding supports mean, cls and last_token - "
                "set embedder.pooling explicitly"
            )
        self.model = _flag_model(str(path), pooling, settings.query_instruction)
        self.name = settings.model
        self.pooling = pooling
        self.dim = int(self.model.model.config.hidden_size)
        self.settings = settings

    def _encode(self, method, texts: list[str]) -> np.ndarray:
        if not texts:
            return empty_vectors(self.dim)
        s = self.settings
        return unit_rows(method(list(texts), batch_size=s.batch_size, max_length=s.max_length, convert_to_numpy=True))

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Passage vectors (FlagEmbedding shows its own progress bar for inputs above one batch)."""
        return self._encode(self.model.encode_corpus, texts)

    def encode_queries(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Query vectors, with the query instruction prefixed."""
        return self._encode(self.model.encode_queries, texts)
