"""Other unit models than the shipped one, on the selector's training questions, cross-validated by paper.

Run from the repository root, with the traces of an offline in-paper QASPER run (as for
``python -m lit3r.evals.selector_training``)::

    python benchmarks/bench_unit_models.py ../shared/data/qasper/qasper-test-v0.3.corpus-and-dev-questions.json.gz \
        --traces TRACES [--cosine] --out bench-out/unit-models.json

Every row is the Answer F1 of the unit each model ranks first, held out over the same 5 folds by paper as the
training command's report (its ``answer_f1_by_keep_ratio`` at 1.01 is the shipped row): the shipped logistic
regression (:func:`lit3r.evals.selector_training.fit_unit`), gradient-boosted trees and a small neural network on
the same features and labels, and the logistic regression with more features: how much of the question the unit's
section heading holds, and with ``--cosine`` the cosine of question and unit under the index's dense encoder (an
encoder call per unit: minutes here).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from lit3r.evals import selector_training as st
from lit3r.index.bm25 import idf
from lit3r.reading.scoring import query_terms, terms

FOLDS = 5


def heading_columns(example: st.Example) -> np.ndarray:
    """How much of the question each unit's section heading holds (idf-weighted over the units), whether it holds
    any of it, and the first relative to the best unit's."""
    query = query_terms(example.question.text)
    heads = [set(t) for t in terms([c.chunk.locator.section or "" for c in example.pool])]
    units = [set(t) for t in terms([c.text for c in example.pool])]
    weight = {t: idf(sum(t in u for u in units), len(units)) for t in query}
    total = sum(weight.values()) or 1.0
    share = np.asarray([sum(weight[t] for t in query if t in h) / total for h in heads])
    return np.column_stack([share, [float(bool(query & h)) for h in heads], share - share.max()])


def cosine_columns(examples: Sequence[st.Example]) -> Callable[[st.Example], np.ndarray]:
    """The cosine of question and unit under the default dense encoder, as three columns (the cosine, its gap to
    the best unit's, whether it is the best)."""
    from lit3r.index.encoders import load_encoder
    from lit3r.settings import EmbedderSettings

    encoder = load_encoder(EmbedderSettings())
    texts = sorted({c.text for e in examples for c in e.pool})
    vectors = dict(zip(texts, encoder.encode_documents(texts), strict=True))
    questions = sorted({e.question.text for e in examples})
    asked = dict(zip(questions, encoder.encode_queries(questions), strict=True))

    def columns(example: st.Example) -> np.ndarray:
        cos = np.asarray([float(vectors[c.text] @ asked[example.question.text]) for c in example.pool])
        return np.column_stack([cos, cos - cos.max(), (cos == cos.max()).astype(float)])

    return columns


def first_unit_f1(examples: Sequence[st.Example], fit: Callable[[list[st.Example]], Callable]) -> float:
    """The held-out Answer F1 of the unit the fitted scorer ranks first (5 folds by paper)."""
    found = []
    for fold in range(FOLDS):
        train = [e for e in examples if st.fold_of(e.question.paper_id, FOLDS) != fold]
        scorer = fit(train)
        for e in examples:
            if st.fold_of(e.question.paper_id, FOLDS) == fold:
                found.append(st.answer_f1(e, [int(np.argmax(scorer(e.rows)))]))
    return float(np.mean(found))


def sklearn_fit(make: Callable[[], object]) -> Callable[[list[st.Example]], Callable]:
    """A fit of a scikit-learn classifier on the training command's labels and weights (standardised features)."""

    def fit(train: list[st.Example]) -> Callable:
        kept = [e for e in train if len(e.f1) and e.f1.max() >= st.MIN_BEST_F1]
        x = np.vstack([e.rows for e in kept])
        y = np.concatenate([(e.f1 >= st.BEST_SHARE * e.f1.max()).astype(int) for e in kept])
        weight = np.concatenate([np.full(len(e.f1), 1.0 / len(e.f1)) for e in kept])
        mean, scale = x.mean(axis=0), np.where(x.std(axis=0) == 0, 1.0, x.std(axis=0))
        model = make()
        try:
            model.fit((x - mean) / scale, y, sample_weight=weight * len(weight) / weight.sum())
        except TypeError:  # a classifier without sample weights (the neural network)
            model.fit((x - mean) / scale, y)
        return lambda rows: model.predict_proba((rows - mean) / scale)[:, 1]

    return fit


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the QASPER file the traces' run answered")
    parser.add_argument("--traces", type=Path, required=True)
    parser.add_argument("--cosine", action="store_true", help="also the dense encoder's cosine as features")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.neural_network import MLPClassifier

    examples = st.examples([args.data], 3, args.traces)
    shipped = lambda train: st.fit_unit(train, alpha=10.0)  # noqa: E731
    rows = {
        "shipped: logistic regression": first_unit_f1(examples, shipped),
        "gradient-boosted trees": first_unit_f1(
            examples,
            sklearn_fit(
                lambda: HistGradientBoostingClassifier(
                    max_iter=150, learning_rate=0.05, max_leaf_nodes=15, l2_regularization=1.0, min_samples_leaf=40
                )
            ),
        ),
        "neural network (16 hidden)": first_unit_f1(
            examples, sklearn_fit(lambda: MLPClassifier(hidden_layer_sizes=(16,), alpha=1.0, max_iter=500))
        ),
    }
    extras: dict[str, Callable[[st.Example], np.ndarray]] = {
        "+ section heading's share of the question": heading_columns
    }
    if args.cosine:
        extras["+ dense cosine of question and unit"] = cosine_columns(examples)
    for name, columns in extras.items():
        widened = [replace(e, rows=np.hstack([e.rows, columns(e)])) for e in examples]
        rows[f"logistic regression {name}"] = first_unit_f1(widened, shipped)
    report = {
        "questions": len(examples),
        "folds": FOLDS,
        "answer_f1_first_unit": {k: round(v, 4) for k, v in rows.items()},
    }
    text = json.dumps(report, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
