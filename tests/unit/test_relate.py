"""Ranking B: the three neighbour sources per seed, seeds first, and the A/B fusion."""

from __future__ import annotations

import pytest

from lit3r.retrieval import fusion
from lit3r.retrieval.relate import (
    bm25_neighbours,
    coupling_neighbours,
    final_ranking,
    ranking_b,
    seed_neighbours,
    vector_neighbours,
)
from lit3r.settings.retrieval import RetrieverSettings

from fakes.corpus import PAPERS
from fakes.index import MemoryIndex


@pytest.fixture(scope="module")
def index(memory_index: MemoryIndex) -> MemoryIndex:
    return memory_index


def test_references_resolve_to_corpus_papers(index) -> None:
    assert index.citations.references("fusion") == {"sparse", "dense", "rerank"}
    assert index.citations.references("speech") == {"dense", "rerank", "vision"}


def test_coupling_needs_two_shared_references(index) -> None:
    # fusion cites {sparse, dense, rerank}: rerank {sparse, dense} shares 2 (Jaccard 2/3), speech {dense, rerank,
    # vision} shares 2 (2/4), citation {sparse, graph} shares only 1 and is left out.
    assert coupling_neighbours(index, "fusion") == ["rerank", "speech"]
    assert coupling_neighbours(index, "fusion", min_shared=1) == ["rerank", "speech", "citation"]
    assert coupling_neighbours(index, "graph") == []  # cites nothing


def test_bm25_neighbours_query_the_seeds_first_1200_chars_unchanged(index, spy_calls) -> None:
    calls = spy_calls(index.bm25_papers, "search")
    found = bm25_neighbours(index, "dense", chars=1200, depth=100)
    assert [args[0] for args, _kw in calls] == [index.paper_text("dense")[:1200]]
    assert len(index.paper_text("dense")) > 1200
    assert "dense" not in found and found
    assert bm25_neighbours(index, "dense", chars=1200, depth=2) == found[:2]


def test_vector_neighbours_use_the_seeds_own_vector(index) -> None:
    found = vector_neighbours(index, "sparse", depth=100)
    assert "sparse" not in found and sorted(found) == sorted(set(PAPERS) - {"sparse"})
    vector = index.paper_vectors.vectors_for(["sparse"])[0]
    assert found == [p for p, _s in index.paper_vectors.search(vector, 100) if p != "sparse"]
    assert vector_neighbours(index, "sparse", depth=3) == found[:3]
    assert set(vector_neighbours(index, "sparse", depth=100, allowed_papers={"sparse", "vision"})) == {"vision"}


def test_ranking_b_puts_seeds_first_and_fuses_round_robin_sources(index) -> None:
    settings = RetrieverSettings()
    result = ranking_b(index, ["fusion", "citation", "fusion", "ghost"], settings)
    assert result.seeds == ["fusion", "citation"]  # duplicates and unknown ids dropped
    assert result.papers[:2] == ["fusion", "citation"]
    assert len(result.papers) == len(set(result.papers)) == len(PAPERS)
    neighbours = seed_neighbours(index, ["fusion", "citation"], settings)
    assert result.neighbours == neighbours and list(neighbours) == ["paper_vectors", "coupling", "bm25"]
    assert result.papers == fusion.fuse_ranking_b(["fusion", "citation"], neighbours, k=60, limit=100)
    limited = ranking_b(index, ["fusion"], RetrieverSettings(ranking_b_limit=2))
    assert len(limited.papers) == 3 and limited.papers[0] == "fusion"
    assert ranking_b(index, ["ghost"], settings).papers == []


def test_ranking_b_respects_allowed_papers(index) -> None:
    allowed = {"fusion", "rerank", "graph"}
    result = ranking_b(index, ["fusion"], RetrieverSettings(), allowed_papers=allowed)
    assert set(result.papers) <= allowed and result.papers[0] == "fusion"


def test_ab_fusion_k10_top_50() -> None:
    a = [f"a{i}" for i in range(60)]
    b = ["b0", "a1", "b1"]
    final = final_ranking(a, b)
    assert len(final) == 50
    assert final[0][0] == "a1"  # in both at rank 2: 2/12 beats a0's 1/11
    assert final[0][1] == pytest.approx(2 / 12)
    assert dict(final)["a0"] == pytest.approx(1 / 11)
    assert final == fusion.rrf([a, b], k=10, limit=50)
    assert len(final_ranking(a, b, RetrieverSettings(final_papers=5))) == 5


def test_coupling_through_the_cited_by_lists_equals_scoring_every_paper() -> None:
    """Only papers sharing a reference with the seed are scored; on a random graph the neighbours (order
    included) are what a scan of every paper gives, with and without a restriction to some papers."""
    import random
    from types import SimpleNamespace

    from lit3r.index.citations import CitationGraph

    rng = random.Random(7)
    papers = [f"p{i:03d}" for i in range(200)]
    graph = CitationGraph({pid: rng.sample(papers, rng.randint(0, 12)) for pid in papers})
    index = SimpleNamespace(citations=graph)
    allowed = set(rng.sample(papers, 80))
    coupled = 0
    for seed in papers[:40]:
        for restriction in (None, allowed):
            every = {p: graph.references(p) for p in graph.papers if restriction is None or p in restriction}
            expected = [p for p, _ in fusion.coupling_scores(graph.references(seed), every, 2, exclude=[seed])]
            assert coupling_neighbours(index, seed, 2, restriction) == expected
            coupled += len(expected)
    assert coupled > 100  # the graph couples many pairs, so the comparison is not between empty lists
