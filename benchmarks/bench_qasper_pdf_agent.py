"""QASPER read from PDFs, answered by the agent: in-paper retrieval and answers on the PDF corpus beside the JSON one.

``benchmarks/bench_qasper_pdf.py`` measures what the PDF parser recovers (paragraphs, headings, order) and the
BM25 leg's recall over a paper's chunks; this runs the whole agent, as ``lit3r eval qasper --answers --in-paper``
does, on two corpora of the same papers in one run:

* the JSON corpus: the QASPER file ingested and indexed as ``eval qasper`` does (``<home>/evals/<hash>``, reused);
* the PDF corpus: the PDFs ``benchmarks/render_qasper_pdfs.py`` printed (its ``manifest.json`` names each file's
  QASPER paper), ingested and indexed under ``--pdf-home``.

For every question with text evidence whose paper is in both corpora, the agent answers within the question's
paper (the default settings, offline), and is scored the same way on both corpora:

* evidence recall@10: the share of gold evidence paragraphs contained (``bench_qasper_pdf.contained``: token
  recall >= 0.9, since PDF text is not the JSON's character for character) in one of the 10 best chunks of the
  agent's pool;
* Answer F1: QASPER's official token F1 of the answer against every annotator (``lit3r.evals.qasper_score``).

Run (after rendering, e.g. ``python benchmarks/render_qasper_pdfs.py --out /tmp/qasper-pdfs``)::

    python benchmarks/bench_qasper_pdf_agent.py --pdfs /tmp/qasper-pdfs --home H --pdf-home H-pdf --out R.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from statistics import mean

from bench_qasper_pdf import QASPER as DATA
from bench_qasper_pdf import contained, tokens
from report_file import emit

from lit3r.app.session import Session
from lit3r.cli.evaluate import eval_settings
from lit3r.corpus.ingest import ingest
from lit3r.corpus.parsers.qasper import read_qasper_records
from lit3r.corpus.store import CorpusStore
from lit3r.evals import qasper_score
from lit3r.evals.answers import answer_text
from lit3r.evals.qasper import QasperQuestion, load_questions
from lit3r.index.build import build_index
from lit3r.index.opening import open_index
from lit3r.settings import Settings, load_settings


def indexed(settings: Settings, sources: list[Path]) -> None:
    """Ingest ``sources`` into ``settings.home`` and bring its index up to date (both reused when unchanged)."""
    with CorpusStore(settings.home) as store:
        report = ingest(sources, store)
        if report.failed:
            print(json.dumps({"failed": [str(f) for f in report.failed][:20]}))
        build_index(settings, store)


def run_corpus(settings: Settings, questions: list[tuple[QasperQuestion, str]], refs: dict) -> list[dict]:
    """Each question answered in its paper (``paper id`` of this corpus): recall@10 of its gold evidence, Answer F1."""
    index = open_index(settings)
    rows = []
    with Session(settings, index=index) as session:
        for question, paper_id in questions:
            text = " ".join(question.text.split())
            retrieval = session.retrieve(text, allowed_papers=[paper_id])
            top = [tokens(index.chunk_by_id[c].text) for c, _ in retrieval.pool[:10] if c in index.chunk_by_id]
            gold = [tokens(p) for p in question.evidence_paragraphs]
            found = [any(contained(g, chunk) for chunk in top) for g in gold]
            answer = session.ask(text, allowed_papers=[paper_id])
            f1, _ = qasper_score.best_answer_match(answer_text(answer), refs[question.id])
            rows.append({"question_id": question.id, "recall_at_10": mean(found), "answer_f1": f1})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdfs", type=Path, required=True, help="folder written by render_qasper_pdfs.py")
    parser.add_argument("--qasper", type=Path, default=DATA)
    parser.add_argument("--home", type=Path, required=True, help="home of the JSON corpus (as eval qasper's --home)")
    parser.add_argument("--pdf-home", type=Path, required=True, help="home of the PDF corpus")
    parser.add_argument("--limit", type=int, default=None, help="the first N questions with text evidence")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    manifest: dict[str, str] = json.loads((args.pdfs / "manifest.json").read_text())
    json_settings = eval_settings(load_settings(home=args.home), args.qasper)
    pdf_settings = load_settings(home=args.pdf_home)
    started = time.monotonic()
    indexed(json_settings, [args.qasper])
    indexed(pdf_settings, [args.pdfs / name for name in manifest])
    with CorpusStore(args.pdf_home) as store:
        pdf_id = {manifest[Path(p.paper.source).name]: p.paper.id for p in store.iter_papers() if p.paper.source}
    print(json.dumps({"indexed_s": round(time.monotonic() - started, 1), "pdf_papers": len(pdf_id)}), flush=True)
    records = read_qasper_records(args.qasper)
    refs = qasper_score.gold_references(records)
    asked = [q for q in load_questions(args.qasper) if q.evidence_paragraphs and q.paper_id in pdf_id]
    asked = asked[: args.limit] if args.limit else asked
    report: dict = {"questions": len(asked)}
    for name, settings, ids in (("json", json_settings, None), ("pdf", pdf_settings, pdf_id)):
        started = time.monotonic()
        rows = run_corpus(settings, [(q, ids[q.paper_id] if ids else q.paper_id) for q in asked], refs)
        report[name] = {
            "recall_at_10": round(mean(r["recall_at_10"] for r in rows), 4),
            "answer_f1": round(mean(r["answer_f1"] for r in rows), 4),
            "seconds": round(time.monotonic() - started, 1),
        }
        print(json.dumps({name: report[name]}), flush=True)
    report["recall_gap"] = round(report["json"]["recall_at_10"] - report["pdf"]["recall_at_10"], 4)
    emit(report, args.out)


if __name__ == "__main__":
    main()
