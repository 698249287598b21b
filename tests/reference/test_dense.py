"""Dense FAISS index: exact search against numpy, fp16, subsets, persistence and extension."""

from __future__ import annotations

import numpy as np
import pytest

from lit3r.index.dense import DenseIndex

DIM = 16


def _data(n: int, seed: int = 0) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    return [f"c{seed}-{i}" for i in range(n)], rng.normal(size=(n, DIM)).astype(np.float32) * 3


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _brute_force(ids: list[str], vectors: np.ndarray, query: np.ndarray, k: int) -> list[tuple[str, float]]:
    scores = _unit(vectors.astype(np.float64)) @ _unit(query.astype(np.float64))
    order = np.argsort(-scores)[:k]
    return [(ids[i], float(scores[i])) for i in order]


def _assert_hits_equal(hits, expected, tol=1e-5):
    assert [doc for doc, _ in hits] == [doc for doc, _ in expected]
    np.testing.assert_allclose([s for _, s in hits], [s for _, s in expected], atol=tol)


def test_exact_search_equals_numpy_brute_force():
    ids, vectors = _data(60)
    index = DenseIndex.build(ids, vectors)
    queries = np.random.default_rng(1).normal(size=(5, DIM)).astype(np.float32)
    for query in queries:
        _assert_hits_equal(index.search(query, k=7), _brute_force(ids, vectors, query, 7))
    batched = index.search_many(queries, k=7)
    assert batched == [index.search(q, k=7) for q in queries]
    assert len(index.search(queries[0], k=500)) == 60  # k above the size: every vector, no padding


def test_fp16_scores_are_close_to_exact():
    ids, vectors = _data(60)
    exact, half = DenseIndex.build(ids, vectors), DenseIndex.build(ids, vectors, fp16=True)
    query = np.random.default_rng(2).normal(size=DIM).astype(np.float32)
    exact_scores = dict(exact.search(query, k=60))
    hits = half.search(query, k=10)
    assert len(hits) == 10
    for doc, score in hits:
        assert score == pytest.approx(exact_scores[doc], abs=2e-3)
    np.testing.assert_allclose(half.vectors_for(ids[:5]), _unit(vectors[:5]), atol=1e-3)
    assert not np.array_equal(half.vectors_for(ids[:5]), exact.vectors_for(ids[:5]))  # really stored as fp16


@pytest.mark.parametrize("fp16", [False, True])
@pytest.mark.parametrize("scan_limit", [4096, 0])  # direct dot products, then FAISS IDSelectorBatch
def test_allowed_subset_equals_brute_force_on_subset(monkeypatch, fp16, scan_limit):
    monkeypatch.setattr(DenseIndex, "subset_scan_limit", scan_limit)
    ids, vectors = _data(60)
    index = DenseIndex.build(ids, vectors, fp16=fp16)
    rows = [3, 7, 11, 40, 59]
    query = np.random.default_rng(3).normal(size=DIM).astype(np.float32)
    allowed = {ids[r] for r in rows} | {"not-in-index"}
    expected = _brute_force([ids[r] for r in rows], vectors[rows], query, 3)
    _assert_hits_equal(index.search(query, k=3, allowed=allowed), expected, tol=2e-3 if fp16 else 1e-5)
    assert index.search(query, k=3, allowed={"not-in-index"}) == []
    many = index.search_many(np.stack([query, -query]), k=10, allowed=allowed)
    assert [len(h) for h in many] == [5, 5] and many[1][0][0] == many[0][-1][0]


@pytest.mark.parametrize("mmap", [False, True])
def test_save_load_round_trip(tmp_path, mmap):
    ids, vectors = _data(30)
    index = DenseIndex.build(ids, vectors, fp16=True)
    index.save(tmp_path)
    loaded = DenseIndex.load(tmp_path, mmap=mmap)
    assert loaded.ids == ids and loaded.dim == DIM and loaded.fp16
    query = vectors[4] + 0.1
    assert loaded.search(query, k=5) == index.search(query, k=5)
    assert loaded.vectors_for(ids).tobytes() == index.vectors_for(ids).tobytes()


def test_extend_keeps_old_vectors_byte_identical(tmp_path):
    ids, vectors = _data(20)
    new_ids, new_vectors = _data(10, seed=1)
    DenseIndex.build(ids, vectors).save(tmp_path)
    index = DenseIndex.load(tmp_path)
    before = index.vectors_for(ids).tobytes()
    assert index.extend(new_ids, new_vectors) is index
    assert index.vectors_for(ids).tobytes() == before
    assert index.ids == ids + new_ids
    rebuilt = DenseIndex.build(ids + new_ids, np.vstack([vectors, new_vectors]))
    query = new_vectors[2]
    assert index.search(query, k=5) == rebuilt.search(query, k=5)
    assert index.search(query, k=1)[0][0] == new_ids[2]


def test_vectors_are_normalised_and_validated():
    ids, vectors = _data(5)
    index = DenseIndex.build(ids, vectors)
    np.testing.assert_allclose(np.linalg.norm(index.vectors_for(ids), axis=1), 1.0, atol=1e-6)
    assert index.search(vectors[0] * 100, k=1)[0][1] == pytest.approx(1.0, abs=1e-5)
    assert index.vectors_for([]).shape == (0, DIM)
    with pytest.raises(ValueError, match="dimension"):
        index.search(np.ones(DIM + 1), k=1)
    with pytest.raises(ValueError, match="zero vector"):
        index.extend(["z"], np.zeros((1, DIM)))
    with pytest.raises(ValueError, match="NaN"):
        index.extend(["z"], np.full((1, DIM), np.nan))
    with pytest.raises(ValueError, match="duplicate"):
        index.extend([ids[0]], vectors[:1])
    with pytest.raises(ValueError, match="2 ids for 1 vectors"):
        index.extend(["x", "y"], vectors[:1])
    with pytest.raises(KeyError):
        index.vectors_for(["unknown"])
    assert len(index) == 5  # failed calls added nothing
