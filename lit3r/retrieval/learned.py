"""Learned fusion: one logistic model scores each candidate chunk of a subquery from signals the pipeline has.

The blend of the seed (``0.6/(k + r_ret) + 0.4/(k + r_rr)`` with pins) fixes by hand how much each signal counts
and sees ranks only. The learned fusion instead estimates ``P(chunk holds gold evidence)`` from the features of
:data:`FEATURES`, every one computed from what the sweep, the paper fusion and the reranker already produced
(nothing is retrieved or encoded again except the subquery's own vector). A probability is on the same scale for
every subquery, so the pool's max-merge ranks a chunk a weak keyword subquery found below one the question's own
ranking is sure of, and nothing needs pinning.

The model is a JSON file (:class:`FusionModel`): feature names, their standardisation, coefficients and
intercept. The packaged one (``lit3r/retrieval/fusion_model.json``) is trained by ``lit3r eval train-fusion`` on
the shared QASPER split; the same command trains one on a user's own labelled questions.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

FEATURES = (
    "bm25_rrank",
    "bm25_rel",
    "dense_rrank",
    "dense_cos",
    "dense_gap",
    "candidate_rrank",
    "paper_rrank",
    "paper_bm25_rrank",
    "reranker_rrank",
    "reranker_rel",
    "coverage",
    "title_abstract",
    "section_coverage",
    "float_chunk",
)
"""Per candidate chunk:

* ``bm25_rrank``, ``dense_rrank``: ``1/rank`` in the subquery's chunk BM25 and dense hits (0 when absent);
* ``bm25_rel``: its BM25 score over the subquery's best (0 when absent);
* ``dense_cos``: cosine of its stored vector with the subquery's; ``dense_gap``: that minus the best hit's cosine;
* ``candidate_rrank``: ``1/position`` in the candidate order (chunk and paper ranks fused);
* ``paper_rrank``: ``1/rank`` of its paper in the fused (PRF) paper ranking; ``paper_bm25_rrank``: in paper BM25;
* ``reranker_rrank``, ``reranker_rel``: ``1/rank`` by reranker score, and the score over the best (0 unreranked);
* ``coverage``: the share of the subquery's distinct words (3+ letters) that occur in the chunk;
* ``title_abstract``: 1 for a title-abstract chunk;
* ``section_coverage``: the share of the subquery's distinct words in the heading of the chunk's section;
* ``float_chunk``: 1 for a table, figure or equation chunk.
"""

PACKAGED = "fusion_model.json"
_WORD = re.compile(r"[a-z0-9]{3,}")


class FusionModel(BaseModel):
    """A logistic model over standardised features: ``p = sigmoid(b + sum_i w_i (x_i - mean_i) / scale_i)``."""

    features: list[str] = Field(description="Feature names, in column order; must be a subset of FEATURES.")
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    trained_on: dict = Field(default_factory=dict, description="What it was trained on, and how (for the record).")

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        """``P(relevant)`` of each row of a ``(n, len(features))`` matrix."""
        z = (rows - np.asarray(self.mean)) / np.asarray(self.scale)
        logits = z @ np.asarray(self.coef) + self.intercept
        return 1.0 / (1.0 + np.exp(-logits))

    def columns(self) -> list[int]:
        """Positions of the model's features among :data:`FEATURES` (``ValueError`` for an unknown one)."""
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown:
            raise ValueError(f"fusion model: unknown feature(s) {', '.join(unknown)}; known: {', '.join(FEATURES)}")
        return [FEATURES.index(f) for f in self.features]


def load_model(path: str | Path | None = None) -> FusionModel:
    """The fusion model at ``path``, or the packaged one; a clear ``ValueError`` for a bad file."""
    source = Path(path) if path else Path(str(resources.files("lit3r.retrieval") / PACKAGED))
    try:
        model = FusionModel.model_validate_json(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"{source}: cannot read the fusion model: {exc}") from exc
    except ValueError as exc:
        raise ValueError(f"{source}: not a fusion model: {exc}") from exc
    lengths = {len(model.features), len(model.mean), len(model.scale), len(model.coef)}
    if len(lengths) != 1 or any(s <= 0 for s in model.scale):
        raise ValueError(f"{source}: features, mean, scale and coef must have one entry each, scale > 0")
    model.columns()
    return model


def save_model(model: FusionModel, path: Path) -> None:
    """Write ``model`` as indented JSON (stable key order, so a retrain that changes nothing changes no byte)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(model.model_dump(), indent=1) + "\n", encoding="utf-8")


def _reciprocal_ranks(ids: Sequence[str]) -> dict[str, float]:
    return {item: 1.0 / rank for rank, item in reversed(list(enumerate(ids, start=1)))}


def query_words(text: str) -> frozenset[str]:
    """Distinct lower-case words of 3+ letters or digits (what ``coverage`` counts)."""
    return frozenset(_WORD.findall(text.lower()))


@lru_cache(maxsize=50_000)
def _chunk_words(text: str) -> frozenset[str]:
    """:func:`query_words` of a chunk's text, remembered (a chunk's words never change; candidates recur)."""
    return query_words(text)


def candidate_features(
    candidates: Sequence[str],
    *,
    chunk_text: Mapping[str, str],
    chunk_paper: Mapping[str, str],
    chunk_type: Mapping[str, str],
    chunk_section: Mapping[str, str | None],
    bm25_hits: Sequence[tuple[str, float]],
    dense_hits: Sequence[tuple[str, float]],
    dense_cosines: Sequence[float],
    paper_ranking: Sequence[str],
    paper_bm25: Sequence[str],
    reranker_scores: Mapping[str, float] | None,
    query: str,
) -> np.ndarray:
    """The ``(len(candidates), len(FEATURES))`` feature matrix (definitions in :data:`FEATURES`)."""
    bm25_rr = _reciprocal_ranks([c for c, _s in bm25_hits])
    bm25_score = dict(reversed(list(bm25_hits)))
    bm25_top = bm25_hits[0][1] if bm25_hits and bm25_hits[0][1] > 0 else 1.0
    dense_rr = _reciprocal_ranks([c for c, _s in dense_hits])
    dense_top = dense_hits[0][1] if dense_hits else (max(dense_cosines) if len(dense_cosines) else 0.0)
    paper_rr = _reciprocal_ranks(paper_ranking)
    paper_bm25_rr = _reciprocal_ranks(paper_bm25)
    rr_rank: dict[str, float] = {}
    rr_rel: dict[str, float] = {}
    if reranker_scores:
        ordered = sorted(candidates, key=lambda c: -reranker_scores.get(c, -math.inf))
        rr_rank = _reciprocal_ranks(ordered)
        best = max(reranker_scores.values())
        rr_rel = {c: (s / best if best > 0 else 0.0) for c, s in reranker_scores.items()}
    words = query_words(query)
    rows = np.zeros((len(candidates), len(FEATURES)), dtype=np.float64)
    for i, chunk in enumerate(candidates):
        present = _chunk_words(chunk_text[chunk]) & words
        heading = chunk_section.get(chunk)
        in_heading = _chunk_words(heading) & words if heading else frozenset()
        paper = chunk_paper[chunk]
        rows[i] = (
            bm25_rr.get(chunk, 0.0),
            bm25_score.get(chunk, 0.0) / bm25_top,
            dense_rr.get(chunk, 0.0),
            dense_cosines[i],
            dense_cosines[i] - dense_top,
            1.0 / (i + 1),
            paper_rr.get(paper, 0.0),
            paper_bm25_rr.get(paper, 0.0),
            rr_rank.get(chunk, 0.0),
            rr_rel.get(chunk, 0.0),
            len(present) / len(words) if words else 0.0,
            1.0 if chunk_type[chunk] == "title_abstract" else 0.0,
            len(in_heading) / len(words) if words else 0.0,
            1.0 if chunk_type[chunk] in ("table", "figure", "equation") else 0.0,
        )
    return rows


def learned_order(
    candidates: Sequence[str],
    rows: np.ndarray,
    model: FusionModel,
    keep: int,
    paper_of: Mapping[str, str] | None = None,
    papers: Sequence[str] = (),
) -> list[tuple[str, float]]:
    """A subquery's pool share under the learned fusion, as ``(chunk id, probability)`` best first.

    The ``keep`` most probable candidates, then, for each paper of ``papers`` (the fused paper ranking's head)
    that none of them is from, its most probable candidate. The most probable chunks often come from a few papers;
    the extra chunks keep every top fused paper in the pool, so the paper ranking built from the pool (Ranking A)
    does not lose the papers the fusion found, while their low probabilities leave the chunk order's head alone.
    Ties keep candidate order.
    """
    if not len(candidates):
        return []
    probabilities = model.probabilities(rows[:, model.columns()])
    order = sorted(range(len(candidates)), key=lambda i: -probabilities[i])
    chosen = order[:keep]
    if paper_of is not None and papers:
        covered = {paper_of[candidates[i]] for i in chosen}
        best: dict[str, int] = {}
        for i in order[keep:]:
            best.setdefault(paper_of[candidates[i]], i)
        chosen += [best[p] for p in dict.fromkeys(papers) if p not in covered and p in best]
        chosen.sort(key=lambda i: -probabilities[i])
    return [(candidates[i], float(probabilities[i])) for i in chosen]
