"""Build a generation's search shards on the cluster, one Ray task per shard and step.

1. Each shard's chunks are tokenised and counted (:class:`TermStats`), or, for a
   shard whose papers are unchanged since the last shard set, its tokens and
   counts are read back from it (no tokenising).
2. The counts are summed: the corpus-wide statistics.
3. Each shard's BM25 matrix is scored with them and written with its vectors.
   Every shard is rescored when papers are added, because the document count
   and the average length change every score; only the changed shards are
   tokenised again, and vectors are never recomputed (they come from the
   generation).

Workers write into the index folder, so it must be on a filesystem every node
mounts at the same path (one machine, or NFS and the like).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from lit3r.index.corpus_index import CorpusIndex
from lit3r.index.distributed.shard_worker import read_shard_tokens, tokenize_shard, write_shard
from lit3r.index.distributed.shards import (
    FORMAT_VERSION,
    MANIFEST,
    ShardPlan,
    ShardSet,
    plan_shards,
    remove_other_shard_sets,
    shard_name,
)
from lit3r.index.distributed.term_stats import TermStats, corpus_stats
from lit3r.settings import Settings


@dataclass
class ShardReport:
    """What a shard build did."""

    folder: Path
    count: int
    up_to_date: bool = False
    rebuilt: list[str] = field(default_factory=list)
    """Shards whose papers changed: tokenised again."""
    reused: list[str] = field(default_factory=list)
    """Shards whose papers did not change: tokens and counts read from the previous shard set, rescored."""
    chunks: dict[str, int] = field(default_factory=dict)


def build_shards(
    ray: ModuleType,
    settings: Settings,
    generation: Path,
    *,
    progress: Callable[[str, int, int | None], None] | None = None,
) -> ShardReport:
    """Write the shard set of ``generation`` (unless it has one with ``settings.ray.shards`` shards)."""
    count = settings.ray.shards
    existing = ShardSet.of(generation)
    if existing is not None and existing.count == count:
        chunks = {s["name"]: s["chunks"] for s in existing.shards}
        return ShardReport(existing.folder, count, up_to_date=True, chunks=chunks)
    index = CorpusIndex(generation, settings)
    plans = [p for p in plan_shards(index, count) if p.chunk_ids]
    previous = ShardSet.latest_other(generation)
    reusable = _unchanged_shards(previous, plans, count)
    bm25 = settings.bm25.model_dump_json()
    tokenize_remote = ray.remote(num_returns=2)(tokenize_shard)
    read_remote = ray.remote(num_returns=2)(read_shard_tokens)
    parts = {}
    for plan in plans:
        if plan.number in reusable:
            parts[plan.number] = read_remote.remote(str(previous.shard_folder(plan.number)))  # type: ignore[union-attr]
        else:
            parts[plan.number] = tokenize_remote.remote([index.chunk_by_id[c].text for c in plan.chunk_ids], bm25)
    own = dict(zip(parts, ray.get([stats for stats, _ in parts.values()]), strict=True))
    corpus = ray.put(corpus_stats(list(own.values())))
    root = ShardSet.root(generation)
    scratch = root / f"tmp-{generation.name}-{uuid.uuid4().hex[:8]}"
    write_remote = ray.remote(write_shard)
    written = []
    for plan in plans:
        vectors = index.dense.vectors_for(plan.chunk_ids)
        folder = str(scratch / plan.name)
        _, tokens = parts[plan.number]
        args = (folder, plan.chunk_ids, plan.rows, tokens, vectors, own[plan.number], corpus, bm25)
        written.append(write_remote.remote(*args, settings.index.dtype == "fp16"))
    pending = list(written)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        if progress:
            progress("write shards on the cluster", len(done), len(plans))
    for plan, chunks in zip(plans, ray.get(written), strict=True):
        if chunks != len(plan.chunk_ids):
            raise RuntimeError(f"{plan.name}: wrote {chunks} chunks, expected {len(plan.chunk_ids)}")
    _write_manifest(scratch, count, plans, corpus_stats(list(own.values())))
    target = root / generation.name
    if target.exists():  # a shard set with another count: set aside, removed below
        os.replace(target, root / f"tmp-old-{uuid.uuid4().hex[:8]}")
    os.replace(scratch, target)
    remove_other_shard_sets(generation)
    return ShardReport(
        target,
        count,
        rebuilt=[p.name for p in plans if p.number not in reusable],
        reused=[p.name for p in plans if p.number in reusable],
        chunks={p.name: len(p.chunk_ids) for p in plans},
    )


def _unchanged_shards(previous: ShardSet | None, plans: list[ShardPlan], count: int) -> set[int]:
    """Numbers of the shards whose papers (ids and contents) equal the previous shard set's."""
    if previous is None or previous.count != count:
        return set()
    before = {s["number"]: s["papers"] for s in previous.shards}
    return {p.number for p in plans if before.get(p.number) == p.papers}


def _write_manifest(folder: Path, count: int, plans: list[ShardPlan], corpus: TermStats) -> None:
    manifest = {
        "format": FORMAT_VERSION,
        "count": count,
        "documents": corpus.documents,
        "tokens": corpus.tokens,
        "shards": [
            {"number": p.number, "name": shard_name(p.number), "papers": p.papers, "chunks": len(p.chunk_ids)}
            for p in plans
        ],
    }
    (folder / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
