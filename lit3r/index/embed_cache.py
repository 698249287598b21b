"""Vectors keyed by the hash of the text they embed, so no text is embedded twice.

Two sources feed it: the vectors of the index generation in use (so adding
papers embeds only the new chunks) and shards written to disk while a build
embeds (so a build killed half-way resumes where it stopped).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from lit3r.index.encoders import Encoder

log = logging.getLogger(__name__)

SHARD_SIZE = 512


def text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """In-memory map from text hash to vector, backed by ``.npz`` shards in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.vectors: dict[str, np.ndarray] = {}

    def load_shards(self, dim: int) -> int:
        """Read the shards a killed build left; returns how many vectors they held."""
        count = 0
        for shard in sorted(self.folder.glob("shard-*.npz")):
            try:
                with np.load(shard) as data:
                    hashes, vectors = data["hashes"], data["vectors"]
            except (OSError, ValueError, KeyError) as exc:  # a shard cut short by the kill
                log.warning("ignoring unreadable embedding shard %s: %s", shard, exc)
                continue
            if vectors.ndim != 2 or vectors.shape[1] != dim:
                continue
            self.vectors.update(zip(hashes.tolist(), vectors, strict=True))
            count += len(hashes)
        return count

    def remember(self, hashes: Sequence[str], vectors: np.ndarray) -> None:
        self.vectors.update(zip(hashes, vectors, strict=True))

    def embed(
        self,
        encoder: Encoder,
        texts: Sequence[str],
        *,
        on_progress: Callable[[int], None] | None = None,
        on_start: Callable[[int], None] | None = None,
    ) -> tuple[np.ndarray, int]:
        """Vectors for ``texts`` in order, embedding only the unknown ones; returns (vectors, number embedded).

        ``on_start`` is told how many texts will be embedded, ``on_progress`` how many more are done.
        """
        hashes = [text_hash(t) for t in texts]
        todo = list(dict.fromkeys(h for h in hashes if h not in self.vectors))
        if on_start:
            on_start(len(todo))
        by_hash = {h: t for h, t in zip(hashes, texts, strict=True)}
        self.folder.mkdir(parents=True, exist_ok=True)
        start = len(list(self.folder.glob("shard-*.npz")))
        for number, begin in enumerate(range(0, len(todo), SHARD_SIZE), start=start):
            batch = todo[begin : begin + SHARD_SIZE]
            vectors = np.asarray(encoder.encode_documents([by_hash[h] for h in batch]), dtype=np.float32)
            self._write_shard(number, batch, vectors)
            self.remember(batch, vectors)
            if on_progress:
                on_progress(len(batch))
        if not hashes:
            return np.zeros((0, encoder.dim), dtype=np.float32), 0
        return np.stack([self.vectors[h] for h in hashes]).astype(np.float32), len(todo)

    def _write_shard(self, number: int, hashes: list[str], vectors: np.ndarray) -> None:
        final = self.folder / f"shard-{number:06d}.npz"
        partial = self.folder / f"partial-{number:06d}.npz"
        np.savez(partial, hashes=np.array(hashes), vectors=vectors)
        partial.replace(final)

    def clear(self) -> None:
        """Drop the on-disk shards once their vectors live in a published generation."""
        for shard in self.folder.glob("*.npz"):
            shard.unlink(missing_ok=True)
