"""Search shards of an index generation: which paper goes where, and how they lie on disk.

A paper belongs to shard ``hash(paper id) mod count`` (:func:`shard_of`), so
adding papers changes only the shards they hash to. The shards of generation
``gen-NNNN`` live beside it, in ``<index root>/shards/gen-NNNN/``::

    manifest.json        count, corpus-wide BM25 totals, each shard's papers and chunk count
    shard-000/bm25/      BM25 over the shard's chunks, scored with corpus-wide statistics
    shard-000/dense/     the shard's chunk vectors (FAISS)
    shard-000/rows.npy   each chunk's position in the generation (ties break by it, as on one machine)
    shard-000/stats.json the shard's own BM25 statistics (summed into the corpus-wide ones)

A shard set is written to a temporary folder and renamed into place, so a
generation has all of its shards or none; it outlives its generation until the
next shard set is complete, so unchanged shards can be reused from it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lit3r.index.corpus_index import CorpusIndex

SHARDS_DIR = "shards"
MANIFEST = "manifest.json"
FORMAT_VERSION = 1


def shard_of(paper_id: str, count: int) -> int:
    """The shard a paper belongs to: a stable hash of its id, modulo ``count``."""
    digest = hashlib.sha1(paper_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


def shard_name(number: int) -> str:
    return f"shard-{number:03d}"


@dataclass
class ShardPlan:
    """One shard's part of a generation."""

    number: int
    papers: dict[str, str] = field(default_factory=dict)
    """Paper id -> content hash, for the papers of this shard."""
    chunk_ids: list[str] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    """Position of each chunk in the generation's chunk list."""

    @property
    def name(self) -> str:
        return shard_name(self.number)


def plan_shards(index: CorpusIndex, count: int) -> list[ShardPlan]:
    """Split the generation's chunks into ``count`` shards by paper id, keeping the generation's order."""
    plans = [ShardPlan(number) for number in range(count)]
    hashes: dict[str, str] = index.manifest["papers"]
    for paper_id, content in hashes.items():
        plans[shard_of(paper_id, count)].papers[paper_id] = content
    for row, chunk in enumerate(index.chunks):
        plan = plans[shard_of(chunk.paper_id, count)]
        plan.chunk_ids.append(chunk.id)
        plan.rows.append(row)
    return plans


class ShardSet:
    """The shards of one generation, as written on disk."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.manifest: dict[str, Any] = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        if self.manifest.get("format") != FORMAT_VERSION:
            raise ValueError(f"{folder}: shard format {self.manifest.get('format')}, expected {FORMAT_VERSION}")

    @staticmethod
    def root(generation: Path) -> Path:
        return generation.parent / SHARDS_DIR

    @classmethod
    def of(cls, generation: Path) -> ShardSet | None:
        """The complete shard set of ``generation``, or None when it has none."""
        folder = cls.root(generation) / generation.name
        return cls(folder) if (folder / MANIFEST).exists() else None

    @classmethod
    def latest_other(cls, generation: Path) -> ShardSet | None:
        """The newest complete shard set of an earlier generation (its unchanged shards can be reused)."""
        root = cls.root(generation)
        names = sorted((p.name for p in root.glob("gen-*") if (p / MANIFEST).exists()), reverse=True)
        names = [n for n in names if n != generation.name]
        return cls(root / names[0]) if names else None

    @property
    def count(self) -> int:
        return int(self.manifest["count"])

    @property
    def shards(self) -> list[dict[str, Any]]:
        """Per shard: ``number``, ``name``, ``papers`` (id -> hash), ``chunks``."""
        return self.manifest["shards"]

    def shard_folder(self, number: int) -> Path:
        return self.folder / shard_name(number)

    def chunk_shards(self, index: CorpusIndex) -> dict[str, int]:
        """Chunk id -> shard number, for every chunk of the generation."""
        paper_shard = {pid: s["number"] for s in self.shards for pid in s["papers"]}
        return {c.id: paper_shard[c.paper_id] for c in index.chunks}


def remove_other_shard_sets(generation: Path) -> None:
    """Delete the shard sets (and unfinished ones) of every generation but ``generation``."""
    for stale in ShardSet.root(generation).iterdir():
        if stale.name != generation.name:
            shutil.rmtree(stale, ignore_errors=True)
