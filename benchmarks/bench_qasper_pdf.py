"""QASPER read from PDFs, measured against its JSON: paragraphs, headings, reading order and retrieval.

The PDFs are those ``benchmarks/render_qasper_pdfs.py`` prints (two columns, running heads, page numbers,
captions). They are ingested with ``lit3r.corpus.ingest`` (the parallel PDF parser) into a fresh corpus;
the same papers are read from the JSON with the QASPER parser. Then, per paper:

* paragraphs: every gold paragraph's best SQuAD token F1 against the parsed text blocks; the share of
  gold paragraphs recovered with F1 >= 0.9 and the mean F1;
* headings: the share of gold section headings (the rendered '2.1 Heading' without its number) that are
  the section of some parsed block;
* reading order: over consecutive gold paragraphs both recovered (F1 >= 0.9), the share whose parsed
  blocks come in the same order;
* retrieval: for every question with text evidence, the paper's chunks (the default chunker) ranked by
  the project's BM25 index against the question, and in-paper evidence recall@10: the share of gold
  evidence paragraphs contained (token recall >= 0.9, the same rule for both corpora) in a top-10 chunk;
  JSON and PDF corpus side by side.

Run::

    python benchmarks/bench_qasper_pdf.py --pdfs /tmp/qasper-pdfs --out /tmp/qasper-pdf.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from pathlib import Path
from statistics import mean

from lit3r.corpus.chunkers import chunk_paper
from lit3r.corpus.ingest import ingest
from lit3r.corpus.parsers.qasper import read_qasper_records
from lit3r.corpus.parsers.records import parse_records
from lit3r.corpus.store import CorpusStore
from lit3r.evals.qasper import FLOAT_MARKER
from lit3r.evals.qasper_score import normalize_answer
from lit3r.index.bm25 import BM25Index
from lit3r.models import ParsedPaper
from lit3r.settings import BM25Settings, ChunkerSettings, LimitsSettings

ROOT = Path(__file__).resolve().parents[1]
QASPER = ROOT / ".." / "shared" / "data" / "qasper" / "qasper-test-v0.3.corpus-and-dev-questions.json.gz"


def tokens(text: str) -> Counter:
    return Counter(normalize_answer(text).split())


def f1(gold: Counter, found: Counter) -> float:
    shared = sum((gold & found).values())
    if not shared:
        return 0.0
    precision, recall = shared / sum(found.values()), shared / sum(gold.values())
    return 2 * precision * recall / (precision + recall)


def contained(gold: Counter, found: Counter) -> bool:
    return sum((gold & found).values()) >= 0.9 * sum(gold.values())


def gold_paragraphs(record: dict) -> list[str]:
    return [p.strip() for s in record.get("full_text") or [] for p in s.get("paragraphs") or [] if p.strip()]


def gold_headings(record: dict) -> list[str]:
    names = [(s.get("section_name") or "").split(":::") for s in record.get("full_text") or []]
    return list(dict.fromkeys(part.strip() for parts in names for part in parts if part.strip()))


def paper_scores(record: dict, parsed: ParsedPaper) -> dict:
    blocks = [b for b in parsed.blocks if b.type == "text"]
    block_tokens = [tokens(b.text) for b in blocks]
    block_sets = [set(t) for t in block_tokens]
    best: list[tuple[float, int]] = []
    for paragraph in gold_paragraphs(record):
        gold = tokens(paragraph)
        if not gold:
            continue
        keys = set(gold)
        candidates = sorted(range(len(blocks)), key=lambda i: -len(keys & block_sets[i]))[:3]
        scored = [(f1(gold, block_tokens[i]), i) for i in candidates] or [(0.0, -1)]
        best.append(max(scored))
    recovered = [index for score, index in best if score >= 0.9]
    pairs = [(a, b) for (sa, a), (sb, b) in zip(best, best[1:], strict=False) if sa >= 0.9 and sb >= 0.9 and a != b]
    sections = {" ".join((b.section or "").split()[1:]).lower() for b in parsed.blocks if b.section}
    headings = gold_headings(record)
    return {
        "paragraphs": len(best),
        "recovered": len(recovered),
        "mean_f1": mean(s for s, _ in best) if best else 0.0,
        "headings": len(headings),
        "headings_found": sum(h.lower() in sections for h in headings),
        "order_pairs": len(pairs),
        "order_kept": sum(a < b for a, b in pairs),
    }


def recall_at_10(record: dict, parsed: ParsedPaper, chunker: ChunkerSettings, bm25: BM25Settings) -> list[float]:
    """In-paper evidence recall@10 of every question of the paper that has text evidence."""
    chunks = chunk_paper(parsed, chunker)
    if not chunks:
        return []
    index = BM25Index.build([c.id for c in chunks], [c.text for c in chunks], bm25)
    chunk_tokens = [tokens(c.text) for c in chunks]
    out = []
    for qa in record.get("qas") or []:
        evidence = {
            e.strip()
            for answer in qa.get("answers") or []
            for e in (answer.get("answer", answer).get("evidence") or [])
            if e.strip() and FLOAT_MARKER not in e
        }
        if not evidence:
            continue
        top = index.raw_scores(qa["question"]).argsort()[::-1][:10]
        hits = sum(any(contained(tokens(e), chunk_tokens[i]) for i in top) for e in evidence)
        out.append(hits / len(evidence))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdfs", type=Path, required=True, help="folder written by render_qasper_pdfs.py")
    parser.add_argument("--qasper", type=Path, default=QASPER)
    parser.add_argument("--home", type=Path, default=None, help="corpus folder (default: a temporary one)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--no-ingest", action="store_true", help="measure the papers already in --home (a run still ingesting)"
    )
    args = parser.parse_args()
    manifest = json.loads((args.pdfs / "manifest.json").read_text())
    records = read_qasper_records(args.qasper)
    json_papers = {p.paper.id: p for p in parse_records(args.qasper)}
    home = args.home or Path(tempfile.mkdtemp(prefix="lit3r-qasper-pdf-"))
    started = time.monotonic()
    with CorpusStore(home) as store:
        failed = []
        if not args.no_ingest:
            failed = ingest([args.pdfs / name for name in manifest], store, limits=LimitsSettings()).failed
        by_source = {Path(p.paper.source or "").name: p for p in store.iter_papers()}
    ingest_s = time.monotonic() - started
    chunker, bm25 = ChunkerSettings(), BM25Settings()
    per_paper, recall_pdf, recall_json = [], [], []
    for name, paper_id in manifest.items():
        parsed = by_source.get(name)
        if parsed is None or paper_id not in records:
            continue
        per_paper.append(paper_scores(records[paper_id], parsed))
        recall_pdf.extend(recall_at_10(records[paper_id], parsed, chunker, bm25))
        recall_json.extend(recall_at_10(records[paper_id], json_papers[paper_id], chunker, bm25))
    total = sum(p["paragraphs"] for p in per_paper)
    result = {
        "papers": len(manifest),
        "papers_parsed": len(per_paper),
        "failed": failed,
        "ingest_s": round(ingest_s, 1),
        "gold_paragraphs": total,
        "paragraphs_f1_ge_0.9": round(sum(p["recovered"] for p in per_paper) / max(total, 1), 4),
        "paragraph_mean_f1": round(sum(p["mean_f1"] * p["paragraphs"] for p in per_paper) / max(total, 1), 4),
        "headings_found": round(
            sum(p["headings_found"] for p in per_paper) / max(sum(p["headings"] for p in per_paper), 1), 4
        ),
        "reading_order_kept": round(
            sum(p["order_kept"] for p in per_paper) / max(sum(p["order_pairs"] for p in per_paper), 1), 4
        ),
        "questions": len(recall_pdf),
        "bm25_in_paper_recall@10_pdf": round(mean(recall_pdf), 4) if recall_pdf else None,
        "bm25_in_paper_recall@10_json": round(mean(recall_json), 4) if recall_json else None,
    }
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
