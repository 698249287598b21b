"""The Ray Data stage of a distributed build: stored papers in, the vectors of their texts out.

:class:`EmbedPapers` is the callable class of a ``map_batches`` stage run by a
fixed pool of actors: each actor loads the chunk encoder (and the paper
encoder, when it is another model) once, then, batch after batch, parses the
stored paper records, chunks them with the index's chunker and embeds every
chunk text and title-abstract that is not already known. Parsing and chunking
ride along in the same actor: they are about a thousandth of the cost of
embedding, and a separate task stage would compete with the encoders for the
cluster's CPUs.

Rows in: ``{"data": ParsedPaper JSON}``. Rows out: ``{"kind": "chunk" | "paper",
"text", "vector": float32 bytes, "encode_s"}`` (bytes, because chunk and paper
vectors may differ in width; ``encode_s`` is the row's share of the encoder's
time, so the driver can tell the actors' embedding rate from their start-up).
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np

from lit3r.corpus.chunkers import chunk_paper
from lit3r.index.embed_cache import text_hash
from lit3r.index.encoders import Encoder, load_encoder, load_paper_encoder, paper_text
from lit3r.models import ParsedPaper
from lit3r.settings import ChunkerSettings, EmbedderSettings, PaperEmbedderSettings

CHUNK, PAPER = "chunk", "paper"


def known_hashes(hashes: set[str]) -> np.ndarray:
    """Text hashes as a sorted byte-string array: compact to ship to every actor, searchable by bisection."""
    return np.array(sorted(hashes), dtype="S40")


def _is_known(known: np.ndarray, digest: str) -> bool:
    position = int(np.searchsorted(known, digest.encode("ascii")))
    return position < len(known) and known[position] == digest.encode("ascii")


def texts_to_embed(
    records: list[str], chunker: ChunkerSettings, paper_separator: str, known: dict[str, np.ndarray]
) -> list[tuple[str, str]]:
    """``(kind, text)`` of the chunks and title-abstracts of ``records`` whose text hash ``known`` lacks.

    ``known`` holds, per kind, :func:`known_hashes`. Each text appears once (a text repeated in several
    chunks is embedded once).
    """
    separator = SimpleNamespace(paper_separator=paper_separator)
    seen: dict[str, set[str]] = {CHUNK: set(), PAPER: set()}
    out: list[tuple[str, str]] = []
    for record in records:
        parsed = ParsedPaper.model_validate_json(record)
        texts = [(CHUNK, c.text) for c in chunk_paper(parsed, chunker)]
        texts.append((PAPER, paper_text(parsed.paper, separator)))  # type: ignore[arg-type]
        for kind, text in texts:
            digest = text_hash(text)
            if digest not in seen[kind] and not _is_known(known[kind], digest):
                seen[kind].add(digest)
                out.append((kind, text))
    return out


class EmbedPapers:
    """Ray Data actor: parse, chunk and embed batches of stored papers with encoders loaded once."""

    def __init__(self, chunker: str, embedder: str, paper_embedder: str, known: dict[str, np.ndarray]) -> None:
        self.chunker = ChunkerSettings.model_validate_json(chunker)
        self.embedder = EmbedderSettings.model_validate_json(embedder)
        self.paper_embedder = PaperEmbedderSettings.model_validate_json(paper_embedder)
        self.encoders: dict[str, Encoder] = {
            CHUNK: load_encoder(self.embedder),
            PAPER: load_paper_encoder(self.paper_embedder, self.embedder),
        }
        self.known = known

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, list]:
        separator = self.encoders[PAPER].paper_separator
        todo = texts_to_embed([str(r) for r in batch["data"]], self.chunker, separator, self.known)
        out: dict[str, list] = {"kind": [], "text": [], "vector": [], "encode_s": []}
        for kind in (CHUNK, PAPER):
            texts = [text for k, text in todo if k == kind]
            if not texts:
                continue
            start = time.perf_counter()
            vectors = np.asarray(self.encoders[kind].encode_documents(texts), dtype=np.float32)
            share = (time.perf_counter() - start) / len(texts)
            out["kind"] += [kind] * len(texts)
            out["text"] += texts
            out["vector"] += [row.tobytes() for row in vectors]
            out["encode_s"] += [share] * len(texts)
        return out


class Precomputed:
    """An :class:`~lit3r.index.encoders.Encoder` that returns vectors computed elsewhere (on the cluster).

    It lets :class:`~lit3r.index.embed_cache.EmbeddingCache` store those vectors through its public
    ``embed`` method, in the files a later build reads.
    """

    def __init__(self, name: str, dim: int, vectors: dict[str, np.ndarray]) -> None:
        self.name, self.dim, self.paper_separator = name, dim, ". "
        self.vectors = vectors

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts]) if texts else np.zeros((0, self.dim), dtype=np.float32)

    def encode_queries(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        raise TypeError("precomputed document vectors cannot encode queries")
