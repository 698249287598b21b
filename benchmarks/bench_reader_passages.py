"""How often the compact reader's passages hold the gold evidence, for choices of chunks and passages.

Run from the repository root, after ``lit3r eval qasper DATA --answers [--in-paper]`` has written its traces
(move the run's traces to a folder of its own, as for ``bench_reader_rules.py``)::

    python benchmarks/bench_reader_passages.py DATA --traces bench-out/traces-in-paper \\
        --config all:3:6:600 --config all:8:10:500 --out bench-out/passages-in.json

No model is called. Each trace's subquery pools are merged as the agent merges them (a chunk keeps its best
score), the final paper ranking is the trace's, and each ``--config papers:chunks:passages:chars`` (``papers``:
``all`` or the most papers read, ``retriever.reader_papers``; ``chunks``: ``retriever.reader_chunks``;
``passages`` and ``chars``: ``llm.compact``) chooses the reader's chunks as
:func:`lit3r.tools.synthesize_answer.synthesize_answer` does and its passages with
:func:`lit3r.reading.passages.select_passages`. For every question it counts whether a passage from the
question's own paper shares a 60-character stretch with a gold evidence paragraph (text evidence only), whether
the passages hold a gold extractive span, and whether any passage is from the question's paper, after folding
case and punctuation. The check that the replay is the run's: with the run's own ``reader_chunks`` (3 by
default) the chosen chunks equal the trace's ``read`` evidence (``same_as_run``).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench_reader_rules import load_replays
from report_file import emit

from lit3r.cli.evaluate import eval_settings
from lit3r.index.corpus_index import CorpusIndex
from lit3r.models import Chunk
from lit3r.reading.passages import select_passages
from lit3r.retrieval import fusion
from lit3r.settings import load_settings


def fold(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def merged_pool(trace: Mapping[str, Any]) -> dict[str, float]:
    """The subqueries' pool shares merged, each chunk at its best score."""
    best: dict[str, float] = {}
    for event in trace["events"]:
        if event.get("name") == "retrieve_subquery":
            for chunk, score in event["data"]["pool"]:
                best[chunk] = max(best.get(chunk, float("-inf")), score)
    return best


def final_papers(trace: Mapping[str, Any]) -> list[str] | None:
    for event in trace["events"]:
        if event.get("name") == "expand_neighbors" and event.get("type") == "ranking":
            return [paper for paper, _score in event["data"]["final"]]
    return None


def reader_chunks(index: CorpusIndex, trace: Mapping[str, Any], papers: int | None, per_paper: int) -> list[Chunk]:
    """The chunks the reader gets, chosen as ``synthesize_answer`` chooses them."""
    pool = merged_pool(trace)
    paper_of = {c: index.chunk_by_id[c].paper_id for c in pool}
    ranking = final_papers(trace) or [p for p, _s in fusion.rank_papers_by_max(pool, paper_of)]
    grouped = dict(fusion.top_chunks_per_paper(pool, paper_of, papers=len(pool), per_paper=per_paper))
    read = [p for p in ranking if grouped.get(p)][:papers]
    return [index.chunk_by_id[c] for p in read for c in grouped[p]]


def gold(annotations: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """The folded extractive spans (3+ characters) and text evidence paragraphs of every annotator."""
    spans, evidence = [], []
    for annotation in annotations:
        answer = annotation.get("answer", annotation)
        spans += [fold(s) for s in answer.get("extractive_spans") or [] if len(fold(s)) >= 3]
        evidence += [fold(e) for e in answer.get("evidence") or [] if not e.startswith("FLOAT")]
    return spans, evidence


def shares_stretch(passage: str, paragraphs: Sequence[str], width: int = 60) -> bool:
    starts = range(0, max(1, len(passage) - width), width // 2)
    return any(passage[i : i + width] in paragraph for paragraph in paragraphs for i in starts)


def measure(index: CorpusIndex, runs: Sequence[tuple[Any, Mapping[str, Any]]], config: str) -> dict[str, Any]:
    papers_text, chunks, count, chars = config.split(":")
    papers = None if papers_text == "all" else int(papers_text)
    shown_evidence = shown_span = own_paper = with_evidence = with_span = 0
    lengths = []
    for replay, trace in runs:
        question = replay.question
        passages = select_passages(
            question.text, reader_chunks(index, trace, papers, int(chunks)), count=int(count), chars=int(chars)
        )
        own = [fold(p.text) for p in passages if p.chunk.paper_id == question.paper_id]
        lengths.append(sum(len(p.text) for p in passages))
        own_paper += bool(own)
        spans, evidence = gold(question.annotations)
        if evidence:
            with_evidence += 1
            shown_evidence += any(shares_stretch(text, evidence) for text in own)
        if spans:
            with_span += 1
            shown_span += any(span in " ".join(own) for span in spans)
    return {
        "evidence_shown": round(shown_evidence / with_evidence, 3) if with_evidence else None,
        "questions_with_text_evidence": with_evidence,
        "span_shown": round(shown_span / with_span, 3) if with_span else None,
        "questions_with_extractive_spans": with_span,
        "own_paper_among_passages": round(own_paper / len(runs), 3) if runs else None,
        "passage_chars_median": statistics.median(lengths) if lengths else None,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="the QASPER file of the run")
    parser.add_argument("--traces", type=Path, required=True, help="the run's trace folder")
    parser.add_argument("--home", type=Path, default=Path(".lit3r"), help="the home the run's index is under")
    parser.add_argument("--config", action="append", required=True, help="papers:chunks:passages:chars")
    parser.add_argument("--out", type=Path, help="write the report here too")
    args = parser.parse_args(argv)
    settings = eval_settings(load_settings(None, home=args.home), args.data)
    index = CorpusIndex.open(settings)
    replays = load_replays(args.data, args.traces, index)
    documents = [json.loads(p.read_text(encoding="utf-8")) for p in args.traces.glob("*.json")]
    documents.sort(key=lambda d: min(e["started_at"] for e in d["events"]))
    runs = list(zip(replays, documents[: len(replays)], strict=True))
    same = sum(
        [c.id for c in reader_chunks(index, trace, settings.retriever.reader_papers, settings.retriever.reader_chunks)]
        == [c.id for c in replay.evidence]
        for replay, trace in runs
    )
    report = {"data": str(args.data), "traces": str(args.traces), "questions": len(runs), "same_as_run": same}
    report["configs"] = {config: measure(index, runs, config) for config in args.config}
    emit(report, args.out)
    return 0 if same == len(runs) else 1


if __name__ == "__main__":
    sys.exit(main())
