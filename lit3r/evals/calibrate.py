"""Calibrate the relevance gate on QASPER (storage beside the index: :func:`lit3r.retrieval.gate.save_gate`).

Labels come from QASPER's annotations: a question is unanswerable when every annotator
marked it so. The score is the best raw reranker score the agent's retrieval saw for the
question (:meth:`lit3r.app.session.Session.retrieve`, the path ``lit3r ask`` runs; over the whole
corpus by default, within the question's own paper with ``in_paper``), sampled without a gate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lit3r.evals.qasper import QasperQuestion
from lit3r.retrieval.gate import abstention_metrics, calibrate_f1, calibrate_percentile

if TYPE_CHECKING:
    from lit3r.app.session import Session


@dataclass(frozen=True)
class GateSample:
    question_id: str
    best_score: float
    answerable: bool


def best_scores(
    session: Session,
    questions: Sequence[QasperQuestion],
    *,
    in_paper: bool = False,
    on_question: Callable[[], None] | None = None,
) -> list[GateSample]:
    """The agent's best reranker score for every question, with its answerable label.

    ``session`` should have no gate (``gate=None``): the samples are the scores the gate will be applied to.
    """
    samples = []
    for question in questions:
        found = session.retrieve(question.text, allowed_papers=[question.paper_id] if in_paper else None)
        if found.best_reranker_score is None:
            raise ValueError(f"question {question.id}: the retrieval returned no reranker score")
        samples.append(GateSample(question.id, found.best_reranker_score, not question.unanswerable))
        if on_question:
            on_question()
    return samples


def calibrate(samples: Sequence[GateSample], percentile: float = 10.0) -> dict[str, dict]:
    """Both calibration modes over the same samples: ``{"f1"|"percentile": {"threshold", "calibration",
    "precision", "recall", "f1", counts}}``, where precision, recall and F1 are those of abstaining."""
    scores = [s.best_score for s in samples]
    labels = [s.answerable for s in samples]
    out = {}
    for threshold in (calibrate_f1(scores, labels), calibrate_percentile(scores, percentile)):
        out[threshold.mode] = {
            "threshold": threshold.value,
            "calibration": threshold.to_dict(),
            **abstention_metrics(scores, labels, threshold),
        }
    return out
