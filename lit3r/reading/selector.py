"""The learned sentence selector: which unit of the evidence answers the question.

The lexical scorer (:mod:`lit3r.reading.scoring`) ranks units by how many of the question's rarer words they
hold, and a sentence that restates the question ranks first while the one that answers it (the number, the
dataset's name, the reason) ranks lower: on QASPER the best single unit of the evidence would score about three
times the Answer F1 of the unit the lexical scorer puts first. The selector re-scores every unit with a linear
model over features of the unit in its evidence: its lexical score relative to the best, its coverage of the
question's terms, what it adds beyond the question (new terms, names, quantities, commas of a list), where it stands
(chunk rank, position, abstract, table, the kind of section its heading names), whether it cites other work, and
what the question asks for (:func:`lit3r.answers.question.answer_form`) crossed with what the unit offers (a
quantity, in digits or words, for a quantity question, a name for a factoid one, a reason for a "why"/"how" one).

The unit model gives the probability that a unit is one of its question's best units (answer token F1, the SQuAD
F1 QASPER scores with, at least 0.8 of the best unit's); the offline reader quotes the unit it ranks first among the
units its rules allow (:func:`lit3r.reading.choice.chosen_by_model`). The answerability model gives the
probability that the question is answerable from this evidence at all (the same features, pooled over the
evidence; only the opt-in ``selector=`` path uses it). Both are trained by ``python -m
lit3r.evals.selector_training`` (QASPER questions, cross-validated by paper) and shipped as ``selector_model.json``
beside this module: plain weights, read with no training at run time.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lit3r.answers.question import answer_form
from lit3r.index.bm25 import idf
from lit3r.reading.quotes import Candidate
from lit3r.reading.scoring import query_terms, states_quantity, terms

PACKAGED = Path(__file__).with_name("selector_model.json")

_PERCENT = re.compile(r"%|\bper ?cent\b", re.IGNORECASE)
_NAME = re.compile(r"\b(?:[A-Z][a-z]*[A-Z][\w-]*|[A-Z]{2,}[\w-]*|[A-Z][a-z]+(?=[- ]?\d))")
_REASON = re.compile(r"\b(?:because|since|due to|as a result|so that|in order to|thus|therefore|hence)\b", re.I)
_METHOD = re.compile(
    r"\b(?:we (?:use|used|propose|proposed|apply|applied|train|trained|adopt|employ)\w*|using|by)\b", re.I
)
_LIST = re.compile(r",|;|\band\b")
_WE = re.compile(r"\b[Ww]e\b")
_CITATION = re.compile(r"BIBREF\d+|\[\d+(?:[,\u2013-]\s*\d+)*\]|\(\w[\w .&-]*,? (?:19|20)\d\d[a-z]?\)")
_USE = re.compile(r"\b(?:use|uses|used|using|employ|employs|employed|adopt|adopted|apply|applied)\b")

SECTIONS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("introduction", r"intro"),
        ("related", r"related|background|previous|prior"),
        ("method", r"method|model|approach|architecture|system|framework|propos"),
        ("data", r"data|corpus|corpora|annotat|collect"),
        ("experiment", r"experiment|setup|setting|implement|training|baseline"),
        ("result", r"result|evaluat|analys|discussion|performance|comparison"),
        ("conclusion", r"conclu|future|summary"),
    )
)
"""Kinds of section a unit stands in, read from its chunk's heading (lower case): what a section of that kind
states differs (an introduction restates the question's words; the experiments name the datasets and baselines)."""

FORMS = ("quantity", "span", "sentence")
"""The non-polar answer forms the selector distinguishes (yes/no questions are read by the verdict model)."""

UNIT_FEATURES = (
    "lexical_rel",
    "lexical_recip_rank",
    "lexical_zero",
    "coverage",
    "coverage_plain",
    "chunk_recip_rank",
    "abstract",
    "table_or_figure",
    "log_length",
    "novel_share",
    "states_quantity",
    "has_percent",
    "names",
    "list_marks",
    "we",
    "position",
    "prev_lexical_rel",
    "next_lexical_rel",
    "quantity_x_quantity",
    "quantity_x_percent",
    "span_x_names",
    "span_x_list",
    "sentence_x_reason",
    "sentence_x_method",
    "quantity_x_lexical",
    "span_x_lexical",
    "sentence_x_lexical",
    *(f"section_{name}" for name, _ in SECTIONS),
    "commas",
    "citations",
    "use_verb",
)
"""One row of features per unit, in this order."""

QUESTION_FEATURES = (
    "best_predicted",
    "margin",
    "best_coverage",
    "best_lexical_rel_coverage",
    "mean_coverage_top3",
    "query_terms_absent",
    "log_query_terms",
    "is_quantity",
    "is_span",
)
"""One row per question and evidence, for the answerability model."""


def _weights_over(pool_terms: Sequence[set[str]], query: set[str]) -> dict[str, float]:
    """BM25 idf of each question term over the units (a term no unit holds weighs most)."""
    n = len(pool_terms)
    df = {t: sum(t in ts for ts in pool_terms) for t in query}
    return {t: idf(df[t], n) for t in query}


def unit_features(question: str, pool: Sequence[Candidate], scores: Sequence[float]) -> np.ndarray:
    """The :data:`UNIT_FEATURES` of every unit of ``pool`` (``scores``: the lexical scores of the units)."""
    if not pool:
        return np.zeros((0, len(UNIT_FEATURES)))
    form = answer_form(question)
    query = query_terms(question)
    texts = [c.scoring_text for c in pool]
    counts = terms(texts)
    unit_terms = [set(c) for c in counts]
    weights = _weights_over(unit_terms, query)
    total = sum(weights.values())
    best = max(scores)
    rel = [s / best if best > 0 else 0.0 for s in scores]
    order = sorted(range(len(pool)), key=lambda i: -scores[i])
    rank = {i: r for r, i in enumerate(order)}
    positions: dict[tuple[int, str], list[int]] = {}
    for i, c in enumerate(pool):
        positions.setdefault((c.rank, c.chunk.id), []).append(i)
    question_words = set(question.lower().split())
    rows = []
    for i, candidate in enumerate(pool):
        text = candidate.text
        ts = unit_terms[i]
        covered = sum(w for t, w in weights.items() if t in ts) / total if total else 1.0
        plain = len(ts & query) / len(query) if query else 1.0
        novel = len(ts - query) / len(ts) if ts else 0.0
        names = [m for m in _NAME.findall(text) if m.lower() not in question_words]
        siblings = positions[(candidate.rank, candidate.chunk.id)]
        at = siblings.index(i)
        prev_rel = rel[siblings[at - 1]] if at > 0 else 0.0
        next_rel = rel[siblings[at + 1]] if at + 1 < len(siblings) else 0.0
        quantity_stated = float(states_quantity(text))
        percent = float(bool(_PERCENT.search(text)))
        n_names = math.log1p(len(names))
        n_list = math.log1p(len(_LIST.findall(text)))
        reason = float(bool(_REASON.search(text)))
        method = float(bool(_METHOD.search(text)))
        quantity, span, sentence = (float(form == f) for f in FORMS)
        heading = (candidate.chunk.locator.section or "").lower()
        rows.append(
            [
                rel[i],
                1.0 / (1.0 + rank[i]),
                float(scores[i] <= 0),
                covered,
                plain,
                1.0 / (1.0 + candidate.rank),
                float(candidate.chunk.type == "title_abstract"),
                float(candidate.chunk.type in ("table", "figure")),
                math.log1p(sum(counts[i].values())),
                novel,
                quantity_stated,
                percent,
                n_names,
                n_list,
                float(bool(_WE.search(text))),
                at / max(1, len(siblings) - 1),
                prev_rel,
                next_rel,
                quantity * quantity_stated,
                quantity * percent,
                span * n_names,
                span * n_list,
                sentence * reason,
                sentence * method,
                quantity * rel[i],
                span * rel[i],
                sentence * rel[i],
                *(float(bool(pattern.search(heading))) for _, pattern in SECTIONS),
                min(text.count(","), 6) / 6,
                min(len(_CITATION.findall(text)), 4) / 4,
                float(bool(_USE.search(text))),
            ]
        )
    return np.asarray(rows, dtype=float)


def question_features(question: str, unit_rows: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """The :data:`QUESTION_FEATURES` of one question's evidence, from its unit rows and predicted unit F1s."""
    query = query_terms(question)
    form = answer_form(question)
    if len(predicted) == 0:
        return np.asarray([0.0, 0.0, 0.0, 0.0, 0.0, 1.0, math.log1p(len(query)), 0.0, 0.0])
    coverage = unit_rows[:, UNIT_FEATURES.index("coverage")]
    rel = unit_rows[:, UNIT_FEATURES.index("lexical_rel")]
    top = np.sort(predicted)[::-1]
    by_lexical = int(np.argmax(rel))
    plain = unit_rows[:, UNIT_FEATURES.index("coverage_plain")]
    return np.asarray(
        [
            float(top[0]),
            float(top[0] - top[1]) if len(top) > 1 else float(top[0]),
            float(coverage.max()),
            float(coverage[by_lexical]),
            float(np.sort(coverage)[::-1][:3].mean()),
            float(1.0 - plain.max()),
            math.log1p(len(query)),
            float(form == "quantity"),
            float(form == "span"),
        ]
    )


@dataclass(frozen=True)
class Linear:
    """A standardised linear model: ``((x - mean) / scale) @ coef + intercept`` (then a logistic, if ``logistic``)."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    logistic: bool = False

    def __call__(self, x: np.ndarray) -> np.ndarray:
        z = ((x - self.mean) / self.scale) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-z)) if self.logistic else z

    def to_dict(self) -> dict:
        return {
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "coef": self.coef.tolist(),
            "intercept": self.intercept,
            "logistic": self.logistic,
        }

    @classmethod
    def from_dict(cls, data: dict, width: int) -> Linear:
        parts = [np.asarray(data[k], dtype=float) for k in ("mean", "scale", "coef")]
        if any(p.shape != (width,) for p in parts):
            raise ValueError(f"a linear model of {width} features was expected, got shapes {[p.shape for p in parts]}")
        return cls(*parts, float(data["intercept"]), bool(data.get("logistic", False)))


@dataclass(frozen=True)
class SelectorModel:
    """The unit scorer and the answerability model, with the decision levels chosen by cross-validation.

    Attributes:
        unit: predicts a unit's answer F1 from its :data:`UNIT_FEATURES`.
        answerable: the probability that the evidence answers the question, from :data:`QUESTION_FEATURES`.
        abstain_below: abstain when ``answerable`` is below this.
        keep_ratio: a further unit is quoted only when its predicted F1 is at least this share of the best's.
    """

    unit: Linear
    answerable: Linear
    abstain_below: float
    keep_ratio: float
    trained_on: str = ""

    def unit_scores(
        self, question: str, pool: Sequence[Candidate], scores: Sequence[float]
    ) -> tuple[np.ndarray, np.ndarray]:
        """The unit feature rows and each unit's predicted answer F1."""
        rows = unit_features(question, pool, scores)
        return rows, (self.unit(rows) if len(rows) else np.zeros(0))

    def answerability(self, question: str, rows: np.ndarray, predicted: np.ndarray) -> float:
        """The probability that this evidence answers the question."""
        return float(self.answerable(question_features(question, rows, predicted)[None, :])[0])

    def to_dict(self) -> dict:
        return {
            "unit_features": list(UNIT_FEATURES),
            "question_features": list(QUESTION_FEATURES),
            "unit": self.unit.to_dict(),
            "answerable": self.answerable.to_dict(),
            "abstain_below": self.abstain_below,
            "keep_ratio": self.keep_ratio,
            "trained_on": self.trained_on,
        }

    @classmethod
    def from_dict(cls, data: dict) -> SelectorModel:
        if list(data.get("unit_features", [])) != list(UNIT_FEATURES):
            raise ValueError("the selector model was trained on other unit features; retrain it")
        if list(data.get("question_features", [])) != list(QUESTION_FEATURES):
            raise ValueError("the selector model was trained on other question features; retrain it")
        return cls(
            Linear.from_dict(data["unit"], len(UNIT_FEATURES)),
            Linear.from_dict(data["answerable"], len(QUESTION_FEATURES)),
            float(data["abstain_below"]),
            float(data["keep_ratio"]),
            str(data.get("trained_on", "")),
        )


MAX_UNITS = 3
"""At most this many units in a selected answer."""


def kept_units(predicted: np.ndarray, keep_ratio: float) -> list[int]:
    """The units a selected answer quotes, best first: the best, then at most two more whose predicted F1 is at
    least ``keep_ratio`` times the best's (ties in pool order)."""
    order = [int(i) for i in np.argsort(-predicted, kind="stable")]
    best = predicted[order[0]]
    return [order[0]] + [i for i in order[1:MAX_UNITS] if best > 0 and predicted[i] >= keep_ratio * best]


_LOADED: dict[str, SelectorModel] = {}


def load_selector(path: str | Path | None = None) -> SelectorModel:
    """The selector model at ``path`` (default: the packaged one), read once per process."""
    target = Path(path) if path else PACKAGED
    key = str(target)
    if key not in _LOADED:
        try:
            _LOADED[key] = SelectorModel.from_dict(json.loads(target.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"cannot read the selector model {target}: {exc}") from exc
    return _LOADED[key]


__all__ = [
    "PACKAGED", "QUESTION_FEATURES", "UNIT_FEATURES", "SelectorModel", "kept_units", "load_selector", "unit_features"
]  # fmt: skip
