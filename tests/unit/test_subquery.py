"""Ranking A for one subquery: per-index paper rankings, RRF, PRF, candidate order, pinned blend rerank."""

from __future__ import annotations

import pytest

from lit3r.retrieval import fusion
from lit3r.retrieval.subquery import (
    _representatives,
    candidate_chunks,
    chunk_and_paper_fusion,
    fuse_papers,
    prf_query,
    retrieve_subquery,
    sweep,
)
from lit3r.settings import load_preset
from lit3r.settings.retrieval import RetrieverSettings

from fakes.corpus import PAPERS
from fakes.index import MemoryIndex
from fakes.retrieval import ScriptedReranker

SEED = RetrieverSettings(**load_preset("seed")["retriever"])
"""The seed's rules (PRF always, the pinned blend), which these tests describe; the defaults differ."""


@pytest.fixture(scope="module")
def index(memory_index: MemoryIndex) -> MemoryIndex:
    return memory_index


def test_a_sweep_ranks_each_paper_by_its_best_chunk(index) -> None:
    found = sweep(index, "okapi lexical inverted saturation", depth=100)
    rankings = {name: [p for p, _s in ranking] for name, ranking in found.paper_rankings.items()}
    assert set(rankings) == {"bm25_chunks", "bm25_papers", "dense"}
    assert all(r[0] == "sparse" for r in rankings.values())
    hits = index.bm25_chunks.search("okapi lexical inverted saturation", 100)
    expected = fusion.best_chunk_per_paper([(c, index.chunk_by_id[c].paper_id) for c, _s in hits])
    assert rankings["bm25_chunks"] == expected
    assert len(rankings["dense"]) == len(set(rankings["dense"])) == len(PAPERS)


def test_fuse_papers_is_equal_weight_rrf_k60() -> None:
    fused = dict(fuse_papers([["a", "b"], ["b", "c"], ["b"]]))
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61 + 1 / 61)
    assert fused["a"] == pytest.approx(1 / 61)
    assert list(fused)[0] == "b"


def test_prf_appends_exactly_the_first_512_chars_of_the_title_abstract(index) -> None:
    title_abstract = index.chunks_by_paper["sparse"][0]
    assert title_abstract.type == "title_abstract" and len(title_abstract.text) > 600
    expanded = prf_query(index, "how is BM25 tuned", "sparse")
    assert expanded == "how is BM25 tuned " + title_abstract.text[:512]
    assert expanded.split(" ", 4)[4].startswith("[SIGIR 2024] Okapi BM25")
    assert prf_query(index, "q", "sparse", chars=10) == "q " + title_abstract.text[:10]


def test_prf_runs_one_second_sweep_with_the_top_paper(index, spy_calls) -> None:
    calls = spy_calls(index.bm25_papers, "search")
    result = retrieve_subquery(index, "dense encoder embedding", None, RetrieverSettings())
    assert len(calls) == 2
    top = result.trace["sweeps"]["original"]["fused"][0][0]
    assert result.trace["prf"]["top_paper"] == top == "dense"
    assert result.trace["sweeps"]["expanded"]["query"] == prf_query(index, "dense encoder embedding", top)
    original = [p for p, _s in result.trace["sweeps"]["original"]["fused"]]
    expanded = [p for p, _s in result.trace["sweeps"]["expanded"]["fused"]]
    assert result.papers == fusion.rrf([original, expanded], k=60)


def test_prf_off_runs_a_single_sweep(index, spy_calls) -> None:
    calls = spy_calls(index.bm25_papers, "search")
    result = retrieve_subquery(index, "dense encoder embedding", None, RetrieverSettings(prf=False))
    assert len(calls) == 1
    assert "expanded" not in result.trace["sweeps"] and result.trace["prf"] is None
    assert result.papers == [tuple(p) for p in result.trace["sweeps"]["original"]["fused"]]


def test_chunk_and_paper_fusion_hand_computed() -> None:
    # chunk ranks: a1=1, b1=2, a2=3, c1=4; paper ranks: p2=1, p1=2 (p3 unranked); k=10
    # a1: 1/11 + 1/12 = .1742   b1: 1/12 + 1/11 = .1742 (tie: chunk order keeps a1 first)
    # a2: 1/13 + 1/12 = .1603   c1: 1/14 + 0 = .0714
    paper_of = {"a1": "p1", "a2": "p1", "b1": "p2", "c1": "p3"}
    ranked = chunk_and_paper_fusion(["p2", "p1"], ["a1", "b1", "a2", "c1"], paper_of, k=10)
    assert ranked == ["a1", "b1", "a2", "c1"]
    # a paper ranked first lifts its second chunk above another paper's first: p1 first, p2 tenth
    ranked = chunk_and_paper_fusion(["p1", *[f"x{i}" for i in range(8)], "p2"], ["b1", "a1", "a2"], paper_of, k=1)
    # b1: 1/2 + 1/11 = .591, a1: 1/3 + 1/2 = .833, a2: 1/4 + 1/2 = .75
    assert ranked == ["a1", "a2", "b1"]
    assert chunk_and_paper_fusion(["p1"], ["a1", "a2"], paper_of, limit=1) == ["a1"]


def test_candidate_orders() -> None:
    chunks_of = {"p1": ["a1", "a2", "a3"], "p2": ["b1"], "p3": ["c1", "c2"]}
    assert candidate_chunks(["p1", "p2", "p3"], chunks_of) == ["a1", "b1", "c1", "a2", "c2", "a3"]
    assert candidate_chunks(["p3", "p1"], chunks_of, "grouped") == ["c1", "c2", "a1", "a2", "a3"]
    assert candidate_chunks(["p1", "p2", "p3"], chunks_of, limit=2) == ["a1", "b1"]
    assert candidate_chunks(["p9", "p2"], chunks_of) == ["b1"]


def test_candidates_follow_the_fused_paper_ranking_round_robin(index) -> None:
    result = retrieve_subquery(index, "reranker logit pairwise", None, RetrieverSettings(candidate_order="round_robin"))
    papers = [p for p, _s in result.papers]
    heads = [index.chunk_by_id[c].paper_id for c in result.trace["candidates"][: len(papers)]]
    assert heads == papers  # first round: the best chunk of each paper, in fused order
    assert len(result.trace["candidates"]) == len(index.chunks)  # tiny corpus: every chunk is a candidate


def test_without_reranker_the_pool_is_the_retrieval_top_20_with_rank_scores(index) -> None:
    result = retrieve_subquery(index, "reranker logit pairwise", None, SEED)
    candidates = result.trace["candidates"]
    assert result.best_reranker_score is None and result.trace["reranker"] is None
    assert [c for c, _s in result.pool] == candidates[:20]
    assert [s for _c, s in result.pool] == pytest.approx([1.0 / (60 + r) + 1.0 for r in range(1, 21)])
    assert list(result.trace["timings_ms"]) == ["sweep", "prf", "candidates", "rerank"]
    assert all(ms >= 0 for ms in result.trace["timings_ms"].values())


def test_pinned_top_20_survive_the_rerankers_favourite(index) -> None:
    favourite_last = ScriptedReranker(lambda position, _p: float(position))  # the last candidate scores highest
    settings = SEED.model_copy(update={"rerank_candidates": 30})
    result = retrieve_subquery(index, "reranker logit pairwise", favourite_last, settings)
    candidates = result.trace["candidates"]
    assert len(candidates) == 30
    [(query, passages)] = favourite_last.calls
    assert query == "reranker logit pairwise"
    assert passages == [index.chunk_by_id[c].text for c in candidates]
    assert {c for c, _s in result.pool} == set(candidates[:20])
    assert candidates[-1] not in dict(result.pool)
    assert result.best_reranker_score == 29.0
    expected = fusion.blend_rerank(candidates, {c: float(i) for i, c in enumerate(candidates)}, keep=20)
    assert result.pool == expected
    # Without pins the reranker's favourite makes it into the pool.
    no_pins = SEED.model_copy(update={"rerank_candidates": 30, "pinned": 0})
    unpinned = retrieve_subquery(index, "reranker logit pairwise", ScriptedReranker(lambda i, _p: float(i)), no_pins)
    assert candidates[-1] in dict(unpinned.pool)


def test_rerank_off_never_calls_the_reranker(index) -> None:
    reranker = ScriptedReranker()
    result = retrieve_subquery(index, "speech acoustic", reranker, SEED.model_copy(update={"rerank": False}))
    assert reranker.calls == [] and result.best_reranker_score is None
    assert [c for c, _s in result.pool] == result.trace["candidates"][:20]


def test_allowed_papers_restrict_every_ranking(index) -> None:
    allowed = {"fusion", "vision"}
    query, reranker = "okapi lexical dense encoder", ScriptedReranker()
    result = retrieve_subquery(index, query, reranker, RetrieverSettings(), allowed_papers=allowed)
    assert {p for p, _s in result.papers} <= allowed
    assert {index.chunk_by_id[c].paper_id for c in result.trace["candidates"]} <= allowed
    assert {index.chunk_by_id[c].paper_id for c, _s in result.pool} <= allowed
    for swept in result.trace["sweeps"].values():
        for ranking in swept["papers"].values():
            assert {p for p, _s in ranking} <= allowed
    with pytest.raises(ValueError, match="unknown paper"):
        retrieve_subquery(index, "okapi", None, RetrieverSettings(), allowed_papers=["nope"])


def test_dense_query_replaces_only_the_dense_text(index, monkeypatch) -> None:
    seen: list[str] = []
    original = index.encoder.encode_queries
    monkeypatch.setattr(index.encoder, "encode_queries", lambda texts: seen.extend(texts) or original(texts))
    result = retrieve_subquery(index, "okapi", None, SEED, dense_query="image pixel convolution")
    assert seen[0] == "image pixel convolution"
    assert seen[1].startswith("image pixel convolution ")  # the PRF sweep expands the HyDE text too
    assert result.trace["sweeps"]["original"]["query"] == "okapi"
    assert result.trace["sweeps"]["original"]["papers"]["dense"][0][0] == "vision"


def test_empty_subquery_is_refused(index) -> None:
    with pytest.raises(ValueError, match="empty"):
        retrieve_subquery(index, "  ", None, RetrieverSettings())


def test_papers_found_only_by_paper_bm25_get_a_representative_chunk(index) -> None:
    chosen = _representatives(index, "saturation", ["sparse", "vision"])
    best = index.bm25_chunks.search("saturation", 5, allowed={c.id for c in index.chunks_by_paper["sparse"]})[0][0]
    assert chosen == {"sparse": [best], "vision": ["vision::c0000"]}  # no match: the title-abstract chunk
