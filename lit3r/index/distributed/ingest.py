"""``lit3r index --ray``: embed on a Ray cluster, then build the indexes and the search shards.

1. The papers whose texts have no vector yet go through a Ray Data pipeline:
   the stored records are split into blocks, and a pool of embedding actors
   (:class:`~lit3r.index.distributed.pipeline.EmbedPapers`, the encoder loaded
   once per actor) parses, chunks and embeds them. Vectors stream back and are
   written, batch by batch, into the build's embedding cache (a killed build
   resumes from them).
2. The ordinary build (:func:`lit3r.index.build.build_index`) then writes the
   generation exactly as on one machine, finding every vector in the cache.
3. The generation is split into shards by paper id, built on the cluster
   (:mod:`lit3r.index.distributed.shard_build`).
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np

from lit3r.corpus.store import CorpusStore
from lit3r.index.build import BuildReport, EmptyCorpusError, build_index
from lit3r.index.corpus_index import CorpusIndex
from lit3r.index.distributed.cluster import ClusterError, cluster_cpus, connect
from lit3r.index.distributed.pipeline import CHUNK, PAPER, EmbedPapers, Precomputed, known_hashes
from lit3r.index.distributed.shard_build import ShardReport, build_shards
from lit3r.index.embed_cache import EmbeddingCache, text_hash
from lit3r.index.encoders import Encoder, load_encoder, load_paper_encoder, paper_text
from lit3r.index.layout import IndexLayout
from lit3r.settings import Settings

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int | None], None]
CACHE_FOLDERS = {CHUNK: "chunks", PAPER: "papers"}
"""The embedding caches :func:`~lit3r.index.build.build_index` reads, under ``IndexLayout.cache``."""


@dataclass
class RayBuildReport:
    """What a distributed build did: the ordinary build's report plus the cluster's part."""

    build: BuildReport
    shards: ShardReport
    address: str
    nodes: int
    embed_actors: int = 0
    cluster_embedded: dict[str, int] = field(default_factory=lambda: {CHUNK: 0, PAPER: 0})
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def embedded_here(self) -> int:
        """Texts this machine embedded because the cluster did not: 0 unless nodes chunk differently."""
        return self.build.chunks_embedded + self.build.papers_embedded

    def summary(self) -> list[str]:
        """What ``lit3r index --ray`` prints."""
        build, shards, embedded = self.build, self.shards, self.cluster_embedded
        if build.up_to_date:
            lines = [f"index up to date: {build.papers} papers, {build.chunks} chunks ({build.generation})"]
        else:
            lines = [
                f"indexed {build.papers} papers, {build.chunks} chunks in {build.generation} on the Ray cluster at "
                f"{self.address} ({self.nodes} nodes, {self.embed_actors} embedding actors): {embedded[CHUNK]} "
                f"chunks and {embedded[PAPER]} papers embedded on the cluster, {self.embedded_here} texts here"
            ]
        done = "up to date" if shards.up_to_date else f"rebuilt {len(shards.rebuilt)}, reused {len(shards.reused)}"
        lines.append(f"{shards.count} shards in {shards.folder} ({done})")
        timings = {**build.timings, **self.timings}
        lines.append(", ".join(f"{k} {v:.1f}" for k, v in timings.items() if k.endswith("_s")))
        return lines


def build_index_on_ray(settings: Settings, store: CorpusStore, *, progress: Progress | None = None) -> RayBuildReport:
    """Bring the index for ``settings`` up to date using the Ray cluster at ``settings.ray.address``."""
    ray = connect(settings.ray)
    hashes = store.paper_hashes()
    if not hashes:
        raise EmptyCorpusError(f"no papers in {store.path}: run `lit3r ingest PATH` first")
    layout = IndexLayout(settings)
    current = layout.current()
    previous = CorpusIndex(current, settings) if current else None
    timings: dict[str, float] = {}
    embedded, actors = {CHUNK: 0, PAPER: 0}, 0
    if previous is None or previous.manifest.get("papers") != hashes:
        clock = time.perf_counter()
        layout.root.mkdir(parents=True, exist_ok=True)
        embedded, actors = _embed_on_cluster(ray, settings, store, layout, previous, progress, timings)
        timings["cluster_embed_s"] = time.perf_counter() - clock
    clock = time.perf_counter()
    build = build_index(settings, store, progress=progress)  # type: ignore[arg-type]
    timings["build_s"] = time.perf_counter() - clock
    if build.chunks_embedded or build.papers_embedded:
        log.warning(
            "this machine embedded %d chunks and %d papers the cluster did not: do all nodes run this lit3r version?",
            build.chunks_embedded,
            build.papers_embedded,
        )
    clock = time.perf_counter()
    shards = build_shards(ray, settings, build.generation, progress=progress)
    timings["shards_s"] = time.perf_counter() - clock
    nodes = sum(1 for n in ray.nodes() if n.get("Alive"))
    return RayBuildReport(build, shards, str(settings.ray.address), nodes, actors, embedded, timings)


def _embed_on_cluster(
    ray: ModuleType,
    settings: Settings,
    store: CorpusStore,
    layout: IndexLayout,
    previous: CorpusIndex | None,
    progress: Progress | None,
    timings: dict[str, float],
) -> tuple[dict[str, int], int]:
    """Embed every text without a vector on the cluster, into the build's caches; returns counts and actors.

    ``timings`` gets ``cluster_first_vectors_s`` (until the first vectors came back: actors started, models
    loaded, a batch embedded) and ``cluster_encode_chunks_s`` (the actors' time in the chunk encoder, summed:
    chunks / that = one actor's embedding rate).
    """
    encoders: dict[str, Encoder] = {
        CHUNK: load_encoder(settings.embedder),
        PAPER: load_paper_encoder(settings.paper_embedder, settings.embedder),
    }
    caches = {kind: EmbeddingCache(layout.cache / folder) for kind, folder in CACHE_FOLDERS.items()}
    known = _known_texts(caches, encoders, previous)
    records = _paper_records(store, previous.manifest["papers"] if previous is not None else {})
    if not records:
        return {CHUNK: 0, PAPER: 0}, 0
    dataset, actors = _embedding_dataset(ray, settings, records, known)
    counts = {CHUNK: 0, PAPER: 0}
    started = time.perf_counter()
    for out in dataset.iter_batches(batch_size=None, batch_format="numpy"):
        timings.setdefault("cluster_first_vectors_s", time.perf_counter() - started)
        for kind in (CHUNK, PAPER):
            rows = [i for i, k in enumerate(out["kind"]) if k == kind]
            if not rows:
                continue
            dim = encoders[kind].dim
            vectors = {str(out["text"][i]): np.frombuffer(out["vector"][i], dtype=np.float32) for i in rows}
            if any(len(v) != dim for v in vectors.values()):
                raise ClusterError(f"the cluster returned {kind} vectors whose width is not {dim}")
            caches[kind].embed(Precomputed(encoders[kind].name, dim, vectors), list(vectors))  # written to disk
            counts[kind] += len(vectors)
            if kind == CHUNK:
                timings["cluster_encode_chunks_s"] = timings.get("cluster_encode_chunks_s", 0.0) + float(
                    sum(out["encode_s"][i] for i in rows)
                )
            if progress and kind == CHUNK:
                progress("embed chunks on the cluster", len(vectors), None)
    return counts, actors


def _known_texts(
    caches: dict[str, EmbeddingCache], encoders: dict[str, Encoder], previous: CorpusIndex | None
) -> dict[str, set[str]]:
    """Hashes of the texts that have a vector: in the generation in use, or cached by a killed build."""
    for kind, cache in caches.items():
        cache.load_shards(encoders[kind].dim)
    known = {kind: set(cache.vectors) for kind, cache in caches.items()}
    if previous is not None:
        known[CHUNK] |= {text_hash(c.text) for c in previous.chunks}
        known[PAPER] |= {text_hash(paper_text(p, encoders[PAPER])) for p in previous.papers.values()}
    return known


def _embedding_dataset(ray: ModuleType, settings: Settings, records: list[str], known: dict[str, set[str]]):
    """The Ray Data pipeline: paper records, in blocks, through a fixed pool of embedding actors."""
    cpus = cluster_cpus(ray)
    if cpus < settings.ray.embed_cpus:
        raise ClusterError(
            f"the Ray cluster at {settings.ray.address} has {cpus:g} CPUs; an embedding actor needs "
            f"ray.embed_cpus={settings.ray.embed_cpus:g}"
        )
    actors = min(settings.ray.embed_actors or int(cpus // settings.ray.embed_cpus), len(records))
    rounds = -(-len(records) // (actors * settings.ray.batch_papers))
    batch = -(-len(records) // (actors * rounds))  # at most batch_papers, and as many batches for every actor
    blocks = -(-len(records) // batch)
    dataset = ray.data.from_items([{"data": r} for r in records], override_num_blocks=blocks)
    dataset = dataset.map_batches(
        EmbedPapers,
        batch_size=batch,
        # all actors are asked for at once; the pipeline runs as soon as one is up (CPUs others hold now are
        # waited for, not required); two batches in flight per actor keep it busy between batches
        compute=ray.data.ActorPoolStrategy(
            min_size=1, max_size=actors, initial_size=actors, max_tasks_in_flight_per_actor=2
        ),
        num_cpus=settings.ray.embed_cpus,
        fn_constructor_kwargs={
            "chunker": settings.chunker.model_dump_json(),
            "embedder": settings.embedder.model_dump_json(),
            "paper_embedder": settings.paper_embedder.model_dump_json(),
            "known": {kind: known_hashes(hashes) for kind, hashes in known.items()},
        },
    )
    return dataset, actors


def _paper_records(store: CorpusStore, indexed: dict[str, str]) -> list[str]:
    """The stored parsed papers (JSON, corpus order) whose content hash is not the one ``indexed`` holds.

    It reads the rows ``CorpusStore.iter_papers`` parses, without parsing them here: the actors do.
    """
    query = "SELECT id, content_hash, data FROM papers ORDER BY rowid"
    with closing(sqlite3.connect(f"file:{store.path}?mode=ro", uri=True)) as db:
        return [data for pid, content, data in db.execute(query) if indexed.get(pid) != content]
