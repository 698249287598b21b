"""Text encoders behind one small interface, loaded offline and at most once per process.

Backends: sentence-transformers, FlagEmbedding (pooling read from the model's own
sentence-transformers configuration, never FlagEmbedding's CLS default) and
SPECTER2 through ``adapters`` for paper vectors. Every encoder returns float32,
L2-normalised ``(n, dim)`` matrices.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import lru_cache
from typing import Protocol, runtime_checkable

import numpy as np

from lit3r.index.model_files import (
    empty_vectors,
    model_pooling,
    resolve_model_path,
    torch_device,
    unit_rows,
)
from lit3r.models import Paper
from lit3r.settings import EmbedderSettings, PaperEmbedderSettings


@runtime_checkable
class Encoder(Protocol):
    """What index building needs from an embedding model."""

    name: str
    dim: int
    paper_separator: str

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Float32, L2-normalised ``(len(texts), dim)`` vectors of passages."""
        ...

    def encode_queries(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Float32, L2-normalised ``(len(texts), dim)`` vectors of queries."""
        ...


class QueryCache:
    """An :class:`Encoder` that remembers the vectors of recent queries.

    One question's retrieval encodes the same text several times (a subquery for the dense index and
    again for the bi-encoder reranker; the same subquery in open-domain and in-paper runs, in chat
    follow-ups, in every ablation of an evaluation). Query vectors are a pure function of the text, so
    the most recent ``maxsize`` are kept; documents pass straight through. Safe to share across threads
    (a session serving concurrent requests): the cache is locked, the encoder runs outside the lock.
    """

    def __init__(self, encoder: Encoder, maxsize: int = 1024) -> None:
        self.encoder = encoder
        self.name, self.dim, self.paper_separator = encoder.name, encoder.dim, encoder.paper_separator
        self.maxsize = maxsize
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        return self.encoder.encode_documents(texts, show_progress=show_progress)

    def encode_queries(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        with self._lock:
            found = {t: self._vectors[t] for t in texts if t in self._vectors}
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            encoded = np.asarray(self.encoder.encode_queries(missing, show_progress=show_progress), dtype=np.float32)
            found.update(zip(missing, encoded, strict=True))
        with self._lock:
            for text in texts:
                self._vectors[text] = found[text]
                self._vectors.move_to_end(text)
            while len(self._vectors) > self.maxsize:
                self._vectors.popitem(last=False)
        return np.stack([found[t] for t in texts]) if texts else np.zeros((0, self.dim), dtype=np.float32)


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


def paper_text(paper: Paper, encoder: Encoder) -> str:
    """The text a paper is embedded as: title, the encoder's separator, abstract."""
    separator = getattr(encoder, "paper_separator", ". ")
    return f"{paper.title}{separator}{paper.abstract}" if paper.abstract else paper.title


def encode_papers(encoder: Encoder, papers: list[Paper], show_progress: bool = False) -> np.ndarray:
    """Paper vectors from title and abstract."""
    return encoder.encode_documents([paper_text(p, encoder) for p in papers], show_progress=show_progress)


@lru_cache(maxsize=8)
def _load_encoder(key: str) -> Encoder:
    settings = EmbedderSettings.model_validate_json(key)
    if settings.backend == "flagembedding":
        return FlagEncoder(settings)
    return SentenceTransformerEncoder(settings)


def load_encoder(settings: EmbedderSettings) -> Encoder:
    """The chunk encoder the settings describe (cached: the same settings give the same object)."""
    return _load_encoder(settings.model_dump_json())


@lru_cache(maxsize=4)
def _load_specter2(key: str) -> Encoder:
    from lit3r.index.specter2 import Specter2Encoder  # imports adapters only when SPECTER2 is asked for

    return Specter2Encoder(PaperEmbedderSettings.model_validate_json(key))


def load_paper_encoder(paper: PaperEmbedderSettings, chunk: EmbedderSettings) -> Encoder:
    """SPECTER2 when ``paper.model`` is set, else the chunk encoder."""
    if paper.model:
        return _load_specter2(paper.model_dump_json())
    return load_encoder(chunk)
