"""PubMedQA: yes / no / maybe questions over one biomedical abstract each, asked through the whole agent.

Two files are read (``../shared/data`` names them):

* PQA-L (Jin et al., 2019), ``ori_pqal.json.gz`` with ``test_ground_truth.json`` beside it: the 500 test ids are
  the official test set, asked in the *reasoning-required* setting: the paper is the abstract's ``CONTEXTS``
  (each under its ``LABELS`` heading, e.g. BACKGROUND, METHODS, RESULTS) without the ``LONG_ANSWER`` conclusion.
  The other 500 ids are the training questions (:func:`load_pqal` with ``split="train"``).
* ScholarQABench's ``pubmed_test.jsonl`` (Asai et al., 2024): 843 yes/no questions ``{input, gold_ctx, answer}``,
  one gold abstract each.

Each item becomes a generic paper record (:mod:`lit3r.corpus.parsers.records`) of a generated JSON-lines file;
the evaluation ingests and indexes that file under its own home, as ``eval qasper`` does. Two settings: ``own``
(retrieval restricted to the question's paper, PubMedQA's original setting) and ``open`` (every abstract of the
file is the corpus). A question is asked with the dataset's options (``yes``/``no``/``maybe``, or ``yes``/``no``)
unless the run asks without them; without options the reader's own "Yes"/"No" of a polar question is the
prediction. An abstention predicts nothing and counts as wrong. Accuracy and macro-F1 over the dataset's labels
are reported with the published figures of the same split beside them (:data:`PUBLISHED`).
"""

from __future__ import annotations

import gzip
import json
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lit3r.models import Answer
from lit3r.reading.verdict_features import RESULT_SECTION

Setting = Literal["own", "open"]
PQAL_LABELS = ("yes", "no", "maybe")
YES_NO_LABELS = ("yes", "no")

PUBLISHED: dict[str, list[dict[str, Any]]] = {
    "pqal": [
        {"system": "majority class (yes)", "accuracy": 55.2, "macro_f1": 23.7, "source": "Jin et al. 2019, Table 5"},
        {"system": "BioBERT (reasoning-required)", "accuracy": 68.1, "macro_f1": 52.7, "source": "Jin et al. 2019"},
        {
            "system": "single human (reasoning-required)",
            "accuracy": 78.0,
            "macro_f1": 72.2,
            "source": "Jin et al. 2019",
        },
    ],
    "scholarqabench": [
        {"system": "OpenScholar-8B", "accuracy": 76.0, "source": "Asai et al. 2024 (OpenScholar), Table 1"},
    ],
}
"""Published figures (percent) on the same data: PubMedQA's own paper (PQA-L test, reasoning-required) and
OpenScholar's report on ScholarQABench's PubMedQA split."""


@dataclass(frozen=True)
class PubMedItem:
    """One question with its abstract (sections in order) and gold label."""

    id: str
    question: str
    sections: tuple[tuple[str, str], ...]
    label: str
    title: str = ""

    def record(self) -> dict[str, Any]:
        """The generic paper record of the item's abstract (``id``, ``title``, ``sections``)."""
        return {
            "id": self.id,
            "title": self.title or f"PubMed {self.id}",
            "sections": [{"heading": heading, "paragraphs": [text]} for heading, text in self.sections],
        }


class PubMedQAFormatError(ValueError):
    """A PubMedQA file that cannot be read; the message names the file and the problem."""


def _read_json(path: Path) -> Any:
    try:
        opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
        with opener(path, "rt", encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError, EOFError) as exc:
        raise PubMedQAFormatError(f"{path}: not a readable JSON file ({exc})") from exc


def load_pqal(path: Path, split: Literal["test", "train"] = "test") -> list[PubMedItem]:
    """PQA-L questions of ``split``: the ids of ``test_ground_truth.json`` beside ``path``, or the others."""
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    data_path = folder / "ori_pqal.json.gz" if path.is_dir() else path
    truth_path = folder / "test_ground_truth.json"
    if not truth_path.is_file():
        raise PubMedQAFormatError(f"{truth_path}: missing (the PQA-L test ids are read from it)")
    data, test_ids = _read_json(data_path), _read_json(truth_path)
    if not isinstance(data, dict) or not isinstance(test_ids, dict):
        raise PubMedQAFormatError(f"{data_path}: expected a mapping of PubMed ids to questions")
    items = []
    for pmid, row in data.items():
        if (pmid in test_ids) != (split == "test"):
            continue
        try:
            contexts, labels = row["CONTEXTS"], row.get("LABELS") or []
            sections = tuple((str(labels[i]) if i < len(labels) else "", str(t)) for i, t in enumerate(contexts))
            items.append(PubMedItem(str(pmid), str(row["QUESTION"]), sections, str(row["final_decision"]).lower()))
        except (KeyError, TypeError) as exc:
            raise PubMedQAFormatError(f"{data_path}: question {pmid}: missing or wrong field {exc}") from exc
    return items


def _sections(text: Any) -> list[tuple[str, str]]:
    """A gold context's sections: its text, or, where the file holds the PQA-L record (``contexts`` with their
    ``labels``), each context under its heading; the record's other fields (the annotators' predictions) are
    not part of the abstract and are left out."""
    if isinstance(text, dict):
        labels = text.get("labels") or []
        return [(str(labels[i]) if i < len(labels) else "", str(t)) for i, t in enumerate(text["contexts"])]
    return [("", str(text))]


def load_scholarqabench(path: Path) -> list[PubMedItem]:
    """ScholarQABench's PubMedQA questions: ``{input, gold_ctx: [{title, text}], answer}`` per line."""
    items = []
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                contexts = row["gold_ctx"]
                sections = tuple(section for c in contexts for section in _sections(c["text"]))
                title = next((str(c.get("title") or "") for c in contexts if c.get("title")), "")
                items.append(
                    PubMedItem(f"sqa{number:04d}", str(row["input"]), sections, str(row["answer"]).lower(), title)
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise PubMedQAFormatError(f"{path}: line {number}: not a question record ({exc})") from exc
    return items


def load_items(path: Path, split: Literal["test", "train"] = "test") -> tuple[str, list[PubMedItem]]:
    """``("pqal", items of split)`` for the PQA-L folder or file, ``("scholarqabench", items)`` for a JSON-lines
    file (which has no split: ``split`` must be ``"test"``)."""
    path = Path(path)
    if not path.exists():
        raise PubMedQAFormatError(f"{path}: no such file or folder")
    if path.suffix == ".jsonl":
        if split != "test":
            raise PubMedQAFormatError(f"{path}: ScholarQABench's file has no training split (only PQA-L has)")
        return "scholarqabench", load_scholarqabench(path)
    return "pqal", load_pqal(path, split)


def write_corpus(items: Sequence[PubMedItem], path: Path) -> Path:
    """Write the items' abstracts as paper records, one per line (unchanged content keeps its index)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(item.record(), ensure_ascii=False) + "\n" for item in items)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path


def predicted_label(answer: Answer, labels: Sequence[str]) -> str | None:
    """The label an answer predicts: its option (lower case) when it is one of ``labels``; None on abstention."""
    if not answer.sufficient or not answer.option:
        return None
    option = answer.option.strip().lower()
    return option if option in labels else None


def scores(gold: Sequence[str], predicted: Sequence[str | None], labels: Sequence[str]) -> dict[str, Any]:
    """Accuracy, macro-F1 over ``labels`` (an abstention is a wrong answer of no class), per-label F1, counts."""
    from sklearn.metrics import f1_score

    pairs = list(zip(gold, predicted, strict=True))
    shown = [p if p is not None else "(abstain)" for p in predicted]
    per_label = f1_score(gold, shown, labels=list(labels), average=None, zero_division=0)
    return {
        "questions": len(pairs),
        "accuracy": round(sum(g == p for g, p in pairs) / len(pairs), 4) if pairs else 0.0,
        "macro_f1": round(float(per_label.mean()), 4) if pairs else 0.0,
        "f1_by_label": {label: round(float(v), 4) for label, v in zip(labels, per_label, strict=True)},
        "predicted": dict(Counter(shown)),
        "gold": dict(Counter(gold)),
        "abstained": sum(p is None for p in predicted),
        "majority_accuracy": round(max(Counter(gold).values()) / len(gold), 4) if gold else 0.0,
    }


Asker = Callable[[PubMedItem], Answer]


def run(items: Sequence[PubMedItem], ask: Asker, labels: Sequence[str], on_item: Callable[[], None] | None = None):
    """Ask every item; returns ``(report, rows)``: the scores and one row per question (a failure is a row too)."""
    rows, seconds = [], []
    for item in items:
        started = time.perf_counter()
        try:
            answer = ask(item)
        except Exception as exc:  # one failing question must not end the evaluation
            rows.append({"id": item.id, "gold": item.label, "predicted": None, "error": f"{type(exc).__name__}: {exc}"})
        else:
            seconds.append(time.perf_counter() - started)
            cited = answer.citations[0] if answer.citations else None
            rows.append({
                "id": item.id, "gold": item.label, "predicted": predicted_label(answer, labels),
                "answer": answer.text, "confidence": getattr(answer, "confidence", None),
                "quoted_section": cited.locator.section if cited else None,
            })  # fmt: skip
        if on_item:
            on_item()
    report = scores([r["gold"] for r in rows], [r["predicted"] for r in rows], labels)
    report |= quote_report(rows)
    report["failed_questions"] = sum("error" in r for r in rows)
    report["seconds_median"] = round(statistics.median(seconds), 3) if seconds else None
    return report, rows


def quote_report(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Where the answered questions' quotes come from: the count of each section heading their first citation lies
    under (an abstract's BACKGROUND, OBJECTIVE, METHODS, RESULTS ...), and how many lie under a heading naming the
    results (:data:`~lit3r.reading.verdict_features.RESULT_SECTION`: RESULTS, PRINCIPAL FINDINGS ...; where an
    abstract reports what was found, which is what shows a verdict)."""
    answered = [r for r in rows if r.get("predicted") is not None]
    sections = Counter(str(r.get("quoted_section") or "(none)") for r in answered)
    return {
        "quoted_sections": dict(sections.most_common()),
        "quoted_from_results": sum(n for heading, n in sections.items() if RESULT_SECTION.search(heading)),
    }


def sample(items: Sequence[PubMedItem], limit: int | None, every: int | None) -> list[PubMedItem]:
    """Every ``every``-th item (from the first), then the first ``limit`` of those."""
    chosen = list(items)[:: every or 1]
    return chosen[:limit] if limit else chosen
