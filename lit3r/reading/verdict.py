"""The verdict of a yes / no / maybe question, read from the evidence: a small learned model over cue features.

A polar question ("Does X reduce Y?") is answered by what the evidence's best sentences say about it: whether
they report an effect or its absence ("no significant difference", "did not improve"), whether they hedge
("may", "suggest", "further studies are needed"), whether their statistics are significant. Each of these is a
closed class of cue expressions (:data:`CUES`: negation cues of :mod:`lit3r.reading.polarity`, the
no-effect phrasings of clinical abstracts, hedges as in the BioScope annotation guidelines, significance
reports); a feature is the share of the question's best-matching sentences (and of all evidence sentences,
and of the last ones, where abstracts state results) that carry a cue of a class. A multinomial logistic
regression maps the features to P(yes), P(no), P(maybe).

The packaged model (``verdict_model.json`` beside this module) is trained by
``python -m lit3r.evals.verdict_training`` on the 500 PubMedQA PQA-L questions that are not in its test set,
cross-validated by paper (the command prints the folds; docs/BENCHMARKS.md has the figures). Inference needs
numpy only. Text inside the evidence is data: it is only counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from lit3r.answers.question import is_negated
from lit3r.reading.polarity import negation_cues
from lit3r.reading.quotes import Candidate
from lit3r.reading.scoring import query_terms, terms

VERDICTS = ("yes", "no", "maybe")
PACKAGED = Path(__file__).with_name("verdict_model.json")
TOP = 3
"""How many best-matching sentences the ``top`` features read."""
TAIL = 3
"""How many closing sentences of the evidence the ``tail`` features read (abstracts end with their results)."""

_I = re.IGNORECASE
CUES: dict[str, re.Pattern[str]] = {
    "no_effect": re.compile(
        r"\bno (?:statistically )?(?:significant |significantly )?(?:difference|association|effect|correlation|change"
        r"|relationship|benefit|improvement|increase|decrease|reduction|impact|evidence|advantage|role)s?\b"
        r"|\bnot (?:statistically )?(?:significantly )?(?:different|associated|correlated|related|affected|improved"
        r"|increased|reduced|changed|predictive|superior|significant)\b"
        r"|\b(?:did|does|do|was|were|is|are) not (?:significantly )?(?:differ|improve|increase|reduce|change|affect"
        r"|predict|correlate|influence|show|reach|find|alter)\w*\b|\bfailed to\b|\bneither\b"
        r"|\bsimilar\b|\bcomparable\b",
        _I,
    ),
    "negation": re.compile(r"$^"),  # counted with polarity.negation_cues, see _has
    "hedge": re.compile(
        r"\b(?:may|might|could|possibly|potentially|perhaps|suggests?|suggested|suggesting|appears?|seems?"
        r"|unclear|uncertain|unknown|inconclusive|controversial|remains?|limited|further (?:studies|research|work"
        r"|investigation)|larger|trend|tended|marginal(?:ly)?|borderline|preliminary|warrant\w*|needed)\b",
        _I,
    ),
    "significant": re.compile(
        r"\bsignificant(?:ly)?\b|\bp\s*[<\u2264]\s*0?\.0\d*|\bp\s*=\s*0?\.0[0-4]\d*|\b(?:associated|correlated) with\b"
        r"|\bindependent(?:ly)? (?:predictor|risk|associated)\b|\bodds ratio\b|\bOR\b|\bhazard ratio\b",
        _I,
    ),
    "nonsignificant": re.compile(
        r"\bp\s*[>\u2265]\s*0?\.0[5-9]|\bp\s*=\s*0?\.(?:0[5-9]|[1-9])\d*|\bn\.?s\.?\b|\bnot significant\b"
        r"|\bnon-?significant\b|\binsignificant\b",
        _I,
    ),
    "change": re.compile(
        r"\b(?:increase[sd]?|decrease[sd]?|reduce[sd]?|reduction|improve[sd]?|improvement|higher|lower|greater"
        r"|better|worse|more|less|fewer|superior|inferior|elevated|risk)\b",
        _I,
    ),
    "number": re.compile(r"\d"),
}
"""The cue classes; a sentence has a class when one of its expressions occurs in it."""
_QUESTION_CUES: dict[str, re.Pattern[str]] = {
    "q_compare": re.compile(r"\b(?:differ\w*|better|worse|than|versus|vs\.?|compared|superior|equal)\b", _I),
    "q_modal": re.compile(r"^\s*(?:can|could|may|might|should|would)\b", _I),
    "q_association": re.compile(r"\b(?:associated|association|correlat\w*|predict\w*|related|risk|factor)\b", _I),
}


def _has(kind: str, sentence: str) -> bool:
    if kind == "negation":
        return bool(negation_cues(sentence))
    return bool(CUES[kind].search(sentence))


def feature_names() -> list[str]:
    """The model's input columns, in order."""
    names = [f"{where}_{kind}" for where in ("top", "best", "all", "tail") for kind in CUES]
    return [*names, "q_negated", *_QUESTION_CUES, "coverage", "sentences"]


def features(question: str, sentences: Sequence[str], scores: Sequence[float], coverage: float) -> np.ndarray:
    """One row of :func:`feature_names` for a question and its evidence sentences (in evidence order) with their
    scores against the question; ``coverage`` is the share of the question's terms the best sentence holds."""
    order = sorted(range(len(sentences)), key=lambda i: -scores[i])
    groups = {
        "top": [sentences[i] for i in order[:TOP]],
        "best": [sentences[i] for i in order[:1]],
        "all": list(sentences),
        "tail": list(sentences[-TAIL:]),
    }
    row = []
    for where in ("top", "best", "all", "tail"):
        chosen = groups[where]
        row += [sum(_has(kind, s) for s in chosen) / len(chosen) if chosen else 0.0 for kind in CUES]
    row.append(float(is_negated(question)))
    row += [float(bool(p.search(question))) for p in _QUESTION_CUES.values()]
    row += [coverage, float(np.log1p(len(sentences)))]
    return np.asarray(row, dtype=float)


@dataclass(frozen=True)
class VerdictModel:
    """A multinomial logistic regression on standardised features (``coef`` is classes x features)."""

    names: list[str]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    classes: list[str]
    trained_on: dict

    def probabilities(self, row: np.ndarray) -> dict[str, float]:
        """P(class) for one feature row."""
        z = self.coef @ ((row - self.mean) / self.scale) + self.intercept
        p = np.exp(z - z.max())
        p /= p.sum()
        return {c: float(v) for c, v in zip(self.classes, p, strict=True)}

    def to_dict(self) -> dict:
        return {
            "names": self.names, "mean": self.mean.tolist(), "scale": self.scale.tolist(), "coef": self.coef.tolist(),
            "intercept": self.intercept.tolist(), "classes": self.classes, "trained_on": self.trained_on,
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict) -> VerdictModel:
        model = cls(
            names=list(data["names"]), mean=np.asarray(data["mean"], float), scale=np.asarray(data["scale"], float),
            coef=np.asarray(data["coef"], float), intercept=np.asarray(data["intercept"], float),
            classes=list(data["classes"]), trained_on=dict(data.get("trained_on") or {}),
        )  # fmt: skip
        if model.names != feature_names():
            raise ValueError(
                "the verdict model was trained on other features: retrain it (lit3r.evals.verdict_training)"
            )
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
    """The verdict probabilities of a question over its evidence, and the sentence that best shows it."""

    probabilities: dict[str, float]
    candidate: Candidate
    coverage: float


def evidence_features(
    question: str, pool: Sequence[Candidate], scores: Sequence[float]
) -> tuple[np.ndarray, int, float]:
    """The feature row of the evidence units ``pool`` scored ``scores``, the best unit's index and its coverage."""
    texts = [c.text for c in pool]
    best = max(range(len(pool)), key=lambda i: (scores[i], -i))
    wanted = query_terms(question)
    held = set(terms([pool[best].scoring_text])[0])
    coverage = len(wanted & held) / len(wanted) if wanted else 0.0
    return features(question, texts, scores, coverage), best, coverage


def read_verdict(
    question: str, pool: Sequence[Candidate], scores: Sequence[float], model: VerdictModel | None = None
) -> Reading | None:
    """The model's verdict on ``question`` from the evidence units (None without evidence)."""
    if not pool:
        return None
    row, best, coverage = evidence_features(question, pool, scores)
    return Reading((model or load_model()).probabilities(row), pool[best], coverage)


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


def supporting(reading: Reading, pool: Sequence[Candidate], scores: Sequence[float], verdict: str) -> Candidate:
    """The unit to quote for ``verdict``: among the best-matching units, the best one carrying one of its cues
    (:data:`SUPPORT_CUES`); the best-matching unit when none does."""
    order = sorted(range(len(pool)), key=lambda i: (-scores[i], i))[:TOP]
    for i in order:
        if any(_has(kind, pool[i].text) for kind in SUPPORT_CUES[verdict]):
            return pool[i]
    return reading.candidate
