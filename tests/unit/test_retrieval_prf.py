"""The PRF rules: never within one paper, 'agree' expands only when the three indexes share their top paper, the
expanded ranking's weight, and PRF that reorders papers without adding its chunks."""

from __future__ import annotations

import pytest

from lit3r.retrieval import fusion
from lit3r.retrieval.subquery import Sweep, _retrieval_order, gather, prf_skip_reason, retrieve_subquery
from lit3r.settings.retrieval import RetrieverSettings

from fakes.index import MemoryIndex


@pytest.fixture(scope="module")
def index(memory_index: MemoryIndex) -> MemoryIndex:
    return memory_index


def _sweep(tops: dict[str, str]) -> Sweep:
    found = Sweep(query="q", dense_query="q")
    found.paper_rankings = {name: [(top, 1.0), ("other", 0.5)] for name, top in tops.items()}
    found.fused = [(next(iter(tops.values())), 0.1)]
    return found


def test_agree_never_expands_within_one_paper(index, spy_calls) -> None:
    calls = spy_calls(index.bm25_papers, "search")
    result = retrieve_subquery(index, "dense encoder embedding", None, RetrieverSettings(), allowed_papers=["dense"])
    assert len(calls) == 1
    assert result.trace["prf"] is None and result.trace["prf_skipped"] == "one allowed paper"
    seed = retrieve_subquery(
        index, "dense encoder embedding", None, RetrieverSettings(prf_when="always"), allowed_papers=["dense"]
    )
    assert len(calls) == 3 and seed.trace["prf"]["top_paper"] == "dense"  # the seed's rule expands even there
    two = retrieve_subquery(
        index, "dense encoder embedding", None, RetrieverSettings(), allowed_papers=["dense", "vision"]
    )
    assert two.trace["prf"] is not None  # two papers: a ranking PRF can change


def test_agree_expands_only_when_every_index_ranks_the_same_paper_first() -> None:
    agree = RetrieverSettings(prf_when="agree")
    same = _sweep({"bm25_chunks": "a", "bm25_papers": "a", "dense": "a"})
    split = _sweep({"bm25_chunks": "a", "bm25_papers": "b", "dense": "a"})
    assert prf_skip_reason(same, agree, None) is None
    assert prf_skip_reason(split, agree, None) == "the indexes disagree on the top paper"
    assert prf_skip_reason(split, RetrieverSettings(prf_when="always"), None) is None  # the seed expands regardless
    assert prf_skip_reason(same, RetrieverSettings(prf=False), None) == "prf off"
    assert prf_skip_reason(Sweep(query="q", dense_query="q"), agree, None) == "nothing found"


def test_the_expanded_ranking_is_fused_with_its_weight(index) -> None:
    result = retrieve_subquery(index, "dense encoder embedding", None, RetrieverSettings(prf_weight=0.5))
    original = [p for p, _s in result.trace["sweeps"]["original"]["fused"]]
    expanded = [p for p, _s in result.trace["sweeps"]["expanded"]["fused"]]
    assert result.papers == fusion.rrf([original, expanded], k=60, weights=[1.0, 0.5])
    top = original[0]
    assert dict(result.papers)[top] == pytest.approx(1 / 61 + 0.5 / (60 + expanded.index(top) + 1))


def test_prf_without_its_chunks_only_reorders_papers(index) -> None:
    settings = RetrieverSettings(prf_chunks=False)
    found = gather(index, "okapi lexical dense encoder", None, settings)
    assert found.trace["prf"] is not None
    papers = [p for p, _s in found.papers]
    assert found.candidates == _retrieval_order(
        index, "okapi lexical dense encoder", [found.original], papers, settings
    )
    with_chunks = gather(index, "okapi lexical dense encoder", None, RetrieverSettings())
    assert with_chunks.candidates != found.candidates  # the expanded sweep's chunks would have changed them
