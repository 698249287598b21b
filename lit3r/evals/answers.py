"""Answer-level QASPER evaluation: run the whole agent per question and score its answers as QASPER predictions.

Every question goes through one :class:`lit3r.app.session.Session` (one opened index, reranker, model and graph
shared by all questions). Each :class:`~lit3r.models.Answer` becomes a prediction in the official evaluator's format:

* ``predicted_answer``: the answer text without its citation markers ``[n]``, white space folded; "Unanswerable"
  when the agent abstained (``sufficient`` false); the choice alone when the answer chose one (``option``:
  "Yes"/"No" for a yes/no question, as QASPER's boolean answers are).
* ``predicted_evidence``: the QASPER paragraphs the citations' quotes stand in, in citation order, without
  repeats: each citation gives the blocks of its chunk that its verbatim quote overlaps (all of the chunk's
  blocks when the quote cannot be placed). A chunk's locator names its body blocks (``paragraph`` ..
  ``paragraph_end``); a text block gives its text (the parser's stripped paragraph, which is also how QASPER's
  annotators' evidence is written), a table or figure block gives ``"FLOAT SELECTED: " + caption`` as QASPER
  writes float evidence. An abstention has no evidence.

The quote is the passage an answer points its reader to; the chunk around it is a retrieval unit (the
structural chunker packs a section up to 2,000 characters, several paragraphs), so the paragraphs the quote
stands in are the answer's evidence. The report also gives ``evidence_f1_chunks``: the evidence F1 had each
citation named every paragraph of its chunk (how the predictions were made before 2026-12-01), and keeps
``evidence_f1_quoted``, now equal to ``evidence_f1``, for scripts that read it.

A question whose run raises is logged with its id, counted in ``failed_questions`` and left without a prediction,
so the scorer counts it as missing (0 on both metrics). Per-question latency by stage is read from the answer's
trace: ``total`` (first event start to last event end), ``search`` (``search_chunks`` and ``rerank`` tool calls),
``verify``, ``expand``, ``synthesize`` (their tool calls or answer-path nodes; overlapping calls of one turn count
once), plus ``wall`` (the whole ``ask`` call, context building and trace writing included). The report gives the
median over the answered questions of each.
"""

from __future__ import annotations

import logging
import re
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lit3r.answers.validate import MARKER, marker_numbers
from lit3r.app.traces import load_trace
from lit3r.evals import qasper_score
from lit3r.evals.qasper import QasperQuestion
from lit3r.models import Answer, Block, Citation, ParsedPaper

if TYPE_CHECKING:
    from lit3r.agent.context import PlannerKind
    from lit3r.app.session import Session

log = logging.getLogger(__name__)

FLOAT_PREFIX = "FLOAT SELECTED: "
"""How QASPER writes a table or figure caption chosen as evidence."""
STAGES: dict[str, tuple[str, ...]] = {
    "search": ("search_chunks", "rerank"),
    "verify": ("verify_sufficiency",),
    "expand": ("expand_neighbors",),
    "synthesize": ("synthesize_answer",),
}
"""Latency stages and the tool calls (or answer-path nodes of the same names) of the trace that make them up."""
LATENCY_KEYS = ("total", *STAGES, "wall")
_MARKER_BEFORE_PUNCTUATION = re.compile(rf"\s*(?:{MARKER.pattern}\s*)+(?=[.,;:!?])")

Answerer = Callable[[QasperQuestion], Answer]
"""Answers one question (e.g. :func:`make_answerer`)."""
PaperLookup = Callable[[str], ParsedPaper | None]
"""Paper id -> the stored parsed paper with its blocks (e.g. ``CorpusStore.get``)."""


# One answer as one prediction.


def answer_text(answer: Answer) -> str:
    """The predicted answer: "Unanswerable" on abstention; the chosen option when the answer chose one (a yes/no
    answer is "Yes" or "No", as QASPER's boolean answers are: the words after "Yes — " are the evidence the claim
    check reads, and QASPER scores evidence as Evidence F1, not as the answer); otherwise the text without
    citation markers, white space folded."""
    if not answer.sufficient:
        return qasper_score.UNANSWERABLE
    if answer.option:
        return answer.option
    return strip_markers(answer.text)


def strip_markers(text: str) -> str:
    """``text`` without citation markers ``[n]`` / ``[1, 3]`` (no space left before punctuation), spaces folded."""
    text = _MARKER_BEFORE_PUNCTUATION.sub("", text)
    return " ".join(MARKER.sub(" ", text).split())


def block_evidence(block: Block) -> str:
    """A block as QASPER evidence: a paragraph's text, or a float caption prefixed ``FLOAT SELECTED: ``."""
    text = block.text.strip()
    return f"{FLOAT_PREFIX}{text}" if block.type in ("table", "figure") else text


def cited_in_order(answer: Answer) -> list[Citation]:
    """The answer's citations in the order their markers first appear in the text (unreferenced ones last)."""
    by_number = {c.number: c for c in answer.citations}
    order = list(dict.fromkeys(n for n in marker_numbers(answer.text) if n in by_number))
    order += [c.number for c in answer.citations if c.number not in order]
    return [by_number[n] for n in order]


def evidence_paragraphs(answer: Answer, papers: PaperLookup, *, quoted_only: bool = True) -> list[str]:
    """The QASPER paragraph strings the citations give, in citation order, deduplicated; none on abstention.

    With ``quoted_only`` (the default) a citation gives only the paragraphs its verbatim quote overlaps (all of the
    chunk's when the quote cannot be placed in the paper's text); without it, every paragraph its chunk covers.
    Citations without a paragraph locator (a title-abstract chunk) or naming an unknown paper add nothing.
    """
    if not answer.sufficient:
        return []
    found: list[str] = []
    for citation in cited_in_order(answer):
        first = citation.locator.paragraph
        parsed = papers(citation.paper_id) if first is not None else None
        if parsed is None:
            continue
        indexes = quoted_block_indexes(parsed, citation) if quoted_only else chunk_block_indexes(citation)
        blocks = [parsed.blocks[i] for i in indexes if i < len(parsed.blocks)]
        found += [block_evidence(block) for block in blocks if block.text.strip()]
    return list(dict.fromkeys(found))


def chunk_block_indexes(citation: Citation) -> range:
    """Indexes of the body blocks the cited chunk covers (``paragraph`` .. ``paragraph_end``; empty when unknown)."""
    first, last = citation.locator.paragraph, citation.locator.paragraph_end
    if first is None:
        return range(0)
    return range(first, (first if last is None else last) + 1)


def quoted_block_indexes(parsed: ParsedPaper, citation: Citation) -> range:
    """The blocks of the cited chunk that its quote overlaps; the whole chunk's when the quote is not found there."""
    covered = chunk_block_indexes(citation)
    text, quote = parsed.canonical_text(), citation.quote
    at = text.find(quote, citation.locator.char_start or 0) if quote.strip() else -1
    if at < 0 or (citation.locator.char_end is not None and at + len(quote) > citation.locator.char_end):
        return covered
    blocks = parsed.with_spans().blocks
    hits = [
        i for i in covered if i < len(blocks) and blocks[i].char_start < at + len(quote) and blocks[i].char_end > at
    ]
    return range(hits[0], hits[-1] + 1) if hits else covered


def to_prediction(question_id: str, answer: Answer, papers: PaperLookup, *, quoted_only: bool = True) -> dict:
    """One QASPER prediction row ``{"question_id", "predicted_answer", "predicted_evidence"}``."""
    return {
        "question_id": question_id,
        "predicted_answer": answer_text(answer),
        "predicted_evidence": evidence_paragraphs(answer, papers, quoted_only=quoted_only),
    }


class CachedPapers:
    """A :data:`PaperLookup` that reads each paper once from ``lookup`` (e.g. a :class:`CorpusStore`'s ``get``)."""

    def __init__(self, lookup: PaperLookup) -> None:
        self._lookup = lookup
        self._cache: dict[str, ParsedPaper | None] = {}

    def __call__(self, paper_id: str) -> ParsedPaper | None:
        """The paper, read on first use."""
        if paper_id not in self._cache:
            self._cache[paper_id] = self._lookup(paper_id)
        return self._cache[paper_id]


# Latency from the trace.


def _interval(event: Mapping[str, Any]) -> tuple[float, float]:
    start = datetime.fromisoformat(str(event["started_at"])).timestamp() * 1000
    return start, start + float(event.get("duration_ms") or 0.0)


def _covered_ms(intervals: Iterable[tuple[float, float]]) -> float:
    """Milliseconds covered by the union of intervals (parallel calls of one turn count once)."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop > end:
            total += stop - max(start, end)
            end = stop
    return total


def stage_timings(events: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """``total`` and the :data:`STAGES` in milliseconds for one trace's events (a stage never run is 0.0)."""
    intervals = [_interval(e) for e in events]
    timings = {"total": max(e for _, e in intervals) - min(s for s, _ in intervals) if intervals else 0.0}
    for stage, tools in STAGES.items():
        chosen = [_interval(e) for e in events if e.get("type") in ("tool", "node") and e.get("name") in tools]
        timings[stage] = _covered_ms(chosen)
    return {k: round(v, 3) for k, v in timings.items()}


def trace_timings(answer: Answer) -> dict[str, float]:
    """:func:`stage_timings` of the trace file the answer names (all zero when it names none)."""
    if not answer.trace_path or not Path(answer.trace_path).is_file():
        return {"total": 0.0, **dict.fromkeys(STAGES, 0.0)}
    return stage_timings(load_trace(Path(answer.trace_path)).get("events") or [])


def median_by_stage(timings: Sequence[Mapping[str, float]]) -> dict[str, float | None]:
    """The median of every latency key over questions (None when no question was answered)."""
    return {k: round(statistics.median(t.get(k, 0.0) for t in timings), 3) if timings else None for k in LATENCY_KEYS}


# Running the questions.


@dataclass
class AnswerRun:
    """What a run over the questions produced: prediction rows, per-question timings and failures."""

    predictions: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    """The same predictions with chunk-level evidence (every paragraph of each cited chunk)."""
    timings: list[dict[str, float]] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)
    abstained: int = 0
    answers: list[tuple[QasperQuestion, Answer]] = field(default_factory=list)
    """Every answered question with its answer (what the grounding metrics read)."""


def run_questions(
    questions: Sequence[QasperQuestion],
    answerer: Answerer,
    papers: PaperLookup,
    on_question: Callable[[], None] | None = None,
) -> AnswerRun:
    """Answer every question; a question whose run raises is logged and recorded as a failure, never fatal."""
    run = AnswerRun()
    for question in questions:
        started = time.perf_counter()
        try:
            answer = answerer(question)
            wall = round((time.perf_counter() - started) * 1000, 3)
            prediction = to_prediction(question.id, answer, papers)
            chunks = to_prediction(question.id, answer, papers, quoted_only=False)
            timings = {**trace_timings(answer), "wall": wall}
        except Exception as exc:  # one failing question must not end the evaluation
            log.warning("question %s failed: %s: %s", question.id, type(exc).__name__, exc)
            run.failures.append({"question_id": question.id, "error": f"{type(exc).__name__}: {exc}"})
        else:
            run.predictions.append(prediction)
            run.chunks.append(chunks)
            run.timings.append(timings)
            run.abstained += not answer.sufficient
            run.answers.append((question, answer))
        if on_question:
            on_question()
    return run


def make_answerer(session: Session, *, planner: PlannerKind = "fixed", in_paper: bool = False) -> Answerer:
    """A function answering a question with ``session`` (one index, reranker, model and graph for all questions).

    With ``in_paper`` retrieval is restricted to the question's own paper (QASPER's original setting).
    """

    def answer(question: QasperQuestion) -> Answer:
        allowed = [question.paper_id] if in_paper else None
        return session.ask(question.text, planner=planner, allowed_papers=allowed)

    return answer


# Scoring.


def gold_subset(gold: Mapping[str, Mapping[str, Any]], question_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The gold records keeping only the given questions (papers left without questions are dropped)."""
    wanted = set(question_ids)
    subset = {}
    for paper_id, record in gold.items():
        qas = [qa for qa in record.get("qas") or [] if qa.get("question_id") in wanted]
        if qas:
            subset[paper_id] = {**record, "qas": qas}
    return subset


PUBLISHED: tuple[dict[str, Any], ...] = (
    {
        "system": "LED-base, given the whole paper",
        "answer_f1": 33.63,
        "evidence_f1": 29.85,
        "source": "Dasigi et al., 2021, A Dataset of Information-Seeking Questions and Answers Anchored in Research "
        "Papers, Table 2 (QASPER test set)",
    },
    {
        "system": "GPT-3.5-Turbo-16k",
        "answer_f1": 43.3,
        "evidence_f1": None,
        "source": "Bai et al., 2023, LongBench (its 200-question QASPER subset, F1)",
    },
)
"""Published QASPER answer figures (percent), printed beside lit3r's by ``lit3r eval qasper --answers``: the
dataset paper's baseline on the whole test set (a run on part of it, such as the shared file's 940 questions, is
compared with it on most of the same questions, not figure for figure) and a long-context LLM on LongBench's
QASPER subset."""


def score_run(gold: Mapping[str, Mapping[str, Any]], predictions_path: Path) -> dict[str, Any]:
    """Official QASPER scores of a written predictions file: answer F1 (by type), evidence F1 and its text variant,
    and abstention on the unanswerable questions (:func:`~lit3r.evals.qasper_score.abstention_scores`)."""
    predictions = qasper_score.read_predictions(predictions_path)
    scores = qasper_score.score_predictions(gold, predictions)
    text_only = qasper_score.score_predictions(gold, predictions, text_evidence_only=True)
    return {
        **scores,
        "evidence_f1_text_only": text_only["evidence_f1"],
        "unanswerable": qasper_score.abstention_scores(gold, predictions),
        "published": list(PUBLISHED),
    }


def evaluate_answers(
    questions: Sequence[QasperQuestion],
    gold: Mapping[str, Mapping[str, Any]],
    answerer: Answerer,
    papers: PaperLookup,
    predictions_path: Path,
    on_question: Callable[[], None] | None = None,
    extra: Callable[[AnswerRun], Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Answer ``questions``, write the predictions file and score it against their gold annotations.

    Returns the report: the scorer's numbers (``answer_f1``, ``answer_f1_by_type``, ``evidence_f1``, ...), the
    failures (``failed_questions`` counted, ``failures`` with ids and errors), ``abstained``,
    ``latency_ms_median_by_stage`` and ``predictions_path``; with ``extra`` (e.g. the grounding metrics of
    :mod:`lit3r.evals.grounding`), also what it computes from the run.
    """
    run = run_questions(questions, answerer, papers, on_question)
    qasper_score.write_predictions(predictions_path, run.predictions)
    gold = gold_subset(gold, [q.id for q in questions])
    report = score_run(gold, predictions_path)
    chunks = qasper_score.score_predictions(gold, {row["question_id"]: row for row in run.chunks})
    report.update(
        evidence_f1_chunks=chunks["evidence_f1"],
        evidence_f1_quoted=report["evidence_f1"],
        answered=len(run.predictions),
        abstained=run.abstained,
        failed_questions=len(run.failures),
        failures=run.failures,
        latency_ms_median_by_stage=median_by_stage(run.timings),
        predictions_path=str(predictions_path),
    )
    if extra is not None:
        report.update(extra(run))
    return report
