"""``lit3r eval ...``: evaluation commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress

from lit3r.cli.app import err, fail, out, state
from lit3r.corpus.ingest import ingest
from lit3r.corpus.store import CorpusStore, file_sha256
from lit3r.index.build import build_index
from lit3r.index.corpus_index import CorpusIndex
from lit3r.settings import Settings
from lit3r.tools.rerankers import Reranker
from lit3r.tools.rerankers.factory import reranker_for_index

eval_app = typer.Typer(no_args_is_help=True, help="Evaluate lit3r on benchmark datasets.")


def eval_settings(settings: Settings, data: Path) -> Settings:
    """Settings whose home is a corpus of exactly ``data``'s papers: ``<home>/evals/<hash of the file>``."""
    return settings.model_copy(update={"home": settings.home / "evals" / file_sha256(data)[:12]})


@eval_app.command("qasper")
def qasper(
    data: Annotated[Path, typer.Argument(help="QASPER file (original or Hugging Face layout, .json or .json.gz).")],
    retrieval: Annotated[bool, typer.Option("--retrieval", help="Evaluate retrieval configurations.")] = False,
    report_path: Annotated[Path | None, typer.Option("--json", help="Write the report as JSON to this file.")] = None,
    configs: Annotated[str | None, typer.Option(help="Comma-separated configurations (default: all).")] = None,
    limit: Annotated[int | None, typer.Option(help="Evaluate only the first N questions with evidence.")] = None,
    reranker: Annotated[str | None, typer.Option(help="Reranker spec (default: the settings' reranker).")] = None,
) -> None:
    """Retrieve for every QASPER question over the whole corpus and within its own paper; report recall@k and MRR.

    The file's papers are ingested and indexed under <home>/evals/<file hash>/ (reused when unchanged).
    """
    from lit3r.evals.qasper import load_questions
    from lit3r.evals.retrieval import CONFIGURATIONS, evaluate

    if not retrieval:
        fail("choose what to evaluate: --retrieval")
    names = [c.strip() for c in configs.split(",")] if configs else list(CONFIGURATIONS)
    unknown = [n for n in names if n not in CONFIGURATIONS]
    if unknown:
        fail(f"unknown configuration(s) {', '.join(unknown)}; choose from {', '.join(CONFIGURATIONS)}")
    index, settings = _eval_index(data)
    questions = [q for q in load_questions(data) if q.evidence_paragraphs and q.paper_id in index.papers]
    questions = questions[:limit] if limit else questions
    spec = reranker or settings.reranker
    bound = _reranker(spec, index, required=False)
    with Progress(console=err, transient=True) as bar:
        task = bar.add_task("questions", total=len(questions))
        results = evaluate(index, questions, names, bound, settings.retriever, on_question=lambda: bar.advance(task))
    document = {
        "data": str(data),
        "questions": len(questions),
        "reranker": spec,
        "chunker": settings.chunker.kind,
        "embedder": settings.embedder.model,
        "configurations": results,
    }
    text = json.dumps(document, indent=1)
    if report_path:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_path.write_text(text, encoding="utf-8")
    out.print(_table(results), highlight=False)


def _eval_index(data: Path) -> tuple[CorpusIndex, Settings]:
    """Ingest and index a dataset file's papers under their own home; reused while unchanged."""
    if not data.is_file():
        fail(f"{data}: no such file")
    settings = eval_settings(state.settings, data)
    with CorpusStore(settings.home) as store:
        report = ingest([data], store)
        if report.failed:
            fail("; ".join(f"{path}: {problem}" for path, problem in report.failed))
        err.print(f"indexing {store.count_papers()} papers under {settings.home} (reused when unchanged)")
        build_index(settings, store)
    return CorpusIndex.open(settings), settings


def _reranker(spec: str, index: CorpusIndex, required: bool = True) -> Reranker | None:
    try:
        reranker = reranker_for_index(spec, index)
    except ValueError as exc:
        fail(str(exc))
    if reranker is None and required:
        fail("the gate needs a reranker score: set a reranker other than 'none'")
    return reranker


def _table(results: dict[str, dict[str, dict]]) -> str:
    columns = ("paper_recall@10", "evidence_recall@1", "evidence_recall@10", "evidence_recall@50", "mrr")
    lines = [f"{'configuration':<18} {'setting':<12} " + " ".join(f"{c:>18}" for c in columns) + f" {'ms':>8}"]
    for name, settings in results.items():
        for setting, metrics in settings.items():
            values = " ".join(f"{metrics.get(c, 0):>18.3f}" for c in columns)
            lines.append(f"{name:<18} {setting:<12} {values} {metrics.get('latency_ms_median', 0):>8.1f}")
    return "\n".join(lines)


@eval_app.command("gate")
def gate(
    data: Annotated[Path, typer.Argument(help="QASPER file with questions (original or Hugging Face layout).")],
    percentile: Annotated[float, typer.Option(help="Percentile P of the label-free mode.")] = 10.0,
    in_paper: Annotated[
        bool, typer.Option(help="Retrieve within each question's paper instead of the corpus.")
    ] = False,
    save: Annotated[str | None, typer.Option(help="Store this mode's threshold (f1 or percentile) for --home.")] = None,
    limit: Annotated[int | None, typer.Option(help="Use only the first N questions.")] = None,
    report_path: Annotated[Path | None, typer.Option("--json", help="Write the report as JSON to this file.")] = None,
) -> None:
    """Calibrate the relevance gate on QASPER's unanswerable labels (F1-max) and without labels (percentile).

    Reports precision, recall and F1 of abstaining for both modes with the threshold each chose. With
    --save MODE the threshold is stored beside the index of the current settings under --home, for the
    settings' reranker.
    """
    from lit3r.evals.calibrate import best_scores, calibrate, save_gate
    from lit3r.evals.qasper import load_questions
    from lit3r.tools.gate import GateThreshold

    if save not in (None, "f1", "percentile"):
        fail(f"--save takes f1 or percentile, not {save!r}")
    index, settings = _eval_index(data)
    questions = [q for q in load_questions(data) if q.paper_id in index.papers and q.annotations]
    questions = questions[:limit] if limit else questions
    reranker = _reranker(settings.reranker, index)
    with Progress(console=err, transient=True) as bar:
        task = bar.add_task("questions", total=len(questions))
        samples = best_scores(
            index, questions, reranker, settings, in_paper=in_paper, on_question=lambda: bar.advance(task)
        )
    modes = calibrate(samples, percentile)
    document = {
        "data": str(data),
        "questions": len(samples),
        "reranker": settings.reranker,
        "setting": "in_paper" if in_paper else "open_domain",
        "unanswerable": sum(1 for s in samples if not s.answerable),
        "modes": modes,
    }
    if save:
        path = save_gate(state.settings, GateThreshold.from_dict(modes[save]["calibration"]), settings.reranker)
        document["saved"] = str(path)
    text = json.dumps(document, indent=1)
    if report_path:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_path.write_text(text, encoding="utf-8")
    out.print(text, highlight=False, markup=False)


@eval_app.command("littraceqa")
def littraceqa(
    gold: Annotated[Path, typer.Option("--gold", help="Gold JSON lines (e.g. LitTraceQA validation.jsonl).")],
    pred: Annotated[Path, typer.Option("--pred", help="Submission JSON lines (sample_submission.jsonl format).")],
    report_path: Annotated[Path | None, typer.Option("--json", help="Write the report as JSON to this file.")] = None,
) -> None:
    """Score a LitTraceQA submission: paper and evidence P/R/F1 (macro), multiple choice, tables, candidate recall."""
    from lit3r.evals.littraceqa import SubmissionFormatError, read_gold, read_submission, score_submission

    for path in (gold, pred):
        if not path.is_file():
            fail(f"{path}: no such file")
    try:
        report = score_submission(read_gold(gold), read_submission(pred))
    except SubmissionFormatError as exc:
        fail(str(exc))
    text = json.dumps(report, indent=1)
    if report_path:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_path.write_text(text, encoding="utf-8")
    out.print(text, highlight=False, markup=False)
