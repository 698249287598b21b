"""Dense index kinds (flat, HNSW, IVF) and storage types (fp32, fp16, int8): recall, memory, restricted search,
persistence and the index key."""

from __future__ import annotations

import json

import faiss
import numpy as np
import pytest

from lit3r.corpus.ingest import ingest
from lit3r.corpus.store import CorpusStore
from lit3r.index import dense_search
from lit3r.index.build import build_index
from lit3r.index.corpus_index import CorpusIndex, IndexNotBuiltError
from lit3r.index.dense import DenseIndex, auto_nlist, factory_string
from lit3r.index.dense_search import ivf_probes, plan_restricted, top_k_of_rows
from lit3r.retrieval.search import search_index as search_chunks
from lit3r.settings import IndexSettings, Settings, index_key

from conftest import qasper_paper, write_qasper

DIM = 48
KINDS = [(kind, dtype) for kind in ("flat", "hnsw", "ivf") for dtype in ("fp32", "fp16", "int8")]
FAISS_CLASS = {
    ("flat", "fp32"): "IndexFlat",
    ("flat", "fp16"): "IndexScalarQuantizer",
    ("flat", "int8"): "IndexScalarQuantizer",
    ("hnsw", "fp32"): "IndexHNSWFlat",
    ("hnsw", "fp16"): "IndexHNSWSQ",
    ("hnsw", "int8"): "IndexHNSWSQ",
    ("ivf", "fp32"): "IndexIVFFlat",
    ("ivf", "fp16"): "IndexIVFScalarQuantizer",
    ("ivf", "int8"): "IndexIVFScalarQuantizer",
}


def _clustered(n: int, dim: int = DIM, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """Vectors around 40 random centres, like embeddings of papers on a few dozen topics."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(40, dim))
    vectors = centres[rng.integers(0, 40, size=n)] + 0.6 * rng.normal(size=(n, dim))
    return [f"c{seed}-{i}" for i in range(n)], vectors.astype(np.float32)


def _settings(kind: str, dtype: str, **extra) -> IndexSettings:
    return IndexSettings(dense_kind=kind, dense_dtype=dtype, **extra)


def _recall(found: list[list[tuple[str, float]]], truth: list[list[tuple[str, float]]]) -> float:
    return float(
        np.mean([len({i for i, _ in f} & {i for i, _ in t}) / len(t) for f, t in zip(found, truth, strict=True)])
    )


@pytest.fixture(scope="module")
def data():
    ids, vectors = _clustered(3000)
    queries = _clustered(40, seed=7)[1]
    exact = DenseIndex.build(ids, vectors)
    return ids, vectors, queries, exact


@pytest.fixture(scope="module")
def built(data):
    """One index per kind and storage type over ``data`` (HNSW builds dominate this module's time)."""
    ids, vectors, _, _ = data
    return {(k, d): DenseIndex.build(ids, vectors, settings=_settings(k, d)) for k, d in KINDS}


@pytest.mark.parametrize(("kind", "dtype"), KINDS)
def test_each_kind_is_the_faiss_index_it_names_and_finds_the_exact_neighbours(data, built, kind, dtype):
    ids, vectors, queries, exact = data
    index = built[(kind, dtype)]
    assert type(index.faiss_index).__name__ == FAISS_CLASS[(kind, dtype)]
    assert (index.kind, index.dtype, len(index)) == (kind, dtype, len(ids))
    truth = exact.search_many(queries, 10)
    found = index.search_many(queries, 10)
    assert all(len(hits) == 10 for hits in found)
    recall = _recall(found, truth)
    assert recall >= {"flat": 0.95 if dtype == "int8" else 0.99, "hnsw": 0.9, "ivf": 0.8}[kind], recall
    scores = dict(exact.search(queries[0], len(ids)))
    tolerance = {"fp32": 1e-5, "fp16": 2e-3, "int8": 3e-2}[dtype]
    for doc, score in found[0]:
        assert score == pytest.approx(scores[doc], abs=tolerance)


@pytest.mark.parametrize(("kind", "dtype"), KINDS)
def test_index_memory_is_at_most_one_and_a_half_times_the_raw_vectors(kind, dtype):
    ids, vectors = _clustered(600, dim=384)  # the graph and list overheads are per vector
    index = DenseIndex.build(ids, vectors, settings=_settings(kind, dtype))
    raw = vectors.size * 4
    size = len(faiss.serialize_index(index.faiss_index))  # what the index holds in memory, vectors and graph
    limit = {"fp32": 1.5, "fp16": 0.75, "int8": 0.5}[dtype]
    assert size <= limit * raw, (size / raw, kind, dtype)


@pytest.mark.parametrize(("kind", "dtype"), KINDS)
def test_restricted_search_returns_only_allowed_ids_on_both_paths(data, built, monkeypatch, kind, dtype):
    ids, vectors, queries, exact = data
    index = built[(kind, dtype)]
    small = {ids[r] for r in range(0, 3000, 97)} | {"not-in-index"}  # 31 rows: always scored exactly
    truth = exact.search_many(queries, 10, allowed=small)
    found = index.search_many(queries, 10, allowed=small)
    assert [[i for i, _ in f] for f in found] == [[i for i, _ in t] for t in truth] or dtype != "fp32"
    assert _recall(found, truth) >= 0.95
    monkeypatch.setattr(DenseIndex, "subset_scan_limit", 0)
    half = set(ids[::2])  # half the rows: the filtered FAISS search
    truth = exact.search_many(queries, 10, allowed=half)
    found = index.search_many(queries, 10, allowed=half)
    assert all(len(f) == 10 and {i for i, _ in f} <= half for f in found)
    assert _recall(found, truth) >= (0.85 if kind != "flat" else 0.95 if dtype == "int8" else 0.99)


@pytest.mark.parametrize(("kind", "dtype"), KINDS)
def test_save_load_keeps_kind_results_and_vectors(data, built, tmp_path, kind, dtype):
    ids, vectors, queries, _ = data
    settings = _settings(kind, dtype)
    index = built[(kind, dtype)]
    index.save(tmp_path)
    loaded = DenseIndex.load(tmp_path, settings=settings)
    assert (loaded.kind, loaded.dtype, loaded.ids) == (kind, dtype, ids)
    assert loaded.search_many(queries[:5], 10) == index.search_many(queries[:5], 10)
    np.testing.assert_array_equal(loaded.vectors_for(ids[:50]), index.vectors_for(ids[:50]))
    np.testing.assert_allclose(
        loaded.vectors_for(ids[:5]),
        vectors[:5] / np.linalg.norm(vectors[:5], axis=1)[:, None],
        atol={"fp32": 1e-6, "fp16": 1e-3, "int8": 2e-2}[dtype],
    )
    assert DenseIndex.load(tmp_path).kind == kind  # without settings: what was recorded
    with pytest.raises(ValueError, match=f"the index is {kind}/{dtype}"):
        other = "hnsw" if kind != "hnsw" else "flat"
        DenseIndex.load(tmp_path, settings=_settings(other, dtype))


def test_search_time_knobs_come_from_the_settings_at_load(data, tmp_path):
    ids, vectors, queries, exact = data
    DenseIndex.build(ids, vectors, settings=_settings("ivf", "fp32", ivf_nlist=64)).save(tmp_path)
    truth = exact.search_many(queries, 50)
    narrow = DenseIndex.load(tmp_path, settings=_settings("ivf", "fp32", ivf_nlist=64, ivf_nprobe=1))
    wide = DenseIndex.load(tmp_path, settings=_settings("ivf", "fp32", ivf_nlist=64, ivf_nprobe=64))
    assert wide.faiss_index.nlist == 64
    assert _recall(wide.search_many(queries, 50), truth) == pytest.approx(1.0)  # every list scanned: exact
    assert _recall(narrow.search_many(queries, 50), truth) < 0.9


@pytest.mark.parametrize(("kind", "dtype"), [("ivf", "fp32"), ("hnsw", "int8"), ("flat", "int8")])
def test_empty_index_trains_on_its_first_vectors_and_extends(tmp_path, kind, dtype):
    ids, vectors = _clustered(1200)
    settings = _settings(kind, dtype)
    DenseIndex.empty(DIM, settings=settings).save(tmp_path)
    index = DenseIndex.load(tmp_path, settings=settings)
    assert len(index) == 0 and index.search(vectors[0], 5) == []
    index.extend(ids[:1000], vectors[:1000]).extend(ids[1000:], vectors[1000:])
    assert index.faiss_index.is_trained and len(index) == 1200
    assert index.search(vectors[1100], 1)[0][0] == ids[1100]
    assert index.vectors_for([ids[1100]]).shape == (1, DIM)


def test_format_1_metadata_still_loads(tmp_path):
    ids, vectors = _clustered(20)
    DenseIndex.build(ids, vectors, fp16=True).save(tmp_path)
    meta_path = tmp_path / "lit3r_dense.json"
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({"format": 1, "dim": meta["dim"], "fp16": True, "ids": meta["ids"]}))
    loaded = DenseIndex.load(tmp_path)
    assert (loaded.kind, loaded.dtype, loaded.fp16) == ("flat", "fp16", True)


def test_plan_prefers_the_cheaper_path():
    hnsw = _settings("hnsw", "fp32", hnsw_ef_search=128, hnsw_m=32)
    assert plan_restricted(hnsw, 0, 2_000_000, 27, 100, 4096).exact  # one paper's chunks
    wide = plan_restricted(hnsw, 0, 2_000_000, 1_000_000, 100, 4096)
    assert not wide.exact and wide.hnsw_ef == 256  # half allowed: twice the candidates
    assert plan_restricted(hnsw, 0, 2_000_000, 20_000, 100, 4096).exact  # 1%: 12,800 x 32 visits > 20,000 rows
    ivf = _settings("ivf", "fp32", ivf_nprobe=32)
    plan = plan_restricted(ivf, 4096, 2_000_000, 1_000_000, 100, 4096)
    assert not plan.exact and plan.ivf_nprobe == 64
    assert plan_restricted(ivf, 4096, 2_000_000, 100_000, 100, 4096).exact  # 5%: 640 lists hold 312k > 100k
    assert not plan_restricted(_settings("flat", "fp32"), 0, 2_000_000, 20_000, 100, 4096).exact
    eighth = plan_restricted(_settings("ivf", "fp32"), 4096, 2_000_000, 1_000_000, 100, 4096)
    assert eighth.ivf_nprobe == 1024 and not eighth.exact  # an eighth of the lists by default, doubled for half
    assert ivf_probes(_settings("ivf", "fp32"), 4096) == 512 and ivf_probes(_settings("ivf", "fp32"), 5) == 1
    assert ivf_probes(_settings("ivf", "fp32", ivf_nprobe=64), 32) == 32  # never more lists than there are
    assert plan_restricted(ivf, 4096, 2_000_000, 5000, 100, 10_000).exact  # under the scan limit


def test_exact_scan_over_blocks_equals_brute_force(monkeypatch):
    monkeypatch.setattr(dense_search, "SCAN_BLOCK", 7)
    rng = np.random.default_rng(3)
    stored = rng.normal(size=(100, 8)).astype(np.float32)
    stored /= np.linalg.norm(stored, axis=1, keepdims=True)
    stored[40] = stored[60]  # a tie: the lower row comes first
    rows = np.arange(10, 100, dtype=np.int64)
    queries = np.stack([stored[60], rng.normal(size=8).astype(np.float32)])
    results = top_k_of_rows(queries, rows, 5, lambda r: stored[r])
    for query, hits in zip(queries, results, strict=True):
        scores = stored[rows] @ query
        order = np.lexsort((rows, -scores))[:5]
        assert [r for r, _ in hits] == rows[order].tolist()
        np.testing.assert_allclose([s for _, s in hits], scores[order], rtol=1e-5)
    assert [r for r, _ in results[0][:2]] == [40, 60]


def test_auto_nlist_and_factory_strings():
    assert [auto_nlist(n) for n in (0, 100, 10_000, 100_000, 1_000_000, 2_000_000)] == [1, 2, 128, 1024, 4096, 4096]
    assert factory_string(_settings("hnsw", "int8", hnsw_m=16), 10) == "HNSW16,SQ8"
    assert factory_string(_settings("ivf", "fp16"), 100_000) == "IVF1024,SQfp16"
    assert factory_string(_settings("ivf", "fp32", ivf_nlist=64), 100_000) == "IVF64,Flat"
    assert factory_string(IndexSettings(dense_fp16=True), 5) == "SQfp16"


def test_index_key_follows_what_the_index_stores_not_how_it_is_searched():
    base = index_key(Settings())
    assert Settings().index_shape()["index"] == {"dense_fp16": False}  # the key of indexes built before kinds
    assert index_key(Settings(index={"dense_dtype": "fp16"})) == index_key(Settings(index={"dense_fp16": True}))
    keys = {
        base,
        index_key(Settings(index={"dense_dtype": "fp16"})),
        index_key(Settings(index={"dense_dtype": "int8"})),
        index_key(Settings(index={"dense_kind": "hnsw"})),
        index_key(Settings(index={"dense_kind": "hnsw", "hnsw_m": 16})),
        index_key(Settings(index={"dense_kind": "ivf"})),
        index_key(Settings(index={"dense_kind": "ivf", "ivf_nlist": 256})),
        index_key(Settings(index={"dense_kind": "ivf", "dense_dtype": "int8"})),
    }
    assert len(keys) == 8
    assert index_key(Settings(index={"dense_kind": "hnsw", "hnsw_ef_search": 512})) == index_key(
        Settings(index={"dense_kind": "hnsw"})
    )
    assert index_key(Settings(index={"ivf_nprobe": 4})) == base
    with pytest.raises(ValueError, match="dense_fp16=true contradicts"):
        IndexSettings(dense_fp16=True, dense_dtype="int8")


def test_lit3r_index_builds_and_searches_the_kind_the_settings_name(tmp_path, hashing_encoder):
    settings = Settings(home=tmp_path / "home", index={"dense_kind": "hnsw", "dense_dtype": "int8"})
    papers = {
        pid: qasper_paper(f"Paper {pid}", [("Intro", [f"{words} introduction."]), ("Results", [f"{words} results."])])
        for pid, words in {"a": "sparse lexical bm25", "b": "dense neural vectors", "c": "graph citations"}.items()
    }
    with CorpusStore(settings.home) as store:
        ingest([write_qasper(tmp_path / "papers.json", papers)], store)
        build_index(settings, store)
    index = CorpusIndex.open(settings)
    assert (index.dense.kind, index.dense.dtype) == ("hnsw", "int8")
    assert type(index.dense.faiss_index).__name__ == "IndexHNSWSQ"
    assert search_chunks(index, "dense neural vectors", mode="dense", k=1)[0].paper_id == "b"
    in_paper = search_chunks(index, "dense neural vectors", mode="dense", k=5, paper_ids=["c"])
    assert in_paper and all(h.paper_id == "c" for h in in_paper)
    with pytest.raises(IndexNotBuiltError):  # the flat default is another key, not built here
        CorpusIndex.open(Settings(home=settings.home))


def test_small_searches_run_faiss_on_one_thread_and_restore_the_count(data):
    ids, vectors, queries, exact = data
    before = faiss.omp_get_max_threads()
    seen = []
    with dense_search.faiss_threads(1):
        seen.append(faiss.omp_get_max_threads())
    with dense_search.faiss_threads(dense_search.SMALL_BATCH):
        seen.append(faiss.omp_get_max_threads())
    assert seen == [1, before] and faiss.omp_get_max_threads() == before
    assert exact.search_many(queries[:2], 5) == [exact.search(q, 5) for q in queries[:2]]
    assert faiss.omp_get_max_threads() == before
