"""``lit3r eval ...``: evaluation commands."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import Progress

from lit3r.cli.app import err, existing_home, fail, out, state
from lit3r.corpus.ingest import ingest
from lit3r.corpus.store import CorpusStore, file_sha256
from lit3r.settings import Settings

if TYPE_CHECKING:  # the index modules load torch: imported where used, so `lit3r` starts fast
    from lit3r.app.session import Session
    from lit3r.evals.grounding import GroundingEvaluation
    from lit3r.index.corpus_index import CorpusIndex
    from lit3r.retrieval.gate import GateThreshold

eval_app = typer.Typer(no_args_is_help=True, help="Evaluate lit3r on benchmark datasets.")


def eval_settings(settings: Settings, data: Path) -> Settings:
    """Settings whose home is a corpus of exactly ``data``'s papers: ``<home>/evals/<hash of the file>``."""
    return settings.model_copy(update={"home": settings.home / "evals" / file_sha256(data)[:12]})


@eval_app.command("qasper")
def qasper(
    data: Annotated[Path, typer.Argument(help="QASPER file (original or Hugging Face layout, .json or .json.gz).")],
    retrieval: Annotated[bool, typer.Option("--retrieval", help="Evaluate retrieval configurations.")] = False,
    answers: Annotated[
        bool, typer.Option("--answers", help="Answer every question with the agent; score answer and evidence F1.")
    ] = False,
    report_path: Annotated[Path | None, typer.Option("--json", help="Write the report as JSON to this file.")] = None,
    configs: Annotated[str | None, typer.Option(help="Comma-separated configurations (default: all).")] = None,
    limit: Annotated[
        int | None,
        typer.Option(help="Evaluate only the first N questions (with --retrieval: of those with gold evidence)."),
    ] = None,
    reranker: Annotated[str | None, typer.Option(help="Reranker spec (default: the settings' reranker).")] = None,
    in_paper: Annotated[
        bool, typer.Option("--in-paper", help="With --answers: answer from the question's own paper only.")
    ] = False,
    planner: Annotated[str, typer.Option(help="With --answers: 'fixed' (offline Lit3R sequence) or 'llm'.")] = "fixed",
    predictions: Annotated[
        Path | None,
        typer.Option(help="With --answers: predictions file (default <eval home>/predictions-<setting>.jsonl)."),
    ] = None,
    grounding: Annotated[
        bool,
        typer.Option(
            "--grounding",
            help="With --answers: add citation recall/precision (ALCE), RAGAS metrics (with an LLM) and abstention.",
        ),
    ] = False,
) -> None:
    """Evaluate on QASPER: retrieval (--retrieval) and/or whole answers (--answers); at least one is needed.

    --retrieval retrieves for every question over the whole corpus and within its own paper and reports recall@k
    and MRR. --answers runs the agent per question (over the whole corpus, or with --in-paper within the question's
    paper), writes QASPER predictions and scores them with the official answer F1 and evidence F1; --grounding adds
    the grounding metrics (lit3r.evals.grounding) to its report. With both, the JSON report is
    {"retrieval": ..., "answers": ...}. The file's papers are ingested and indexed under
    <home>/evals/<file hash>/ (reused when unchanged).
    """
    from lit3r.evals.retrieval import CONFIGURATIONS
    from lit3r.llm.local_server import local_llm

    if not retrieval and not answers:
        fail("choose what to evaluate: --retrieval, --answers or both")
    if grounding and not answers:
        fail("--grounding measures answers: use it with --answers")
    if planner not in ("fixed", "llm"):
        fail(f"unknown planner {planner!r}: use fixed or llm")
    names = [c.strip() for c in configs.split(",")] if configs else list(CONFIGURATIONS)
    unknown = [n for n in names if n not in CONFIGURATIONS]
    if retrieval and unknown:
        fail(f"unknown configuration(s) {', '.join(unknown)}; choose from {', '.join(CONFIGURATIONS)}")
    if answers and planner == "llm" and not state.settings.llm.enabled:
        fail("planner 'llm' needs a chat model: set llm.provider (and llm.base_url or a key)")
    index, settings = _eval_index(data)
    settings = settings.model_copy(update={"reranker": reranker or settings.reranker})  # the gate is per reranker
    options = {
        "in_paper": in_paper,
        "planner": planner,
        "limit": limit,
        "predictions": predictions,
        "grounding": grounding,
    }
    document: dict = {}
    with local_llm(settings, home=state.settings.home) as settings, _session(settings, index) as session:
        if retrieval:
            document["retrieval"] = _retrieval_report(data, session, names, limit)
        if answers:
            document["answers"] = _answers_report(data, session, options)
    if report_path:
        report = document if len(document) == 2 else next(iter(document.values()))
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_path.write_text(json.dumps(report, indent=1), encoding="utf-8")
    if retrieval:
        out.print(_table(document["retrieval"]["configurations"]), highlight=False)
    if answers:
        out.print(_answers_summary(document["answers"]), highlight=False, markup=False)


@contextmanager
def _session(settings: Settings, index: CorpusIndex, **options: Any) -> Iterator[Session]:
    """One session over the evaluation index (``options`` go to :class:`Session`); a configuration error fails
    cleanly."""
    from lit3r.app.session import Session
    from lit3r.llm.errors import LLMConfigError

    try:
        session = Session(settings, index=index, **options)
    except (LLMConfigError, ValueError) as exc:
        fail(str(exc))
    with session:
        yield session


def _retrieval_report(data: Path, session: Session, names: list[str], limit: int | None) -> dict:
    """Recall@k and MRR of each retrieval configuration over the questions with gold text evidence."""
    from lit3r.evals.qasper import load_questions
    from lit3r.evals.retrieval import evaluate

    index, settings = session.index, session.settings
    questions = [q for q in load_questions(data) if q.evidence_paragraphs and q.paper_id in index.papers]
    questions = questions[:limit] if limit else questions
    with Progress(console=err, transient=True) as bar:
        task = bar.add_task("questions", total=len(questions))
        results = evaluate(session, questions, names, on_question=lambda: bar.advance(task))
    return {
        "data": str(data),
        "questions": len(questions),
        "reranker": settings.reranker,
        "chunker": settings.chunker.kind,
        "embedder": settings.embedder.model,
        "configurations": results,
    }


def _answers_report(data: Path, session: Session, options: dict) -> dict:
    """Answer every question of ``data`` with the agent, write the predictions and score them (QASPER F1s).

    ``options``: ``in_paper``, ``planner``, ``limit``, ``predictions`` (a path or None for the default) and
    ``grounding`` (add the grounding metrics).
    """
    from lit3r.evals.answers import CachedPapers, evaluate_answers, make_answerer
    from lit3r.evals.qasper import load_questions
    from lit3r.evals.qasper_score import load_gold

    index, settings = session.index, session.settings
    setting = "in_paper" if options["in_paper"] else "open_domain"
    questions = [q for q in load_questions(data) if q.paper_id in index.papers and q.annotations]
    questions = questions[: options["limit"]] if options["limit"] else questions
    path = options["predictions"] or settings.home / f"predictions-{setting}.jsonl"
    answerer = make_answerer(session, planner=options["planner"], in_paper=options["in_paper"])
    extra = _grounding(settings, index, session.gate) if options["grounding"] else None
    with CorpusStore(settings.home) as store, Progress(console=err, transient=True) as bar:
        task = bar.add_task("questions", total=len(questions))
        try:
            scores = evaluate_answers(
                questions, load_gold(data), answerer, CachedPapers(store.get), path, lambda: bar.advance(task), extra
            )
        except ValueError as exc:  # a gold annotation without an answer, or a malformed predictions file
            fail(f"cannot score {data}: {exc}")
    return {
        "data": str(data),
        "setting": setting,
        "planner": options["planner"],
        "reranker": settings.reranker,
        "gate": session.gate.to_dict() if session.gate else None,
        "chunker": settings.chunker.kind,
        "embedder": settings.embedder.model,
        **scores,
    }


def _grounding(settings: Settings, index: CorpusIndex, gate: GateThreshold | None) -> GroundingEvaluation:
    """The grounding metrics' setup (judge from settings.grounding, RAGAS judge when an LLM is configured)."""
    from lit3r.evals.grounding import make_grounding
    from lit3r.grounding.judge import JudgeConfigError

    try:
        setup = make_grounding(settings, index, gate)
    except JudgeConfigError as exc:
        fail(f"--grounding: {exc}")
    setup.on_step = lambda name: err.print(f"grounding: {name}")
    return setup


def _answers_summary(report: dict) -> str:
    """A few lines for the terminal: the F1s, by type, failures, grounding metrics and where the predictions are."""
    by_type = ", ".join(f"{kind} {value:.3f}" for kind, value in report["answer_f1_by_type"].items())
    lines = [
        f"answers ({report['setting']}, planner {report['planner']}): {report['questions']} questions, "
        f"{report['abstained']} abstained, {report['failed_questions']} failed",
        f"answer F1 {report['answer_f1']:.3f} ({by_type})",
        f"evidence F1 {report['evidence_f1']:.3f} (text only {report['evidence_f1_text_only']:.3f})",
        f"median latency ms: {json.dumps(report['latency_ms_median_by_stage'])}",
    ]
    for reading, row in (report.get("unanswerable") or {}).items():
        lines.append(
            f"abstention on questions {reading.replace('_', ' ')} calls unanswerable ({row['questions']}): "
            f"precision {row['precision']:.3f}, recall {row['recall']:.3f}, F1 {row['f1']:.3f}"
        )
    for row in report.get("published") or []:
        evidence = f", evidence F1 {row['evidence_f1']:.1f}" if row.get("evidence_f1") is not None else ""
        lines.append(f"published {row['system']}: answer F1 {row['answer_f1']:.1f}{evidence} ({row['source']})")
    if "abstention" in report:
        lines += _grounding_summary(report)
    return "\n".join([*lines, f"predictions: {report['predictions_path']}"])


def _grounding_summary(report: dict) -> list[str]:
    """The grounding metrics in a few lines (a metric that could not be computed shows as n/a)."""

    def show(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    ragas = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")
    lines = [
        f"citations (judge {report['grounding_judge']}): recall {show(report['citation_recall'])}, precision "
        f"{show(report['citation_precision'])}; supported fraction {show(report['supported_fraction'])}",
    ]
    if "ragas_skipped" in report:
        lines.append(f"ragas: {report['ragas_skipped']}")
    else:
        lines.append("ragas: " + ", ".join(f"{metric} {show(report[metric])}" for metric in ragas))
    for mode, row in report["abstention"].items():
        lines.append(
            f"abstention {mode}: threshold {show(row['threshold'])}, precision {show(row['precision'])}, "
            f"recall {show(row['recall'])}, F1 {show(row['f1'])}"
        )
    return lines


def _eval_index(data: Path) -> tuple[CorpusIndex, Settings]:
    """Ingest and index a dataset file's papers under their own home; reused while unchanged."""
    from lit3r.index.build import build_index
    from lit3r.index.opening import open_index

    if not data.is_file():
        fail(f"{data}: no such file")
    settings = eval_settings(state.settings, data)
    with CorpusStore(settings.home) as store:
        report = ingest([data], store)
        if report.failed:
            fail("; ".join(f"{path}: {problem}" for path, problem in report.failed))
        err.print(f"indexing {store.count_papers()} papers under {settings.home} (reused when unchanged)")
        build_index(settings, store)
    return open_index(settings), settings


def _table(results: dict[str, dict[str, dict]]) -> str:
    columns = ("paper_recall@10", "evidence_recall@1", "evidence_recall@10", "evidence_recall@50", "mrr")
    lines = [f"{'configuration':<18} {'setting':<12} " + " ".join(f"{c:>18}" for c in columns) + f" {'ms':>8}"]
    for name, settings in results.items():
        for setting, metrics in settings.items():
            values = " ".join(f"{metrics.get(c, 0):>18.3f}" for c in columns)
            lines.append(f"{name:<18} {setting:<12} {values} {metrics.get('latency_ms_median', 0):>8.1f}")
    return "\n".join(lines)


@eval_app.command("pubmedqa")
def pubmedqa(
    data: Annotated[
        Path,
        typer.Argument(
            help="The PQA-L folder (ori_pqal.json.gz with test_ground_truth.json) or its ori_pqal file, or "
            "ScholarQABench's pubmed_test.jsonl."
        ),
    ],
    setting: Annotated[
        str, typer.Option(help="'own' (the question's paper only), 'open' (every abstract of the file) or 'both'.")
    ] = "both",
    no_options: Annotated[
        bool, typer.Option("--no-options", help="Ask without the options (the reader's own Yes/No is the answer).")
    ] = False,
    split: Annotated[
        str,
        typer.Option(
            help="PQA-L's 'test' questions (the 500 ids of test_ground_truth.json) or its 'train' questions (the "
            "other 500, for development)."
        ),
    ] = "test",
    limit: Annotated[int | None, typer.Option(help="Ask only the first N questions (after --every).")] = None,
    every: Annotated[int | None, typer.Option(help="Ask every N-th question (from the first).")] = None,
    report_path: Annotated[Path | None, typer.Option("--json", help="Write the report as JSON to this file.")] = None,
) -> None:
    """Evaluate on PubMedQA: accuracy and macro-F1 of yes/no/maybe answers, published figures beside.

    The abstracts are written as paper records, ingested and indexed under <home>/evals/<hash>/; each question is
    asked with its options (yes/no/maybe for PQA-L, yes/no for ScholarQABench) unless --no-options.
    """
    from lit3r.evals import pubmedqa as pm
    from lit3r.llm.local_server import local_llm

    if setting not in ("own", "open", "both"):
        fail(f"--setting takes own, open or both, not {setting!r}")
    if split not in ("test", "train"):
        fail(f"--split takes test or train, not {split!r}")
    if (limit is not None and limit < 1) or (every is not None and every < 1):
        fail("--limit and --every must be at least 1")
    try:
        kind, items = pm.load_items(data, split)  # type: ignore[arg-type]
    except pm.PubMedQAFormatError as exc:
        fail(str(exc))
    if not items:
        fail(f"{data}: no question found")
    labels = pm.PQAL_LABELS if kind == "pqal" else pm.YES_NO_LABELS
    name = f"pubmedqa-{kind}.jsonl" if split == "test" else f"pubmedqa-{kind}-{split}.jsonl"
    corpus = pm.write_corpus(items, state.settings.home / "evals" / "sources" / name)
    index, settings = _eval_index(corpus)
    chosen = pm.sample(items, limit, every)
    settings_run = ("own", "open") if setting == "both" else (setting,)
    document: dict[str, Any] = {
        "data": str(data), "split": kind, "question_split": split, "options": None if no_options else list(labels)
    }  # fmt: skip
    with local_llm(settings, home=state.settings.home) as settings, _session(settings, index) as session:
        for name in settings_run:

            def ask(item: pm.PubMedItem, name: str = name):
                allowed = [item.id] if name == "own" else None
                return session.ask(item.question, options=None if no_options else list(labels), allowed_papers=allowed)

            with Progress(console=err, transient=True) as bar:
                task = bar.add_task(f"questions ({name})", total=len(chosen))
                report, rows = pm.run(chosen, ask, labels, lambda task=task: bar.advance(task))
            document[name] = report
            document[f"{name}_rows"] = rows
    document["published"] = pm.PUBLISHED[kind]
    if report_path:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    out.print(_pubmedqa_summary(document, settings_run), highlight=False, markup=False)


def _pubmedqa_summary(document: dict, settings_run: tuple[str, ...]) -> str:
    """Accuracy and macro-F1 per setting, then the published figures of the same split."""
    asked = "with options " + "/".join(document["options"]) if document["options"] else "without options"
    which = "" if document.get("question_split", "test") == "test" else f" {document['question_split']} questions"
    lines = [f"PubMedQA {document['split']}{which} ({asked}), reasoning-required contexts"]
    for name in settings_run:
        r = document[name]
        lines.append(
            f"  lit3r {name:<4}: accuracy {100 * r['accuracy']:.1f}, macro-F1 {100 * r['macro_f1']:.1f} "
            f"({r['questions']} questions, {r['abstained']} abstained, {r['failed_questions']} failed; "
            f"predicted {json.dumps(r['predicted'])}; majority of these {100 * r['majority_accuracy']:.1f}; "
            f"median {r['seconds_median']} s)"
        )
        if r.get("quoted_sections"):
            answered, common = sum(r["quoted_sections"].values()), list(r["quoted_sections"].items())[:4]
            lines.append(
                f"    quotes from a results section: {r['quoted_from_results']} of {answered} answered (most quoted "
                f"sections: {', '.join(f'{k} {v}' for k, v in common)})"
            )
    if document.get("question_split") == "train":
        lines.append("  (training questions: the shipped verdict model was fitted on them, so accuracy is in-sample)")
    for row in document["published"]:
        f1 = f", macro-F1 {row['macro_f1']:.1f}" if "macro_f1" in row else ""
        lines.append(f"  published {row['system']}: accuracy {row['accuracy']:.1f}{f1} ({row['source']})")
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
    --save MODE the threshold is stored, for the settings' reranker, beside the index of the current settings
    both under --home (used by `lit3r ask`) and under the evaluation corpus (used by `eval qasper --answers`).
    """
    from lit3r.evals.calibrate import best_scores, calibrate
    from lit3r.evals.qasper import load_questions
    from lit3r.llm.local_server import local_llm
    from lit3r.retrieval.gate import GateThreshold, save_gate

    if save not in (None, "f1", "percentile"):
        fail(f"--save takes f1 or percentile, not {save!r}")
    index, settings = _eval_index(data)
    questions = [q for q in load_questions(data) if q.paper_id in index.papers and q.annotations]
    questions = questions[:limit] if limit else questions
    if settings.reranker == "none":
        fail("the gate needs a reranker score: set a reranker other than 'none'")
    with local_llm(settings, home=state.settings.home) as settings, _session(settings, index, gate=None) as session:
        with Progress(console=err, transient=True) as bar:
            task = bar.add_task("questions", total=len(questions))
            samples = best_scores(session, questions, in_paper=in_paper, on_question=lambda: bar.advance(task))
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
        threshold = GateThreshold.from_dict(modes[save]["calibration"])
        # beside the evaluation corpus's index (used by `eval qasper --answers`) and the --home corpus's (used by ask)
        paths = {save_gate(target, threshold, settings.reranker) for target in (settings, state.settings)}
        document["saved"] = sorted(str(p) for p in paths)
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


@eval_app.command("littraceqa-answer")
def littraceqa_answer(
    inputs: Annotated[Path, typer.Argument(help="LitTraceQA inputs JSON lines (e.g. validation_inputs.jsonl).")],
    out_path: Annotated[Path, typer.Option("--out", help="Write the submission JSON lines here.")],
    planner: Annotated[str, typer.Option(help="'fixed' (the Lit3R sequence, no model) or 'llm'.")] = "fixed",
    limit: Annotated[int | None, typer.Option(help="Answer only the first N questions.", min=1)] = None,
) -> None:
    """Answer a LitTraceQA inputs file over the current corpus and write a submission `eval littraceqa` scores."""
    from lit3r.evals.littraceqa import SubmissionFormatError
    from lit3r.evals.submission import answer_inputs, read_inputs
    from lit3r.index.corpus_index import IndexNotBuiltError
    from lit3r.index.opening import open_index

    if not inputs.is_file():
        fail(f"{inputs}: no such file")
    if planner not in ("fixed", "llm"):
        fail(f"unknown planner {planner!r}: use fixed or llm")
    try:
        questions = read_inputs(inputs)[:limit]
    except SubmissionFormatError as exc:
        fail(str(exc))
    existing_home()
    try:
        index = open_index(state.settings)
    except IndexNotBuiltError as exc:
        fail(str(exc))

    def progress(question: Any, answer: Any) -> None:
        err.print(f"{question.query_id}: {_one_line(answer)}", markup=False)

    with _session(state.settings, index, planner=planner) as session:
        done = answer_inputs(session, questions, out_path, on_answer=progress)
    out.print(f"{done.answered} questions answered ({done.abstained} abstained): {done.path}", markup=False)


def _one_line(answer: Any) -> str:
    if not answer.sufficient:
        return "abstained"
    papers = list(dict.fromkeys(c.paper_id for c in answer.citations))
    return f"{len(answer.citations)} citations from {', '.join(papers[:3]) or 'no paper'}"


@eval_app.command("train-fusion")
def train_fusion(
    data: Annotated[
        Path,
        typer.Argument(
            help="Labelled questions: a QASPER file (its own evaluation index), or a .jsonl file of "
            '{"question", "paper_id", "evidence"} over the current corpus (evidence: chunk ids or passages).'
        ),
    ],
    model_path: Annotated[Path, typer.Option("--out", help="Where to write the model (JSON).")],
    folds: Annotated[int, typer.Option(help="Cross-validation folds by paper (0: none).")] = 5,
    c: Annotated[float, typer.Option("--c", help="Inverse L2 strength of the logistic regression.")] = 1.0,
    report_path: Annotated[Path | None, typer.Option("--json", help="Write the cross-validation as JSON.")] = None,
) -> None:
    """Train the learned fusion (retriever.fusion = learned) on labelled questions, cross-validated by paper.

    Every question's first-round subqueries are retrieved open domain and within its paper with the current
    retriever settings; each candidate chunk's features are labelled by the gold evidence, and a logistic model is
    fitted (deterministic: the same questions and index give the same file). Use the model with
    LIT3R_RETRIEVER__FUSION=learned LIT3R_RETRIEVER__FUSION_MODEL=<the --out file>.
    """
    from lit3r.evals import fusion_training as training
    from lit3r.index.corpus_index import IndexNotBuiltError
    from lit3r.index.opening import open_index
    from lit3r.retrieval.learned import save_model

    if folds == 1 or folds < 0:
        fail("--folds must be 0 (no cross-validation) or at least 2")
    if c <= 0:
        fail("--c must be > 0")
    if data.suffix == ".jsonl":
        settings = state.settings
        try:
            index = open_index(settings)
            questions = training.jsonl_questions(data, index)
        except (IndexNotBuiltError, ValueError) as exc:
            fail(str(exc))
    else:
        index, settings = _eval_index(data)
        questions = training.qasper_questions(data, index)
    if not questions:
        fail(f"{data}: no question with gold evidence in the index")
    with _session(settings, index) as session, Progress(console=err, transient=True) as bar:
        task = bar.add_task("questions", total=len(questions))
        retriever = session.settings.retriever
        try:
            lists = training.collect(index, session.reranker, retriever, questions, lambda: bar.advance(task))
            validation = training.cross_validate(lists, folds, c=c) if folds else None
            model = training.fit(lists, c=c)
        except ValueError as exc:
            fail(f"cannot train on {data}: {exc}")
    model.trained_on.update(
        data=data.name,
        data_sha256=file_sha256(data)[:12],
        questions=len(questions),
        reranker=settings.reranker,
        embedder=f"{settings.embedder.model} ({settings.embedder.backend})",
        prf_when=retriever.prf_when if retriever.prf else "off",
        c=c,
    )
    save_model(model, model_path)
    if report_path:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_path.write_text(
            json.dumps({"model": str(model_path), "cross_validation": validation}, indent=1), "utf-8"
        )
    out.print(f"wrote {model_path}: {model.trained_on['lists']} lists, {model.trained_on['positives']} gold candidates")
    if validation:
        for setting in ("open_domain", "in_paper"):
            row = validation[setting]
            cells = ", ".join(f"@{k} {row[f'learned@{k}']:.3f} vs {row[f'blend@{k}']:.3f}" for k in (1, 5, 10))
            out.print(f"{setting} (question lists, {folds}-fold by paper) learned vs blend: {cells}")


@eval_app.command("scifact")
def scifact(
    data: Annotated[Path, typer.Argument(help="ScholarQABench SciFact file (scifact_test.jsonl).")],
    setting: Annotated[
        str, typer.Option(help="'gold' (claim vs its abstract), 'open' (all abstracts), or 'both'.")
    ] = "both",
    every: Annotated[
        int,
        typer.Option(help="Check every N-th claim (1: all): the open setting, and the gold setting's LLM verdict."),
    ] = 1,
    offset: Annotated[
        int,
        typer.Option(
            help="Start the every-N-th sample at this claim (0-based; 0: the first): another sample of the same "
            "size, e.g. to develop on claims the default sample leaves out."
        ),
    ] = 0,
    report_path: Annotated[Path | None, typer.Option("--json", help="Write the report as JSON to this file.")] = None,
) -> None:
    """The claim check on SciFact: accuracy against the gold abstract (cross-validated by paper), and the open
    setting over all abstracts (gold abstract among the papers with a verdict); published figures beside.

    With a language model (``--preset local``, or ``llm.provider`` set), the gold setting also judges every
    ``--every``-th claim against its gold abstract with the LLM verdict (``gold_llm`` in the report), and the
    open setting checks with it."""
    from lit3r.app.check import stance_judge
    from lit3r.evals import scifact as evaluation
    from lit3r.llm.local_server import local_llm
    from lit3r.llm.trace import TraceRecorder

    if setting not in ("gold", "open", "both"):
        fail(f"unknown --setting {setting!r}: use gold, open or both")
    if every < 1:
        fail("--every must be at least 1")
    if not 0 <= offset < every:
        fail(f"--offset must be from 0 to --every minus 1 ({every - 1}), not {offset}")
    if not data.is_file():
        fail(f"{data}: no such file")
    try:
        claims = evaluation.load(data)
    except ValueError as exc:
        fail(str(exc))
    report: dict[str, Any] = {"data": str(data), "papers": len({c.paper_id for c in claims})}
    fallbacks = evaluation.held_out_judges(claims) if setting in ("gold", "both") else {}
    if setting in ("gold", "both"):
        report["gold"] = evaluation.gold_setting(claims, judges=fallbacks)
    with_llm = state.settings.llm.provider != "none"
    if setting == "gold" and not with_llm:
        _print_scifact(report, report_path)
        return
    home = eval_settings(state.settings, data).home
    records = evaluation.corpus_records(claims, home / "scifact-abstracts.jsonl")
    index, settings = _eval_index(records)
    chosen = claims[offset::every]
    with local_llm(settings, home=state.settings.home) as settings, _session(settings, index) as session:
        if setting in ("gold", "both") and session.chat_model is not None:
            with Progress(console=err, transient=True) as bar:
                task = bar.add_task("claims (LLM verdict, gold abstract)", total=len(chosen))
                report["gold_llm"] = evaluation.gold_setting_with(
                    lambda claim: stance_judge(session, TraceRecorder(), fallback=fallbacks[claim.paper_id]),
                    chosen,
                    lambda: bar.advance(task),
                )
            report["gold_llm"] |= {"every": every, "offset": offset}
            if "gold" in report:
                report["gold_llm"]["offline_on_these"] = evaluation.beside_offline(
                    report["gold"], report["gold_llm"], every, offset
                )
        if setting in ("open", "both"):
            with Progress(console=err, transient=True) as bar:
                task = bar.add_task("claims", total=len(chosen))
                report["open"] = evaluation.open_setting(session, chosen, lambda: bar.advance(task))
            report["open"] |= {"every": every, "offset": offset}
    _print_scifact(report, report_path)


def _print_scifact(report: dict[str, Any], report_path: Path | None) -> None:
    """The SciFact report with the published figures, printed and written to ``report_path``."""
    from lit3r.evals import scifact as evaluation

    report["published"] = {"figures": evaluation.PUBLISHED, "source": evaluation.PUBLISHED_SOURCE}
    if report_path:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_path.write_text(json.dumps(report, indent=1), encoding="utf-8")
    for line in evaluation.report_lines(report):
        out.print(line, highlight=False, markup=False)


@eval_app.command("train-stance")
def train_stance(
    scifact_data: Annotated[Path, typer.Option("--scifact", help="SciFact claims (scifact_test.jsonl).")],
    model_path: Annotated[Path, typer.Option("--out", help="Where to write the stance model (JSON).")],
    pubmedqa: Annotated[Path | None, typer.Option(help="PubMedQA PQA-L ori_pqal.json(.gz).")] = None,
    pubmedqa_test: Annotated[Path | None, typer.Option(help="PubMedQA test ids (test_ground_truth.json).")] = None,
    folds: Annotated[int, typer.Option(help="Cross-validation folds by paper (0: none).")] = 5,
) -> None:
    """Train the offline claim-check verdict (lit3r/grounding/stance_model.json), cross-validated by paper."""
    from lit3r.evals import stance_training as training

    for path in (scifact_data, pubmedqa, pubmedqa_test):
        if path is not None and not path.is_file():
            fail(f"{path}: no such file")
    if folds == 1 or folds < 0:
        fail("--folds must be 0 (no cross-validation) or at least 2")
    try:
        model, validation = training.train(scifact_data, pubmedqa, pubmedqa_test, folds)
    except ValueError as exc:
        fail(str(exc))
    training.save(model, model_path)
    shown = {k: v for k, v in validation.items() if k != "held_out_support"}
    out.print(json.dumps({"model": str(model_path), "cross_validation": shown}, indent=1), highlight=False)
