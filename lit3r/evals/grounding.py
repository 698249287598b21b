"""Grounding metrics of a QASPER answer run (``lit3r eval qasper --answers --grounding``).

From the run's answers and their traces:

* ``citation_recall``, ``citation_precision`` (:mod:`lit3r.evals.citations`, ALCE): each answer is split into
  claims (:func:`lit3r.grounding.claims.split_claims`: its sentences, each citing the numbers its markers name);
  a citation's passage is the cited chunk's text after a ``Title: <paper title>`` line, as ALCE formats a
  document. Abstentions make no claim and are left out. ``citation_counts`` gives the numbers behind them; when
  the judge fails (:class:`~lit3r.grounding.judge.JudgeError`) both are None and ``citation_error`` says why.
* ``supported_fraction``: the mean of the answers' own ``supported_fraction`` (the share of claims the agent's
  claim verification found supported), over the answers that have one.
* ``faithfulness``, ``answer_relevancy``, ``context_precision``, ``context_recall``
  (:mod:`lit3r.evals.ragas_metrics`) when a judge LLM is configured, over the answered (not abstaining)
  questions; the contexts are the chunks the reader was given (the trace's ``read`` step), best first, at most
  :data:`MAX_CONTEXTS`; the reference is the first annotator's answer (free-form, else the extractive spans, else
  Yes/No), and questions every annotator marked unanswerable have none. Without an LLM, ``ragas_skipped`` says so.
* ``abstention`` (:mod:`lit3r.evals.abstention`): the gate's F1 and percentile modes and the system's own
  abstentions, scored against QASPER's unanswerable labels.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lit3r.app.traces import load_trace
from lit3r.evals.abstention import AbstentionSample, abstention_report
from lit3r.evals.answers import AnswerRun, strip_markers
from lit3r.evals.citations import CitedClaim, citation_metrics
from lit3r.evals.qasper import QasperQuestion
from lit3r.grounding.claims import split_claims
from lit3r.grounding.judge import Judge, JudgeError
from lit3r.models import Answer

if TYPE_CHECKING:
    from lit3r.evals.ragas_metrics import RagasJudge, RagasSample
    from lit3r.index.corpus_index import CorpusIndex
    from lit3r.retrieval.gate import GateThreshold
    from lit3r.settings import Settings

log = logging.getLogger(__name__)

MAX_CONTEXTS = 10
"""The RAGAS metrics read at most this many of the reader's chunks per question."""
RAGAS_SKIPPED = "no judge LLM is configured (llm.provider 'none'): the RAGAS metrics were not computed"

PassageLookup = Callable[[str], str | None]
"""Chunk id -> the passage text a judge reads, or None when the chunk is unknown."""


# What one answer gives each metric.


def read_step(answer: Answer) -> dict[str, Any]:
    """The data of the answer's last ``read`` trace step (``best_score``, ``sufficient``, ``evidence``); {} if none."""
    if not answer.trace_path or not Path(answer.trace_path).is_file():
        return {}
    events = load_trace(Path(answer.trace_path)).get("events") or []
    reads = [e for e in events if e.get("type") == "read"]
    return dict(reads[-1].get("data") or {}) if reads else {}


def cited_claims(answer: Answer, passage: PassageLookup) -> list[CitedClaim]:
    """The answer's claims with the passages they cite; a claim naming an unknown citation or chunk cites none.

    A claim citing a number without a citation is ALCE's "citation out of range": it is unsupported and its
    citations are not counted.
    """
    by_number = {c.number: c for c in answer.citations}
    claims = []
    for claim in split_claims(answer):
        passages = [passage(by_number[n].chunk_id) if n in by_number else None for n in claim.citations]
        claims.append(CitedClaim(claim.text, () if None in passages else tuple(passages)))
    return claims


def reference_answer(question: QasperQuestion) -> str | None:
    """The first annotator's answer that is not "unanswerable": free-form, extractive spans, or Yes/No."""
    for annotation in question.annotations:
        if annotation.get("unanswerable"):
            continue
        if annotation.get("free_form_answer"):
            return str(annotation["free_form_answer"])
        if annotation.get("extractive_spans"):
            return ", ".join(annotation["extractive_spans"])
        if annotation.get("yes_no") is not None:
            return "Yes" if annotation["yes_no"] else "No"
    return None


def ragas_sample(
    question: QasperQuestion, answer: Answer, step: Mapping[str, Any], passage: PassageLookup
) -> RagasSample:
    """The RAGAS view of one answered question: answer text without markers, the reader's chunks, a reference."""
    from lit3r.evals.ragas_metrics import RagasSample

    texts = [passage(chunk_id) for chunk_id in step.get("evidence") or []]
    contexts = tuple(t for t in texts if t is not None)[:MAX_CONTEXTS]
    return RagasSample(question.id, question.text, strip_markers(answer.text), contexts, reference_answer(question))


def abstention_sample(question: QasperQuestion, answer: Answer, step: Mapping[str, Any]) -> AbstentionSample:
    """The gate's best score for the question, its gold label and whether the system abstained."""
    score = step.get("best_score")
    return AbstentionSample(
        question.id, None if score is None else float(score), not question.unanswerable, not answer.sufficient
    )


# The report.


@dataclass
class GroundingEvaluation:
    """Everything the grounding metrics need besides the run: a judge, passages, the gate, an optional LLM judge."""

    judge: Judge
    passage: PassageLookup
    gate: GateThreshold | None = None
    ragas: RagasJudge | None = None
    on_step: Callable[[str], None] | None = None
    """Told the name of each metric group as it starts (progress display)."""

    def __call__(self, run: AnswerRun) -> dict[str, Any]:
        """The grounding keys of the report for ``run``'s answers."""
        return grounding_report(run.answers, self)


def grounding_report(answered: Sequence[tuple[QasperQuestion, Answer]], setup: GroundingEvaluation) -> dict[str, Any]:
    """``citation_recall``, ``citation_precision``, ``supported_fraction``, the RAGAS metrics and ``abstention``."""
    started = time.perf_counter()
    steps = [read_step(answer) for _question, answer in answered]

    def tell(name: str) -> None:
        if setup.on_step:
            setup.on_step(name)

    tell("citations")
    report: dict[str, Any] = {"grounding_judge": setup.judge.name, **citation_report(answered, setup)}
    fractions = [a.supported_fraction for _q, a in answered if a.supported_fraction is not None]
    report["supported_fraction"] = statistics.fmean(fractions) if fractions else None
    report["supported_fraction_answers"] = len(fractions)
    if setup.ragas is None:
        report["ragas_skipped"] = RAGAS_SKIPPED
    else:
        tell("ragas")
        report.update(ragas_report(answered, steps, setup))
    report["abstention"] = abstention_report(
        [abstention_sample(q, a, step) for (q, a), step in zip(answered, steps, strict=True)], setup.gate
    )
    report["grounding_seconds"] = round(time.perf_counter() - started, 3)
    return report


def citation_report(answered: Sequence[tuple[QasperQuestion, Answer]], setup: GroundingEvaluation) -> dict[str, Any]:
    """ALCE citation recall and precision with their counts; both None, with the error, when the judge fails."""
    claims = [cited_claims(answer, setup.passage) for _question, answer in answered]
    try:
        alce = citation_metrics(claims, setup.judge)
    except JudgeError as exc:  # the answers and their F1s are still reported
        log.warning("citation metrics not computed: %s", exc)
        return {"citation_recall": None, "citation_precision": None, "citation_error": str(exc)}
    recall, precision = alce.pop("citation_recall"), alce.pop("citation_precision")
    return {"citation_recall": recall, "citation_precision": precision, "citation_counts": alce}


def ragas_report(
    answered: Sequence[tuple[QasperQuestion, Answer]], steps: Sequence[Mapping[str, Any]], setup: GroundingEvaluation
) -> dict[str, Any]:
    """The RAGAS metrics over the answered (not abstaining) questions."""
    from lit3r.evals.ragas_metrics import ragas_metrics

    samples: list[RagasSample] = [
        ragas_sample(q, a, step, setup.passage) for (q, a), step in zip(answered, steps, strict=True) if a.sufficient
    ]
    return {"ragas_judge": setup.ragas.llm.model_name, **ragas_metrics(samples, setup.ragas)}


def index_passages(index: CorpusIndex) -> PassageLookup:
    """Chunk id -> ``Title: <paper title>`` and the chunk's text (ALCE's document format), None when unknown."""

    def passage(chunk_id: str) -> str | None:
        chunk = index.chunk_by_id.get(chunk_id)
        if chunk is None:
            return None
        paper = index.papers.get(chunk.paper_id)
        return f"Title: {paper.title}\n{chunk.text}" if paper else chunk.text

    return passage


def make_grounding(settings: Settings, index: CorpusIndex, gate: GateThreshold | None) -> GroundingEvaluation:
    """The evaluation the settings configure: ``settings.grounding``'s judge (exact when offline), and the RAGAS
    judge over the configured chat model with the index's query encoder when ``settings.llm`` is enabled."""
    from lit3r.grounding.judges import make_judge

    llm = None
    ragas = None
    if settings.llm.enabled:
        from lit3r.evals.ragas_metrics import RagasJudge
        from lit3r.llm.wrapper import LLM

        llm = LLM.from_settings(settings.llm)
        ragas = RagasJudge(llm, index.encoder)
    return GroundingEvaluation(make_judge(settings.grounding, llm=llm), index_passages(index), gate, ragas)
