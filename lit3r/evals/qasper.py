"""QASPER questions with their gold evidence, and how evidence paragraphs map to chunks."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lit3r.corpus.parsers.qasper import read_qasper_records
from lit3r.models import Chunk
from lit3r.textutil import fold_space

FLOAT_MARKER = "FLOAT SELECTED"


@dataclass(frozen=True)
class QasperQuestion:
    """One question; ``annotations`` keeps every annotator's raw answer object."""

    id: str
    paper_id: str
    text: str
    annotations: list[dict] = field(default_factory=list, hash=False, compare=False)

    @property
    def evidence_paragraphs(self) -> list[str]:
        """Gold text evidence over all annotators (float captions, 'FLOAT SELECTED: ...', left out), deduplicated."""
        paragraphs = (e for a in self.annotations for e in a.get("evidence") or [])
        return list(dict.fromkeys(p.strip() for p in paragraphs if p.strip() and FLOAT_MARKER not in p))

    @property
    def unanswerable(self) -> bool:
        """True when every annotator marked the question unanswerable."""
        return bool(self.annotations) and all(a.get("unanswerable") for a in self.annotations)


def load_questions(path: Path) -> list[QasperQuestion]:
    """Every question of a QASPER file (original or Hugging Face layout), in file order."""
    questions = []
    for paper_id, record in read_qasper_records(path).items():
        for qa in record.get("qas") or []:
            annotations = [a.get("answer", a) for a in qa.get("answers") or []]
            questions.append(QasperQuestion(qa["question_id"], paper_id, qa["question"], annotations))
    return questions


def evidence_chunks(question: QasperQuestion, chunks: list[Chunk]) -> set[str]:
    """Ids of the chunks of the question's paper that wholly contain a gold evidence paragraph."""
    paragraphs = [fold_space(p) for p in question.evidence_paragraphs]
    return {c.id for c in chunks if any(p in fold_space(c.text) for p in paragraphs)}
