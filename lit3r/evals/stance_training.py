"""Train the offline stance verdict's two logistic models and cross-validate them by paper.

    python -m lit3r.evals.stance_training \\
        --scifact ../shared/data/scholarqabench/scifact_test.jsonl \\
        --pubmedqa ../shared/data/pubmedqa/ori_pqal.json.gz \\
        --pubmedqa-test ../shared/data/pubmedqa/test_ground_truth.json \\
        --out lit3r/grounding/stance_model.json

(also ``lit3r eval train-stance``). Examples, from :mod:`lit3r.evals.stance_data`:

* stance (P(supports | addressed)): each SciFact claim against its gold abstract (true: supports; false: the
  abstract refutes it) and each PubMedQA PQA-L yes/no training question against its abstract and conclusion,
  the latter weighted :data:`PUBMED_WEIGHT` (questions turned into claims read less like SciFact's claims);
* relevance (P(addressed)): every claim against its own paper (positive) and against the :data:`NEGATIVES`
  other papers of its dataset that share the most of its words (negatives).

Cross-validation: SciFact papers are split in folds by the hash of their id (:func:`paper_fold`), so a claim is
always judged by a model that never saw its abstract, nor any other claim about it; PubMedQA is always in the
training part. The report gives the held-out SciFact accuracy (the figure ``lit3r eval scifact`` reports) beside
the majority class. Deterministic: the same files give the same model.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from lit3r.evals.stance_data import LabelledClaim, load_pubmedqa, load_scifact
from lit3r.grounding.stance import (
    RELEVANCE_FEATURES,
    Logistic,
    Passage,
    StanceModel,
    paper_inputs,
    score_sentences,
    stance_feature_names,
)
from lit3r.grounding.stance_features import Text

PUBMED_WEIGHT = 0.0
"""PubMedQA's weight in the stance model: 0, since cross-validation on SciFact showed it lowers the accuracy
(0.712 alone, 0.707 at weight 0.1, 0.659 at 1); PubMedQA trains the relevance model."""
NEGATIVES = 2
C = 1.0
RECALL = 0.95
"""The relevance threshold keeps this share of the training positives: a paper that only touches the claim is
shown rather than a paper that decides it hidden."""


def paper_fold(paper_id: str, folds: int) -> int:
    """The fold of a paper: its SHA-1 modulo ``folds``."""
    return int(hashlib.sha1(paper_id.encode()).hexdigest(), 16) % folds


def inputs(claim: str, paper_id: str, text: str) -> tuple[list[float], list[float]]:
    """The relevance and stance inputs of ``claim`` against one paper's text."""
    scored = score_sentences(claim, [Passage(paper_id, text)])
    if not scored:
        raise ValueError(f"paper {paper_id}: no sentence in its text")
    return paper_inputs(scored)


def hard_negatives(claims: Sequence[LabelledClaim], k: int = NEGATIVES) -> list[tuple[LabelledClaim, str, str]]:
    """For each claim, the ``k`` other papers of the set sharing the most of its content stems."""
    papers = {c.paper_id: c.text for c in claims}
    stems = {pid: Text.of(text).stems for pid, text in papers.items()}
    out = []
    for claim in claims:
        mine = Text.of(claim.claim).stems
        ranked = sorted((p for p in papers if p != claim.paper_id), key=lambda p: (-len(mine & stems[p]), p))
        out.extend((claim, pid, papers[pid]) for pid in ranked[:k])
    return out


def logistic(x: np.ndarray, y: np.ndarray, names: Sequence[str], weights: np.ndarray | None = None) -> Logistic:
    """A standardised L2 logistic regression (C = :data:`C`)."""
    mean, scale = x.mean(0), x.std(0)
    scale[scale == 0] = 1.0
    fitted = LogisticRegression(C=C, max_iter=5000).fit((x - mean) / scale, y, weights)
    return Logistic(
        features=list(names), mean=mean.tolist(), scale=scale.tolist(),
        coef=fitted.coef_[0].tolist(), intercept=float(fitted.intercept_[0]),
    )  # fmt: skip


class Examples:
    """The feature rows of every claim (stance) and claim-paper pair (relevance), with their papers."""

    def __init__(self, scifact: Sequence[LabelledClaim], pubmed: Sequence[LabelledClaim]) -> None:
        self.claims = list(scifact) + list(pubmed)
        self.is_scifact = np.array([True] * len(scifact) + [False] * len(pubmed))
        rows = [inputs(c.claim, c.paper_id, c.text) for c in self.claims]
        self.stance_x = np.array([s for _r, s in rows])
        self.y = np.array([c.supports for c in self.claims], dtype=int)
        self.weight = np.where(self.is_scifact, 1.0, PUBMED_WEIGHT)
        pos = [(c, r) for c, (r, _s) in zip(self.claims, rows, strict=True)]
        neg = [
            (c, inputs(c.claim, pid, text)[0]) for part in (scifact, pubmed) for c, pid, text in hard_negatives(part)
        ]
        self.rel_claims = [c for c, _r in pos + neg]
        self.rel_x = np.array([r for _c, r in pos + neg])
        self.rel_y = np.array([1] * len(pos) + [0] * len(neg))
        self.rel_scifact = np.array([c.paper_id.startswith("scifact-") for c in self.rel_claims])

    def fit(self, train: np.ndarray | None = None, rel_train: np.ndarray | None = None) -> StanceModel:
        train = np.ones(len(self.y), bool) if train is None else train
        rel_train = np.ones(len(self.rel_y), bool) if rel_train is None else rel_train
        train = train & (self.weight > 0)
        stance = logistic(self.stance_x[train], self.y[train], stance_feature_names(), self.weight[train])
        relevance = logistic(self.rel_x[rel_train], self.rel_y[rel_train], RELEVANCE_FEATURES)
        positives = [relevance.probability(x) for x in self.rel_x[rel_train & (self.rel_y == 1)]]
        threshold = float(np.quantile(positives, 1.0 - RECALL))
        return StanceModel(relevance=relevance, stance=stance, relevance_threshold=round(threshold, 4))


def cross_validate(examples: Examples, folds: int = 5) -> dict:
    """Held-out SciFact stance accuracy and relevance recall/precision, folds by paper."""
    fold_of = np.array(
        [paper_fold(c.paper_id, folds) if s else -1 for c, s in zip(examples.claims, examples.is_scifact, strict=True)]
    )
    rel_fold = np.array(
        [
            paper_fold(c.paper_id, folds) if s else -1
            for c, s in zip(examples.rel_claims, examples.rel_scifact, strict=True)
        ]
    )
    support = np.zeros(len(examples.y))
    addressed = np.zeros(len(examples.rel_y))
    threshold = np.zeros(len(examples.rel_y))
    for k in range(folds):
        model = examples.fit(fold_of != k, rel_fold != k)
        threshold[rel_fold == k] = model.relevance_threshold
        for i in np.flatnonzero(fold_of == k):
            support[i] = model.stance.probability(examples.stance_x[i])
        for i in np.flatnonzero(rel_fold == k):
            addressed[i] = model.relevance.probability(examples.rel_x[i])
    held = examples.is_scifact
    y = examples.y[held]
    kept = addressed[examples.rel_scifact] >= threshold[examples.rel_scifact]
    rel_y = examples.rel_y[examples.rel_scifact].astype(bool)
    return {
        "folds": folds,
        "scifact_claims": int(held.sum()),
        "stance_accuracy": round(float(((support[held] >= 0.5) == y).mean()), 4),
        "majority_accuracy": round(float(max(y.mean(), 1 - y.mean())), 4),
        "relevance_recall": round(float(kept[rel_y].mean()), 4),
        "relevance_false_positive_rate": round(float(kept[~rel_y].mean()), 4),
        "held_out_support": [round(float(p), 4) for p in support[held]],
    }


def train(scifact: Path, pubmed: Path | None, pubmed_test: Path | None, folds: int = 5) -> tuple[StanceModel, dict]:
    """The model trained on every example, and its cross-validation (``folds`` 0: none)."""
    sci = load_scifact(scifact)
    pub = load_pubmedqa(pubmed, pubmed_test) if pubmed and pubmed_test else []
    examples = Examples(sci, pub)
    validation = cross_validate(examples, folds) if folds else {}
    model = examples.fit()
    model.trained_on = {
        "scifact": Path(scifact).name, "scifact_claims": len(sci), "pubmedqa_claims": len(pub),
        "pubmedqa_weight": PUBMED_WEIGHT, "c": C, "negatives_per_claim": NEGATIVES,
        "cv_stance_accuracy": validation.get("stance_accuracy"), "cv_folds": folds,
    }  # fmt: skip
    return model, validation


def save(model: StanceModel, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(model.model_dump(), indent=1) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scifact", type=Path, required=True)
    parser.add_argument("--pubmedqa", type=Path)
    parser.add_argument("--pubmedqa-test", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args(argv)
    model, validation = train(args.scifact, args.pubmedqa, args.pubmedqa_test, args.folds)
    save(model, args.out)
    shown = {k: v for k, v in validation.items() if k != "held_out_support"}
    print(json.dumps({"model": str(args.out), "cross_validation": shown}, indent=1))


if __name__ == "__main__":
    main()
