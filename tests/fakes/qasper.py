"""Small QASPER files written by the tests (the original layout)."""

from __future__ import annotations

import json
from pathlib import Path

TOPICS = {
    "p1": ("Sparse Retrieval", "BM25 term weighting with saturation k1 and length normalisation b."),
    "p2": ("Dense Retrieval", "A small transformer encoder maps passages to vectors for cosine search."),
    "p3": ("Citation Graphs", "Bibliographic coupling counts shared references between two papers."),
    "p4": ("Answer Verification", "An entailment model checks whether a cited passage supports the claim."),
}
"""Four papers, each with one key sentence among filler paragraphs."""


def write_qasper(path: Path, papers: dict[str, dict]) -> Path:
    """Write a QASPER original-layout file."""
    path.write_text(json.dumps(papers), encoding="utf-8")
    return path


def qasper_paper(title: str, paragraphs: list[tuple[str, list[str]]], abstract: str = "An abstract.") -> dict:
    """One paper record: sections of paragraphs and a table caption."""
    return {
        "title": title,
        "abstract": abstract,
        "full_text": [{"section_name": name, "paragraphs": paras} for name, paras in paragraphs],
        "qas": [],
        "figures_and_tables": [{"caption": "Table 1: Results on the test set.", "file": "t1.png"}],
    }


def qasper_question(qid: str, text: str, evidence: list[str], spans: bool = False) -> dict:
    """A question with one annotation: unanswerable without evidence; ``spans`` also gives the first evidence
    paragraph as its extractive span (so the official scorer reads the annotation)."""
    answer = {"unanswerable": not evidence, "evidence": evidence, "extractive_spans": evidence[:1] if spans else []}
    return {"question": text, "question_id": qid, "answers": [{"answer": answer}]}


def topics_file(tmp_path: Path, spans: bool = False) -> Path:
    """The four :data:`TOPICS` papers with one question each about their key sentence, plus one question
    without evidence (not scored by the retrieval evaluation; unanswerable for the answer evaluation)."""
    papers = {}
    for pid, (title, key) in TOPICS.items():
        filler = [f"{title} filler paragraph number {i} about unrelated matters." for i in range(3)]
        paper = qasper_paper(title, [("Method", [key, *filler])])
        words = key.split()
        paper["qas"] = [qasper_question(f"{pid}-q", f"How does {words[0]} {words[1]} work?", [key], spans)]
        papers[pid] = paper
    papers["p1"]["qas"].append(qasper_question("p1-none", "Is there anything?", [], spans))
    return write_qasper(tmp_path / "qasper.json", papers)
