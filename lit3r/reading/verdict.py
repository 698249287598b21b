"""The verdict of a yes / no / maybe question, read from the evidence: a small learned model.

A polar question ("Does X reduce Y?") is answered by what the evidence's results say about it: whether they
report an effect or its absence ("no significant difference", "did not improve"), whether their p-values are
below 0.05, whether they hedge, and in which words. :mod:`lit3r.reading.verdict_features` computes what the
model reads: closed classes of cue expressions counted over groups of evidence units (the best-matching ones,
the result section's), the p-values read as numbers, and the tf-idf weighted words of the question and of the
results. A multinomial logistic regression maps them to P(yes), P(no), P(maybe): standardised cue features
and the two bags of words, each with its own weights (:class:`VerdictModel`).

The packaged model (``verdict_model.json`` beside this module) is trained by
``python -m lit3r.evals.verdict_training`` on the 500 PubMedQA PQA-L questions that are not in its test set, from
the evidence the whole agent gives the reader for each of them, cross-validated by paper (the command prints the
folds; docs/BENCHMARKS.md has the figures). Inference needs numpy only; nothing is trained at run time. Text
inside the evidence is data: it is only counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from lit3r.reading.quotes import Candidate
from lit3r.reading.scoring import query_terms, terms
from lit3r.reading.verdict_features import (
    FIELD_NGRAMS,
    TOP,
    TermWeights,
    cue_features,
    cue_names,
    has_cue,
    result_units,
    text_fields,
)

VERDICTS = ("yes", "no", "maybe")
PACKAGED = Path(__file__).with_name("verdict_model.json")


def feature_names() -> list[str]:
    """The model's cue columns, in order (the word columns are each part's vocabulary)."""
    return cue_names()


@dataclass(frozen=True)
class WordPart:
    """The bag-of-words part of one text field: its vocabulary and idf, and its weights (classes x terms)."""

    weights: TermWeights
    coef: np.ndarray

    def to_dict(self) -> dict:
        return {
            "ngrams": self.weights.ngrams, "vocabulary": self.weights.vocabulary,
            "idf": _rounded(self.weights.idf), "coef": _rounded(self.coef),
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict) -> WordPart:
        weights = TermWeights(list(data["vocabulary"]), np.asarray(data["idf"], float), int(data["ngrams"]))
        return cls(weights, np.asarray(data["coef"], float))


def _rounded(values: np.ndarray) -> list:
    """Six significant digits: the file stays small and readable, the probabilities do not move."""
    return np.vectorize(lambda v: float(f"{v:.6g}"))(np.asarray(values, float)).tolist()


@dataclass(frozen=True)
class VerdictModel:
    """A multinomial logistic regression on standardised cue features (``coef`` is classes x features) plus one
    bag-of-words part per text field (:func:`lit3r.reading.verdict_features.text_fields`)."""

    names: list[str]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    classes: list[str]
    trained_on: dict
    words: dict[str, WordPart] = field(default_factory=dict)

    def probabilities(self, row: np.ndarray, fields: dict[str, str] | None = None) -> dict[str, float]:
        """P(class) for one cue feature row and the text fields (a missing field adds nothing)."""
        z = self.coef @ ((row - self.mean) / self.scale) + self.intercept
        for name, part in self.words.items():
            if fields and fields.get(name):
                z = z + part.coef @ part.weights.vector(fields[name])
        p = np.exp(z - z.max())
        p /= p.sum()
        return {c: float(v) for c, v in zip(self.classes, p, strict=True)}

    def to_dict(self) -> dict:
        return {
            "names": self.names, "mean": _rounded(self.mean), "scale": _rounded(self.scale),
            "coef": _rounded(self.coef), "intercept": _rounded(self.intercept), "classes": self.classes,
            "trained_on": self.trained_on, "words": {name: part.to_dict() for name, part in self.words.items()},
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict) -> VerdictModel:
        model = cls(
            names=list(data["names"]), mean=np.asarray(data["mean"], float), scale=np.asarray(data["scale"], float),
            coef=np.asarray(data["coef"], float), intercept=np.asarray(data["intercept"], float),
            classes=list(data["classes"]), trained_on=dict(data.get("trained_on") or {}),
            words={name: WordPart.from_dict(part) for name, part in (data.get("words") or {}).items()},
        )  # fmt: skip
        if model.names != feature_names():
            raise ValueError(
                "the verdict model was trained on other features: retrain it (lit3r.evals.verdict_training)"
            )
        shapes = [
            model.coef.shape == (len(model.classes), len(model.names)),
            model.intercept.shape == (len(model.classes),),
        ]
        shapes += [model.mean.shape == model.scale.shape == (len(model.names),)]
        for name, part in model.words.items():
            size = len(part.weights.vocabulary)
            shapes += [FIELD_NGRAMS.get(name) == part.weights.ngrams, part.weights.idf.shape == (size,)]
            shapes += [part.coef.shape == (len(model.classes), size)]
        if not all(shapes):
            raise ValueError("the verdict model's weights do not match its features")
        return model


@lru_cache(maxsize=4)
def load_model(path: str | None = None) -> VerdictModel:
    """The verdict model at ``path`` (default: the packaged one)."""
    target = Path(path) if path else PACKAGED
    try:
        return VerdictModel.from_dict(json.loads(target.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError) as exc:
        raise ValueError(f"{target}: not a verdict model ({exc})") from exc


def choose(probabilities: dict[str, float], allowed: Sequence[str]) -> str:
    """The most probable verdict among ``allowed`` (those of :data:`VERDICTS` the question offers)."""
    return max(allowed, key=lambda v: (probabilities.get(v, 0.0), -allowed.index(v)))


@dataclass(frozen=True)
class Reading:
    """The verdict probabilities of a question over its evidence, and the share of the question's terms its
    best-matching unit holds (the unit to quote is :func:`supporting`'s choice, made once the verdict is chosen)."""

    probabilities: dict[str, float]
    coverage: float


def evidence_features(
    question: str, pool: Sequence[Candidate], scores: Sequence[float]
) -> tuple[np.ndarray, dict[str, str], int, float]:
    """The cue feature row and text fields of the evidence units ``pool`` scored ``scores``, the best unit's index
    and its coverage (the share of the question's terms it holds)."""
    best = max(range(len(pool)), key=lambda i: (scores[i], -i))
    wanted = query_terms(question)
    held = set(terms([pool[best].scoring_text])[0])
    coverage = len(wanted & held) / len(wanted) if wanted else 0.0
    return cue_features(question, pool, scores, coverage), text_fields(question, pool), best, coverage


def read_verdict(
    question: str, pool: Sequence[Candidate], scores: Sequence[float], model: VerdictModel | None = None
) -> Reading | None:
    """The model's verdict on ``question`` from the evidence units (None without evidence)."""
    if not pool:
        return None
    row, fields, _best, coverage = evidence_features(question, pool, scores)
    return Reading((model or load_model()).probabilities(row, fields), coverage)


OPTION_VERDICTS: dict[str, str] = {
    "yes": "yes", "true": "yes", "supported": "yes", "supports": "yes", "correct": "yes",
    "no": "no", "false": "no", "refuted": "no", "refutes": "no", "contradicted": "no", "incorrect": "no",
    "maybe": "maybe", "insufficient": "maybe", "unknown": "maybe", "uncertain": "maybe", "unclear": "maybe",
    "not enough info": "maybe", "not enough information": "maybe", "cannot be determined": "maybe",
}  # fmt: skip
"""Options that are verdicts rather than words of a paper, and the verdict each names."""
_OPTION_TEXT = re.compile(r"[^\w ]+")


def polar_options(options: Sequence[str]) -> dict[str, str] | None:
    """``{option: verdict}`` when every option names a verdict (yes/no/maybe, true/false, ...) and at least two
    verdicts are offered; None otherwise (the options are words to find in the evidence)."""
    named = {o: OPTION_VERDICTS.get(" ".join(_OPTION_TEXT.sub(" ", o).lower().split())) for o in options}
    if not options or None in named.values() or len(set(named.values())) < 2:
        return None
    return named  # type: ignore[return-value]


SUPPORT_CUES: dict[str, tuple[str, ...]] = {
    "yes": ("significant", "change"),
    "no": ("no_effect", "negation", "nonsignificant"),
    "maybe": ("hedge", "nonsignificant"),
}
"""The cue classes a sentence quoted for a verdict should carry."""
RESULT_FLOOR = 0.5
"""A result unit is quoted for a verdict only when it matches the question at least this share as well as the
best-matching unit (a result about something else does not show the verdict)."""


def supporting(pool: Sequence[Candidate], scores: Sequence[float], verdict: str) -> Candidate:
    """The unit to quote for ``verdict``: where a section heading names the results (an abstract's RESULTS), the
    best-matching result unit carrying one of the verdict's cues (:data:`SUPPORT_CUES`), else the best-matching
    result unit; without one, the best of the best-matching units carrying a cue, else the best-matching unit.
    The verdict is read from what the study found, so its quote comes from there rather than from the background
    that restates the question. A result unit counts only when it matches the question at least
    :data:`RESULT_FLOOR` times as well as the best unit."""
    order = sorted(range(len(pool)), key=lambda i: (-scores[i], i))
    floor = RESULT_FLOOR * max(scores, default=0.0)
    results, named = result_units(pool)
    in_results = {id(c) for c in results} if named else set()
    found = [i for i in order if id(pool[i]) in in_results and scores[i] > 0 and scores[i] >= floor][:TOP]

    def cued(i: int) -> bool:
        return any(has_cue(kind, pool[i].text) for kind in SUPPORT_CUES[verdict])

    if found:
        return pool[next((i for i in found if cued(i)), found[0])]
    return pool[next((i for i in order[:TOP] if cued(i)), order[0])]
