"""Sharded search equals one-machine search: the shard build and the sharded index, with Ray's calls inline.

The same code runs on a real cluster in tests/cluster/ray_cluster.py; here every
task and actor call runs in this process (tests/cluster/ray_support.py), so rankings
and scores can be compared on many queries in a second.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lit3r.corpus.ingest import ingest
from lit3r.corpus.store import CorpusStore
from lit3r.index.build import build_index
from lit3r.index.corpus_index import RECORD_PARTS, SEARCH_PARTS, CorpusIndex
from lit3r.index.dense import DenseIndex
from lit3r.index.distributed.serve import ShardPool, split_by_shard
from lit3r.index.distributed.shard_build import build_shards
from lit3r.index.distributed.shard_worker import tokenize_shard, write_shard
from lit3r.index.distributed.sharded_index import ShardedBM25, ShardedCorpusIndex, ShardedDense, merge_hits
from lit3r.index.distributed.shards import ShardSet, shard_of
from lit3r.index.distributed.term_stats import corpus_stats
from lit3r.index.protocol import missing_members
from lit3r.retrieval.search import rank_chunks
from lit3r.retrieval.subquery import sweep
from lit3r.settings import Settings

from conftest import qasper_paper, write_qasper
from ray_support import InlineRay, assert_same_search

QUERIES = [
    "How much did evidence verification reduce unsupported claims?",
    "BM25 parameters k1 and b",
    "which reranker budget is recommended",
    "recall at 10 on LocatorQA",
    "citation graph coupling neighbours",
]


def _build(settings: Settings, *paths: Path) -> Path:
    with CorpusStore(settings.home) as store:
        ingest(list(paths), store)
        return build_index(settings, store).generation


def _sharded(settings: Settings, generation: Path) -> ShardedCorpusIndex:
    pool = ShardPool.start(InlineRay(), ShardSet.of(generation), settings.ray)
    return ShardedCorpusIndex(generation, settings, pool)


@pytest.fixture
def demo(tmp_path: Path, hashing_encoder) -> tuple[Settings, Path]:
    from lit3r.cli.corpus import demo_papers_dir

    settings = Settings(home=tmp_path / "home", ray={"shards": 3})
    generation = _build(settings, demo_papers_dir())
    report = build_shards(InlineRay(), settings, generation)
    assert report.count == 3 and sum(report.chunks.values()) == len(CorpusIndex(generation, settings).chunks)
    return settings, generation


def test_every_paper_lies_in_exactly_one_shard(demo) -> None:
    settings, generation = demo
    shard_set = ShardSet.of(generation)
    index = CorpusIndex(generation, settings)
    owners = [pid for s in shard_set.shards for pid in s["papers"]]
    assert sorted(owners) == sorted(index.papers)
    for shard in shard_set.shards:
        assert all(shard_of(pid, 3) == shard["number"] for pid in shard["papers"])
    assert shard_set.manifest["documents"] == len(index.chunks)


def test_rankings_and_scores_equal_the_one_machine_index(demo) -> None:
    settings, generation = demo
    local, sharded = CorpusIndex(generation, settings), _sharded(settings, generation)
    papers = sorted(local.papers)
    for query in QUERIES:
        for restrict in (None, papers[:1], papers[2:5]):
            assert_same_search(sharded, local, query, restrict)
        assert sweep(sharded, query, 30).fused == sweep(local, query, 30).fused


def test_batched_queries_and_vectors(demo) -> None:
    settings, generation = demo
    local, sharded = CorpusIndex(generation, settings), _sharded(settings, generation)
    assert sharded.bm25_chunks.search_many(QUERIES, 20) == local.bm25_chunks.search_many(QUERIES, 20)
    vectors = local.encoder.encode_queries(QUERIES)
    for got, expected in zip(sharded.dense.search_many(vectors, 20), local.dense.search_many(vectors, 20), strict=True):
        assert [i for i, _ in got] == [i for i, _ in expected]
        assert np.allclose([s for _, s in got], [s for _, s in expected], atol=1e-6)
    ids = [c.id for c in local.chunks][::-7]
    assert np.array_equal(sharded.dense.vectors_for(ids), local.dense.vectors_for(ids))
    with pytest.raises(KeyError):
        sharded.dense.vectors_for(["no-such-chunk"])
    assert sharded.bm25_chunks.search("anything", 0) == [] and len(sharded.dense) == len(local.dense)


def test_the_sharded_index_is_an_index_and_loads_all_its_parts(demo) -> None:
    settings, generation = demo
    sharded = _sharded(settings, generation)
    assert missing_members(sharded) == []
    sharded.load_all()
    assert all(part in vars(sharded) for part in (*RECORD_PARTS, *SEARCH_PARTS, "chunk_shard"))
    assert isinstance(sharded.bm25_chunks, ShardedBM25) and isinstance(sharded.dense, ShardedDense)
    local = CorpusIndex(generation, settings)
    assert sharded.bm25_chunks.search(QUERIES[1], 10) == local.bm25_chunks.search(QUERIES[1], 10)


def test_adding_papers_rebuilds_only_their_shards(demo, tmp_path: Path) -> None:
    settings, generation = demo
    extra = {f"new{i}": qasper_paper(f"Paper {i}", [("Intro", [f"sharded bm25 statistics {i}"])]) for i in range(2)}
    new_generation = _build(settings, write_qasper(tmp_path / "extra.json", extra))
    touched = {f"shard-{shard_of(pid, 3):03d}" for pid in extra}
    report = build_shards(InlineRay(), settings, new_generation)
    assert set(report.rebuilt) == touched and set(report.reused) == {"shard-000", "shard-001", "shard-002"} - touched
    assert ShardSet.of(generation) is None  # the old generation's shards are gone with it
    local, sharded = CorpusIndex(new_generation, settings), _sharded(settings, new_generation)
    assert ShardSet.of(new_generation).manifest["documents"] == len(local.chunks)
    for query in [*QUERIES, "sharded statistics"]:
        assert rank_chunks(sharded, query, "bm25", 100) == rank_chunks(local, query, "bm25", 100)
    assert build_shards(InlineRay(), settings, new_generation).up_to_date


def test_equal_scores_keep_the_one_machine_order(tmp_path: Path) -> None:
    """Duplicate vectors across shards: FAISS's order for a scan, row order for a small allowed set."""
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(12, 8)).astype(np.float32)
    vectors[[3, 5, 8, 11]] = vectors[0]
    ids = [f"c{i:02d}" for i in range(12)]
    whole = DenseIndex.build(ids, vectors)
    shard_rows = {0: [0, 1, 5, 6, 11], 1: [2, 3, 4, 7, 8, 9, 10]}
    bm25 = Settings().bm25.model_dump_json()
    tokens = {n: tokenize_shard([f"text {r}" for r in rows], bm25) for n, rows in shard_rows.items()}
    stats = corpus_stats([s for s, _ in tokens.values()])
    for number, rows in shard_rows.items():
        shard_ids = [ids[r] for r in rows]
        args = (shard_ids, rows, tokens[number][1], whole.vectors_for(shard_ids), tokens[number][0], stats)
        write_shard(str(tmp_path / f"shard-{number:03d}"), *args, bm25, False)

    class _Set:
        shards = [{"number": n, "name": f"shard-{n:03d}"} for n in shard_rows]

        def shard_folder(self, number: int) -> Path:
            return tmp_path / f"shard-{number:03d}"

    pool = ShardPool.start(InlineRay(), _Set(), Settings().ray)  # type: ignore[arg-type]
    chunk_shard = {ids[r]: n for n, rows in shard_rows.items() for r in rows}
    sharded = ShardedDense(pool, chunk_shard, ids, 8, False)
    for allowed in (None, {ids[i] for i in (0, 3, 5, 8, 9)}):
        assert sharded.search(vectors[0], 8, allowed) == whole.search(vectors[0], 8, allowed), allowed
    DenseIndex.subset_scan_limit, limit = 2, DenseIndex.subset_scan_limit
    try:  # a large allowed set: FAISS filters a scan on one machine, and so must the shards
        allowed = {ids[i] for i in (0, 3, 5, 8, 9)}
        assert sharded.search(vectors[0], 8, allowed) == whole.search(vectors[0], 8, allowed)
    finally:
        DenseIndex.subset_scan_limit = limit


def test_merge_and_split_helpers() -> None:
    hits = [[("a", 2.0, 5), ("b", 1.0, 1)], [("c", 2.0, 3), ("d", 0.5, 0)]]
    assert merge_hits(hits, 3) == [("c", 2.0), ("a", 2.0), ("b", 1.0)]
    assert merge_hits(hits, 3, later_rows_first=True) == [("a", 2.0), ("c", 2.0), ("b", 1.0)]
    assert split_by_shard(None, {"a": 0}, [0, 1]) == {0: None, 1: None}
    assert split_by_shard({"a", "b", "zz"}, {"a": 0, "b": 1}, [0, 1, 2]) == {0: {"a"}, 1: {"b"}}
    assert split_by_shard(set(), {"a": 0}, [0]) == {}
    assert [shard_of("2101.00001", 4)] * 3 == [shard_of("2101.00001", 4) for _ in range(3)]
