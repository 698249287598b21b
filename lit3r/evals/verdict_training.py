"""Train the yes / no / maybe verdict model (:mod:`lit3r.reading.verdict`) on PubMedQA's training questions.

Run from the repository root::

    python -m lit3r.evals.verdict_training ../shared/data/pubmedqa --out lit3r/reading/verdict_model.json

The training questions are the 500 PQA-L questions whose ids are not in ``test_ground_truth.json``; their
evidence is the abstract's contexts without the conclusion (the reasoning-required setting), one chunk per
context, cut into units and scored against the question exactly as the offline reader does. The model is a
multinomial logistic regression (scikit-learn, L2, lbfgs, balanced class weights off) on standardised features.
Cross-validation splits by paper (every PQA-L question is its own paper; folds by a hash of the id) and reports
accuracy and macro-F1 beside the majority class and the negation rule of
:func:`lit3r.reading.polarity.yes_or_no`, the reader's verdict before this model.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from lit3r.evals.pubmedqa import PubMedItem, load_pqal
from lit3r.models import Chunk
from lit3r.reading.polarity import yes_or_no
from lit3r.reading.quotes import candidates
from lit3r.reading.scoring import lexical_scores
from lit3r.reading.verdict import VERDICTS, VerdictModel, evidence_features, feature_names


def item_chunks(item: PubMedItem) -> list[Chunk]:
    """One text chunk per context of the item's abstract, in order."""
    return [
        Chunk(id=f"{item.id}::c{i:04d}", paper_id=item.id, type="text", text=f"{heading}\n{text}" if heading else text)
        for i, (heading, text) in enumerate(item.sections)
    ]


def rows(items: Sequence[PubMedItem]) -> tuple[np.ndarray, list[str], list[str]]:
    """Feature rows, gold labels and the negation rule's verdict for every item."""
    table, labels, rule = [], [], []
    for item in items:
        pool = candidates(item_chunks(item))
        scores = lexical_scores(item.question, [c.scoring_text for c in pool])
        row, best, _ = evidence_features(item.question, pool, scores)
        table.append(row)
        labels.append(item.label)
        rule.append(yes_or_no(item.question, pool[best].text).lower())
    return np.vstack(table), labels, rule


def fold_of(paper_id: str, folds: int) -> int:
    """The fold of a paper: a hash of its id (all its questions in one fold)."""
    return hashlib.sha256(paper_id.encode()).digest()[0] % folds


def fit(x: np.ndarray, y: Sequence[str], c: float) -> VerdictModel:
    """The logistic regression on standardised ``x``."""
    from sklearn.linear_model import LogisticRegression

    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=c, max_iter=2000).fit((x - mean) / scale, list(y))
    classes = [str(k) for k in model.classes_]
    order = [classes.index(v) for v in VERDICTS if v in classes]
    return VerdictModel(
        names=feature_names(), mean=mean, scale=scale, coef=model.coef_[order], intercept=model.intercept_[order],
        classes=[classes[i] for i in order], trained_on={},
    )  # fmt: skip


def _scores(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, float]:
    from sklearn.metrics import f1_score

    accuracy = sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold)
    macro = f1_score(gold, predicted, labels=list(VERDICTS), average="macro", zero_division=0)
    return {"accuracy": round(accuracy, 4), "macro_f1": round(float(macro), 4)}


def cross_validate(items: Sequence[PubMedItem], x: np.ndarray, y: list[str], rule: list[str], folds: int, c: float):
    """Out-of-fold predictions of the model, and the scores of model, majority class and negation rule."""
    fold = np.array([fold_of(item.id, folds) for item in items])
    predicted = [""] * len(y)
    for k in range(folds):
        train, test = np.where(fold != k)[0], np.where(fold == k)[0]
        model = fit(x[train], [y[i] for i in train], c)
        for i in test:
            probabilities = model.probabilities(x[i])
            predicted[i] = max(probabilities, key=probabilities.get)
    majority = max(set(y), key=y.count)
    return {
        "folds": folds,
        "c": c,
        "model": _scores(y, predicted),
        "majority": _scores(y, [majority] * len(y)),
        "negation_rule": _scores(y, rule),
        "predicted": {v: predicted.count(v) for v in VERDICTS},
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="The PQA-L folder (ori_pqal.json.gz, test_ground_truth.json).")
    parser.add_argument("--out", type=Path, required=True, help="Where to write the model (JSON).")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--c", type=float, nargs="+", default=[0.01, 0.03, 0.1, 0.3, 1.0])
    args = parser.parse_args(argv)
    items = load_pqal(args.data, split="train")
    x, y, rule = rows(items)
    results = [cross_validate(items, x, y, rule, args.folds, c) for c in args.c]
    for result in results:
        print(json.dumps(result))
    best = max(results, key=lambda r: (r["model"]["accuracy"], r["model"]["macro_f1"]))
    model = fit(x, y, best["c"])
    trained_on = {"data": "PubMedQA PQA-L, the 500 questions not in test_ground_truth.json", "questions": len(y)}
    model = VerdictModel(**{**model.__dict__, "trained_on": {**trained_on, "cross_validation": best}})
    args.out.write_text(json.dumps(model.to_dict(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out} (C = {best['c']}: cross-validated accuracy {best['model']['accuracy']})")


if __name__ == "__main__":
    main()
