"""The learned fusion: features by hand, the logistic model's probabilities, its order, its file, and the pool it
gives a subquery."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lit3r.retrieval.learned import (
    FEATURES,
    FusionModel,
    candidate_features,
    learned_order,
    load_model,
    query_words,
    save_model,
)
from lit3r.retrieval.subquery import retrieve_subquery
from lit3r.settings.retrieval import RetrieverSettings

from fakes.index import MemoryIndex


def _model(features=("bm25_rel", "coverage"), coef=(2.0, -1.0), intercept=0.5) -> FusionModel:
    return FusionModel(features=list(features), mean=[0.5, 0.0], scale=[0.5, 1.0], coef=list(coef), intercept=intercept)


def test_features_hand_computed() -> None:
    rows = candidate_features(
        ["c1", "c2", "c3"],
        chunk_text={"c1": "BM25 saturation of term frequency", "c2": "dense vectors", "c3": "term weights"},
        chunk_paper={"c1": "p1", "c2": "p2", "c3": "p1"},
        chunk_type={"c1": "text", "c2": "title_abstract", "c3": "table"},
        chunk_section={"c1": "Term saturation", "c2": None, "c3": "Results"},
        bm25_hits=[("c1", 8.0), ("c3", 2.0)],
        dense_hits=[("c2", 0.9), ("c1", 0.6)],
        dense_cosines=[0.6, 0.9, 0.3],
        paper_ranking=["p2", "p1"],
        paper_bm25=["p1"],
        reranker_scores={"c1": 4.0, "c2": 1.0, "c3": 2.0},
        query="term saturation",
    )
    named = [dict(zip(FEATURES, row, strict=True)) for row in rows]
    assert named[0] == {
        "bm25_rrank": 1.0,
        "bm25_rel": 1.0,
        "dense_rrank": 0.5,
        "dense_cos": 0.6,
        "dense_gap": pytest.approx(-0.3),
        "candidate_rrank": 1.0,
        "paper_rrank": 0.5,
        "paper_bm25_rrank": 1.0,
        "reranker_rrank": 1.0,
        "reranker_rel": 1.0,
        "coverage": 1.0,  # "term" and "saturation" both occur
        "title_abstract": 0.0,
        "section_coverage": 1.0,  # both in the heading "Term saturation"
        "float_chunk": 0.0,
    }
    assert named[1]["bm25_rrank"] == named[1]["bm25_rel"] == 0.0  # not a BM25 hit
    assert named[1]["paper_rrank"] == 1.0 and named[1]["paper_bm25_rrank"] == 0.0
    assert named[1]["reranker_rrank"] == pytest.approx(1 / 3) and named[1]["reranker_rel"] == 0.25
    assert named[1]["title_abstract"] == 1.0 and named[1]["coverage"] == 0.0
    assert named[2]["bm25_rel"] == 0.25 and named[2]["candidate_rrank"] == pytest.approx(1 / 3)
    assert named[2]["reranker_rrank"] == 0.5 and named[2]["coverage"] == 0.5
    assert named[2]["float_chunk"] == 1.0 and named[2]["section_coverage"] == 0.0
    assert named[1]["section_coverage"] == 0.0 and named[1]["float_chunk"] == 0.0  # no section heading


def test_unreranked_candidates_have_zero_reranker_features() -> None:
    rows = candidate_features(
        ["c1"],
        chunk_text={"c1": "x"},
        chunk_paper={"c1": "p"},
        chunk_type={"c1": "text"},
        chunk_section={},
        bm25_hits=[],
        dense_hits=[],
        dense_cosines=[0.2],
        paper_ranking=[],
        paper_bm25=[],
        reranker_scores=None,
        query="an",
    )
    named = dict(zip(FEATURES, rows[0], strict=True))
    assert named["reranker_rrank"] == named["reranker_rel"] == named["coverage"] == 0.0
    assert named["dense_gap"] == 0.0  # no dense hits: the best cosine is the candidate's own


def test_query_words_are_distinct_lower_case_words_of_three_or_more_characters() -> None:
    assert query_words("Is BM25 of a BM25 run ok?") == {"bm25", "run"}


def test_probabilities_are_the_standardised_logistic_hand_computed() -> None:
    model = _model()
    p = model.probabilities(np.array([[1.0, 1.0], [0.5, 0.0]]))
    z0 = 0.5 + 2.0 * (1.0 - 0.5) / 0.5 - 1.0 * 1.0  # 1.5
    assert p[0] == pytest.approx(1 / (1 + np.exp(-z0)))
    assert p[1] == pytest.approx(1 / (1 + np.exp(-0.5)))


def test_learned_order_takes_the_most_probable_and_keeps_ties_in_candidate_order() -> None:
    model = FusionModel(features=["coverage"], mean=[0.0], scale=[1.0], coef=[1.0], intercept=0.0)
    rows = np.zeros((4, len(FEATURES)))
    rows[:, FEATURES.index("coverage")] = [0.0, 1.0, 0.0, 1.0]
    order = learned_order(["a", "b", "c", "d"], rows, model, keep=3)
    assert [c for c, _p in order] == ["b", "d", "a"]
    assert order[0][1] == pytest.approx(1 / (1 + np.exp(-1.0)))
    assert learned_order([], np.zeros((0, len(FEATURES))), model, keep=3) == []


def test_every_head_paper_keeps_its_most_probable_chunk_in_the_pool_share() -> None:
    model = FusionModel(features=["coverage"], mean=[0.0], scale=[1.0], coef=[1.0], intercept=0.0)
    rows = np.zeros((5, len(FEATURES)))
    rows[:, FEATURES.index("coverage")] = [0.9, 0.8, 0.1, 0.3, 0.2]
    paper_of = {"a1": "A", "a2": "A", "b1": "B", "b2": "B", "c1": "C"}
    order = learned_order(["a1", "a2", "b1", "b2", "c1"], rows, model, 2, paper_of, ["B", "A", "D"])
    assert [c for c, _p in order] == ["a1", "a2", "b2"]  # B's best chunk joins; C is not in the head, D has none
    assert order[2][1] == pytest.approx(1 / (1 + np.exp(-0.3)))


def test_model_files_round_trip_and_bad_files_are_named(tmp_path) -> None:
    path = tmp_path / "m.json"
    save_model(_model(), path)
    assert load_model(path) == _model()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**_model().model_dump(), "coef": [1.0]}), encoding="utf-8")
    with pytest.raises(ValueError, match="bad.json: features, mean, scale and coef"):
        load_model(bad)
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({**_model().model_dump(), "features": ["bm25_rel", "colour"]}), encoding="utf-8")
    with pytest.raises(ValueError, match="unknown feature.*colour"):
        load_model(unknown)
    with pytest.raises(ValueError, match="missing.json: cannot read"):
        load_model(tmp_path / "missing.json")
    (tmp_path / "text.json").write_text("not json", encoding="utf-8")
    with pytest.raises(ValueError, match="text.json: not a fusion model"):
        load_model(tmp_path / "text.json")


def test_the_packaged_model_loads() -> None:
    model = load_model()
    assert set(model.features) <= set(FEATURES) and len(model.coef) == len(model.features)


def test_learned_fusion_pools_probabilities_without_pins(memory_index: MemoryIndex, tmp_path) -> None:
    path = tmp_path / "m.json"
    save_model(FusionModel(features=["coverage"], mean=[0.0], scale=[1.0], coef=[3.0], intercept=-2.0), path)
    settings = RetrieverSettings(fusion="learned", fusion_model=str(path), pool_per_subquery=5, pool_papers=0)
    result = retrieve_subquery(memory_index, "okapi saturation", None, settings)
    assert len(result.pool) == 5
    scores = [s for _c, s in result.pool]
    assert scores == sorted(scores, reverse=True) and all(0 < s < 1 for s in scores)
    best = memory_index.chunk_by_id[result.pool[0][0]].text.lower()
    assert "okapi" in best and "saturation" in best  # full coverage ranks first under this model


def test_a_bad_fusion_model_setting_is_refused_when_the_settings_load(tmp_path) -> None:
    with pytest.raises(ValueError, match="fusion_model.*nope.json: cannot read the fusion model"):
        RetrieverSettings(fusion_model=str(tmp_path / "nope.json"))
    path = tmp_path / "m.json"
    save_model(_model(), path)
    assert RetrieverSettings(fusion_model=str(path)).fusion_model == str(path)
