"""Hand-computed checks of the retriever's ranking rules (Lit3R seed §2.1.2–2.1.3)."""

from __future__ import annotations

import pytest

from lit3r.retrieval.fusion import (
    ab_fusion,
    best_chunk_per_paper,
    blend_rerank,
    coupling_scores,
    fuse_ranking_b,
    merge_pool,
    rank_papers_by_max,
    round_robin,
    rrf,
    top_chunks_per_paper,
)


def ids(pairs: list[tuple[str, float]]) -> list[str]:
    return [item for item, _score in pairs]


# --- RRF -------------------------------------------------------------------------------------


def test_rrf_equal_weights_sums_reciprocal_ranks() -> None:
    # A = [a, b, c], B = [b, d], k = 60:
    #   a = 1/61          = 0.016393   (A rank 1)
    #   b = 1/62 + 1/61   = 0.032522   (A rank 2, B rank 1)
    #   c = 1/63          = 0.015873   (A rank 3 only)
    #   d = 1/62          = 0.016129   (B rank 2 only) -> d above c
    fused = rrf([["a", "b", "c"], ["b", "d"]], k=60)
    assert ids(fused) == ["b", "a", "d", "c"]
    scores = dict(fused)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["a"] == pytest.approx(1 / 61)
    assert scores["d"] == pytest.approx(1 / 62)
    assert scores["c"] == pytest.approx(1 / 63)


def test_rrf_weights_change_the_order() -> None:
    # weights (2, 1), k = 60:
    #   a = 2/61          = 0.032787
    #   b = 2/62 + 1/61   = 0.032258 + 0.016393 = 0.048651
    #   c = 2/63          = 0.031746
    #   d = 1/62          = 0.016129   -> now c is above d
    fused = rrf([["a", "b", "c"], ["b", "d"]], k=60, weights=[2.0, 1.0])
    assert ids(fused) == ["b", "a", "c", "d"]
    assert dict(fused)["b"] == pytest.approx(2 / 62 + 1 / 61)
    assert dict(fused)["c"] == pytest.approx(2 / 63)


def test_rrf_ties_by_first_appearance_limit_and_repeats() -> None:
    # x and y both score 1/61: the one read first wins.
    assert ids(rrf([["x"], ["y"]])) == ["x", "y"]
    assert ids(rrf([["y"], ["x"]])) == ["y", "x"]
    # a repeat counts once, at its first position: [a, a, b] is [a, b], so b = 1/(60+2).
    assert dict(rrf([["a", "a", "b"]]))["b"] == pytest.approx(1 / 62)
    assert ids(rrf([["a", "b", "c"], ["b", "d"]], limit=2)) == ["b", "a"]


def test_rrf_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="weights"):
        rrf([["a"], ["b"]], weights=[1.0])
    with pytest.raises(ValueError):
        rrf([["a"]], weights=[-1.0])
    with pytest.raises(ValueError):
        rrf([["a"]], limit=-1)


def test_best_chunk_per_paper_keeps_each_papers_best_position() -> None:
    ranking = [("c1", "p1"), ("c2", "p2"), ("c3", "p1"), ("c4", "p3"), ("c5", "p2")]
    assert best_chunk_per_paper(ranking) == ["p1", "p2", "p3"]
    assert best_chunk_per_paper([]) == []


# --- chunk reranking -------------------------------------------------------------------------

# Retrieval order c1..c5; the reranker likes them in the reverse-ish order c3 > c4 > c5 > c2 > c1.
RETRIEVAL = ["c1", "c2", "c3", "c4", "c5"]
RERANKER = {"c1": 0.1, "c2": 0.2, "c3": 0.9, "c4": 0.8, "c5": 0.7}
# r_ret: c1=1 c2=2 c3=3 c4=4 c5=5 ; r_rr: c3=1 c4=2 c5=3 c2=4 c1=5 ; k = 60
#   s(c1) = 0.6/61 + 0.4/65 = 0.0098361 + 0.0061538 = 0.0159899
#   s(c2) = 0.6/62 + 0.4/64 = 0.0096774 + 0.0062500 = 0.0159274
#   s(c3) = 0.6/63 + 0.4/61 = 0.0095238 + 0.0065574 = 0.0160812
#   s(c4) = 0.6/64 + 0.4/62 = 0.0093750 + 0.0064516 = 0.0158266
#   s(c5) = 0.6/65 + 0.4/63 = 0.0092308 + 0.0063492 = 0.0155800
S = {
    "c1": 0.6 / 61 + 0.4 / 65,
    "c2": 0.6 / 62 + 0.4 / 64,
    "c3": 0.6 / 63 + 0.4 / 61,
    "c4": 0.6 / 64 + 0.4 / 62,
    "c5": 0.6 / 65 + 0.4 / 63,
}


def test_blend_rerank_without_pins_orders_by_blended_score() -> None:
    out = blend_rerank(RETRIEVAL, RERANKER, pinned=0, keep=5)
    assert ids(out) == ["c3", "c1", "c2", "c4", "c5"]
    for chunk, score in out:
        assert score == pytest.approx(S[chunk])


def test_blend_rerank_pins_top_retrieval_chunks_even_when_reranker_ranks_them_last() -> None:
    # c1, c2 are pinned although the reranker puts them 5th and 4th; c3 has the best s overall.
    out = blend_rerank(RETRIEVAL, RERANKER, pinned=2, keep=5)
    assert ids(out) == ["c1", "c2", "c3", "c4", "c5"]
    scores = dict(out)
    assert scores["c1"] == pytest.approx(S["c1"] + 1.0)  # pinned: s + pin bonus
    assert scores["c2"] == pytest.approx(S["c2"] + 1.0)
    assert scores["c3"] == pytest.approx(S["c3"])  # unpinned: plain s
    # keep cuts after pinning: with keep = 2 the best-s chunk c3 is dropped, the pins stay.
    assert ids(blend_rerank(RETRIEVAL, RERANKER, pinned=2, keep=2)) == ["c1", "c2"]


def test_blend_rerank_orders_pinned_chunks_among_themselves_by_s() -> None:
    # pinned = 3: c1, c2, c3 are pinned; among them s(c3) > s(c1) > s(c2).
    assert ids(blend_rerank(RETRIEVAL, RERANKER, pinned=3, keep=5)) == ["c3", "c1", "c2", "c4", "c5"]


def test_blend_rerank_pool_scores_keep_pins_first_across_subqueries() -> None:
    # The weakest possible pinned chunk (last in both ranks of a 200-candidate list) still
    # outscores the strongest possible unpinned one (1/61) once in the pool.
    ranking = [f"c{i}" for i in range(200)]
    scores = {c: float(-i) for i, c in enumerate(ranking)}
    scores["c0"] = -1000.0  # the pinned c0 is ranked last by the reranker
    weakest_pinned = dict(blend_rerank(ranking, scores, pinned=1, keep=200))["c0"]
    assert weakest_pinned > 1 / 61
    pool = merge_pool(merge_pool({}, [("x", 1 / 61)]), [("c0", weakest_pinned)])
    assert rank_papers_by_max(pool, {"x": "p_unpinned", "c0": "p_pinned"})[0][0] == "p_pinned"


def test_blend_rerank_candidates_ties_and_missing_scores() -> None:
    # max_candidates = 3: c4, c5 are never scored however much the reranker likes them.
    assert set(ids(blend_rerank(RETRIEVAL, RERANKER, pinned=0, keep=5, max_candidates=3))) == {"c1", "c2", "c3"}
    # Equal reranker scores rank by retrieval order: r_rr(a) = 1, r_rr(b) = 2.
    out = dict(blend_rerank(["a", "b"], {"a": 0.5, "b": 0.5}, pinned=0))
    assert out["a"] == pytest.approx(0.6 / 61 + 0.4 / 61)
    assert out["b"] == pytest.approx(0.6 / 62 + 0.4 / 62)
    # A chunk the reranker did not score ranks after the scored ones: r_rr(a) = 2, r_rr(b) = 1.
    out = dict(blend_rerank(["a", "b"], {"b": 0.1}, pinned=0))
    assert out["a"] == pytest.approx(0.6 / 61 + 0.4 / 62)
    assert out["b"] == pytest.approx(0.6 / 62 + 0.4 / 61)


def test_blend_rerank_rejects_a_pin_bonus_that_cannot_keep_pins_first() -> None:
    with pytest.raises(ValueError, match="pin_bonus"):
        blend_rerank(RETRIEVAL, RERANKER, pin_bonus=0.01)  # (0.6 + 0.4)/61 = 0.0164 > 0.01


# --- the pool and Ranking A ------------------------------------------------------------------


def test_merge_pool_keeps_the_maximum_and_ignores_how_often_a_chunk_came_back() -> None:
    pool: dict[str, float] = {}
    for subquery in ([("x", 0.3)], [("x", 0.5)]):  # x returned by 2 subqueries
        pool = merge_pool(pool, subquery)
    for score in (0.1, 0.2, 0.5, 0.4, 0.3):  # y returned by 5 subqueries
        pool = merge_pool(pool, [("y", score)])
    assert pool == {"x": 0.5, "y": 0.5}  # max, not sum or count: treated identically
    before = dict(pool)
    merged = merge_pool(pool, [("x", 0.1), ("z", 0.2)])
    assert pool == before  # not mutated
    assert merged == {"x": 0.5, "y": 0.5, "z": 0.2}


POOL = {"c1": 0.45, "c2": 0.9, "c3": 0.5, "c4": 0.5, "c5": 0.3}
PAPER_OF = {"c1": "p1", "c2": "p2", "c3": "p1", "c4": "p3", "c5": "p1"}


def test_rank_papers_by_max_uses_the_best_chunk_not_the_sum() -> None:
    # p1 = max(0.45, 0.5, 0.3) = 0.5 (its sum 1.25 would beat p2); p2 = 0.9; p3 = 0.5.
    # p1 and p3 tie at 0.5: p1 first, its first chunk c1 comes first in the pool.
    assert rank_papers_by_max(POOL, PAPER_OF) == [("p2", 0.9), ("p1", 0.5), ("p3", 0.5)]
    with pytest.raises(KeyError, match="c9"):
        rank_papers_by_max({"c9": 1.0}, PAPER_OF)


def test_top_chunks_per_paper_for_the_verifier() -> None:
    # p1's chunks by score: c3 (0.5), c1 (0.45), c5 (0.3) -> the two best are c3, c1.
    assert top_chunks_per_paper(POOL, PAPER_OF, papers=2, per_paper=2) == [("p2", ["c2"]), ("p1", ["c3", "c1"])]
    assert top_chunks_per_paper(POOL, PAPER_OF, papers=5, per_paper=1)[-1] == ("p3", ["c4"])


# --- Ranking B -------------------------------------------------------------------------------


def test_round_robin_takes_each_seeds_first_unseen_neighbour_before_any_second() -> None:
    lists = [["a", "b", "c", "d"], ["b", "e", "a", "f"], ["s1", "a", "g"]]
    # round 1: L1 -> a ; L2 -> b ; L3 -> s1 excluded, a seen, g
    # round 2: L1 -> b seen, c ; L2 -> e ; L3 exhausted
    # round 3: L1 -> d ; L2 -> a seen, f
    assert round_robin(lists, exclude={"s1"}) == ["a", "b", "g", "c", "e", "d", "f"]
    # excluding e too: round 2 L2 -> e excluded, a seen, f ; round 3 L1 -> d
    assert round_robin(lists, exclude={"s1", "e"}) == ["a", "b", "g", "c", "f", "d"]
    assert round_robin([]) == []


def test_coupling_requires_two_shared_references_and_sorts_by_jaccard() -> None:
    seed = {"r1", "r2", "r3"}
    refs = {
        "seed": {"r1", "r2", "r3"},  # itself: excluded by the caller
        "pA": {"r1"},  # shared 1, J = 1/3: high, but only one shared reference -> out
        "pB": {"r1", "r2", "r3", "b1", "b2", "b3", "b4", "b5"},  # shared 3, J = 3/8 = 0.375
        "pC": {"r1", "r2", "c1", "c2", "c3", "c4", "c5"},  # shared 2, union 8, J = 2/8 = 0.25
        "pD": {"r2", "r3", "d1", "d2", "d3", "d4", "d5"},  # shared 2, J = 0.25: ties pC, id order
        "pX": {"r1", "r2", "r3", "x1", "x2", "x3", "x4", "x5", "x6"},  # shared 3, J = 3/9 = 1/3
        "pG": {"r1", "r2", "g1", "g2", "g3"},  # shared 2, union 6, J = 2/6 = 1/3: after pX (fewer shared)
        "pH": {"x", "y"},  # nothing shared
    }
    out = coupling_scores(seed, refs, exclude={"seed"})
    assert ids(out) == ["pB", "pX", "pG", "pC", "pD"]
    assert dict(out)["pB"] == pytest.approx(3 / 8)
    assert dict(out)["pC"] == pytest.approx(2 / 8)
    # pA (J = 1/3) is left out while pC (J = 0.25) is in; with a one-reference minimum it enters.
    assert "pA" in ids(coupling_scores(seed, refs, min_shared=1, exclude={"seed"}))
    with pytest.raises(ValueError):
        coupling_scores(seed, refs, min_shared=0)


def test_ranking_b_merges_per_source_fuses_and_puts_seeds_first() -> None:
    seeds = ["s1", "s2"]
    sources = {
        "specter2": [["s2", "a", "b"], ["c", "a"]],  # round robin without seeds: a, c, b
        "coupling": [["b"], ["b", "d"]],  # b, d
        "bm25": [["a"], ["d", "e"]],  # a, d, e
    }
    # RRF k = 60 over [a, c, b], [b, d], [a, d, e]:
    #   a = 1/61 + 1/61 = 0.032787
    #   b = 1/63 + 1/61 = 0.015873 + 0.016393 = 0.032266
    #   d = 1/62 + 1/62 = 0.032258
    #   c = 1/62        = 0.016129
    #   e = 1/63        = 0.015873
    assert fuse_ranking_b(seeds, sources) == ["s1", "s2", "a", "b", "d", "c", "e"]
    # seeds are not counted in the limit, and are deduplicated in their given order
    assert fuse_ranking_b(["s1", "s2", "s1"], sources, limit=2) == ["s1", "s2", "a", "b"]
    assert fuse_ranking_b(["s2"], {}) == ["s2"]


# --- A/B fusion ------------------------------------------------------------------------------


def _ab_with_shared_paper_at(r: int) -> list[tuple[str, float]]:
    """A = [top, a2, ..., p at r], B = [b1, ..., p at r]: 'top' is A's leader, absent from B."""
    a = ["top"] + [f"a{i}" for i in range(2, r)] + ["p"]
    b = [f"b{i}" for i in range(1, r)] + ["p"]
    return ab_fusion(a, b, k=10)


@pytest.mark.parametrize("r", range(2, 12))
def test_ab_fusion_paper_in_both_beats_top_of_a_alone_up_to_rank_11(r: int) -> None:
    # p scores 2/(10 + r); A's top alone 1/11. 2/(10+r) > 1/11  <=>  22 > 10 + r  <=>  r < 12.
    out = _ab_with_shared_paper_at(r)
    assert dict(out)["p"] == pytest.approx(2 / (10 + r))
    assert dict(out)["top"] == pytest.approx(1 / 11)
    assert ids(out).index("p") < ids(out).index("top")


@pytest.mark.parametrize("r", [12, 13, 20])
def test_ab_fusion_paper_in_both_is_not_above_top_of_a_from_rank_12(r: int) -> None:
    # r = 12: 2/22 == 1/11 exactly, a tie that A's top wins by appearing first; r > 12: strictly below.
    out = _ab_with_shared_paper_at(r)
    assert ids(out).index("p") > ids(out).index("top")
    if r == 12:
        assert dict(out)["p"] == dict(out)["top"]
    else:
        assert dict(out)["p"] < dict(out)["top"]


def test_ab_fusion_reads_a_at_full_length_and_keeps_50() -> None:
    a = [f"x{i}" for i in range(1, 61)]
    # x60 sits at A rank 60 (beyond the 50 kept) and B rank 1: 1/70 + 1/11 > 1/11 of A's top.
    out = ab_fusion(a, ["x60"])
    assert ids(out)[0] == "x60"
    assert dict(out)["x60"] == pytest.approx(1 / 70 + 1 / 11)
    assert len(out) == 50
