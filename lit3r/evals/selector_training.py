"""Train the sentence selector (:mod:`lit3r.reading.selector`) on QASPER questions, cross-validated by paper.

Run from the repository root (the shipped model; ``TRACES``: the traces of an offline in-paper run of the same
file, ``lit3r eval qasper FILE --answers --in-paper``, moved to a folder of their own)::

    python -m lit3r.evals.selector_training ../shared/data/qasper/qasper-test-v0.3.corpus-and-dev-questions.json.gz \
        --traces TRACES --out lit3r/reading/selector_model.json --report selector-cv.json

Every question's evidence is what the reader is given in paper. With ``--traces DIR`` (the traces folder of an
``lit3r eval qasper DATA --answers --in-paper`` run, ``<home>/evals/<hash>/traces``; one data file) it is exactly
the chunks each trace's ``read`` step names, matched to the file's questions in time order, their texts
checked; without it, a stand-in: the paper's best ``--chunks`` chunks by BM25 over its chunks. The chunks are cut
into units exactly as the reader cuts them. Each unit is labelled with its answer token F1 (SQuAD F1
against every annotator's answer, the best one; yes/no questions are left out, the verdict model reads them).
The unit model is a logistic regression on standardised features of whether a unit is one of its question's best
(``--target best``; ``--target f1``: the ridge regression of unit F1 it replaced); the answerability model a
logistic regression on pooled features, labelled by whether some annotator answered the question.

Folds split by paper (a hash of the id). The report gives the Answer F1 of the rule reader with the lexical choice
quoting 1, 2 or 3 sentences (``answer_f1_rules_by_sentences``; ``answer_f1_reader_today`` is 1), then, on the
held-out folds: the Answer F1 of the unit the lexical scorer ranks first, of the unit the selector ranks first, of
the oracle unit, and of answers of 1, 2 or 3 units kept by ``keep_ratio``; then abstention precision, recall
and F1 (unanswerable by every annotator, and by some) at each candidate level of ``abstain_below``. The shipped
levels are the ones the held-out folds choose: ``keep_ratio`` by Answer F1 on answered questions,
``abstain_below`` by abstention F1 on questions every annotator found unanswerable.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lit3r.answers.question import answer_form
from lit3r.corpus.chunkers import chunk_paper
from lit3r.corpus.parsers.qasper import read_qasper_records, to_parsed_paper
from lit3r.evals import qasper_score
from lit3r.evals.answers import answer_text
from lit3r.evals.qasper import QasperQuestion, load_questions
from lit3r.models import Chunk
from lit3r.reading.extractive import extractive_answer
from lit3r.reading.quotes import Candidate, candidates
from lit3r.reading.scoring import lexical_scores
from lit3r.reading.selector import (
    QUESTION_FEATURES,
    UNIT_FEATURES,
    Linear,
    SelectorModel,
    kept_units,
    question_features,
    unit_features,
)
from lit3r.settings import ChunkerSettings

KEEP_RATIOS = (1.01, 0.95, 0.9, 0.8, 0.7)
"""Candidate levels of ``keep_ratio`` (1.01: one unit only)."""

BEST_SHARE = 0.8
"""A unit is one of its question's best when its answer F1 is at least this share of the best unit's."""

MIN_BEST_F1 = 0.1
"""Questions whose best unit has a lower answer F1 (evidence that does not hold the answer) do not train the unit
model: every unit of theirs would be a "best" one."""

UNIT_C = 0.1
"""Inverse penalty of the unit model's logistic regression."""

ABSTAIN_LEVELS = tuple(round(x, 2) for x in np.arange(0.0, 0.96, 0.05))
"""Candidate levels of ``abstain_below``."""


@dataclass
class Example:
    """One question with its evidence units, their features and labels."""

    question: QasperQuestion
    evidence: list[Chunk]
    pool: list[Candidate]
    lexical: list[float]
    rows: np.ndarray
    f1: np.ndarray
    refs: list[str]
    unanswerable_every: bool
    unanswerable_some: bool


def reference_answers(question: QasperQuestion) -> tuple[list[str], list[str]]:
    """The annotators' answer strings (QASPER's rules) and their types."""
    record = {"question_id": question.id, "answers": [{"answer": a} for a in question.annotations]}
    refs = qasper_score.references(record)
    return [r.answer for r in refs], [r.type for r in refs]


def proxy_evidence(question: str, chunks: Sequence[Chunk], k: int) -> list[Chunk]:
    """The paper's best ``k`` chunks by BM25 over its chunks, best first."""
    scores = lexical_scores(question, [c.text for c in chunks])
    order = sorted(range(len(chunks)), key=lambda i: (-scores[i], i))
    return [chunks[i] for i in order[:k]]


def read_steps(traces: Path) -> list[tuple[str, list[str]]]:
    """``(question, evidence chunk ids)`` of every trace in the folder, in the order the questions were asked."""
    documents = [json.loads(p.read_text(encoding="utf-8")) for p in traces.glob("*.json")]
    documents.sort(key=lambda d: min(e["started_at"] for e in d["events"]))
    out = []
    for document in documents:
        steps = [e for e in document.get("events") or [] if e.get("type") == "read"]
        evidence = (steps[-1].get("data") or {}).get("evidence") or [] if steps else []
        out.append((str(document.get("question", "")), list(evidence)))
    return out


def traced_evidence(path: Path, traces: Path) -> dict[str, list[str]]:
    """``{question id: evidence chunk ids}`` from an evaluation run's traces (see the module docstring)."""
    questions = [q for q in load_questions(path) if q.annotations]
    steps = read_steps(traces)
    if len(steps) != len(questions):
        raise SystemExit(f"{traces}: {len(steps)} traces for the {len(questions)} questions of {path}")
    for question, (asked, _) in zip(questions, steps, strict=True):
        if " ".join(question.text.split()) != asked:
            raise SystemExit(f"{traces}: a trace asks {asked!r} where {path} has {question.text!r}")
    return {q.id: ids for q, (_, ids) in zip(questions, steps, strict=True)}


def examples(paths: Sequence[Path], k: int, traces: Path | None = None) -> list[Example]:
    """Every non-yes/no question of the files with its evidence, features and labels."""
    settings = ChunkerSettings()
    if traces is not None and len(paths) != 1:
        raise SystemExit("--traces belongs to one data file (the one the evaluation run answered)")
    out = []
    for path in paths:
        records = read_qasper_records(path)
        chunks = {pid: chunk_paper(to_parsed_paper(pid, rec, str(path)), settings) for pid, rec in records.items()}
        by_id = {c.id: c for paper in chunks.values() for c in paper}
        traced = traced_evidence(path, traces) if traces is not None else None
        for question in load_questions(path):
            if answer_form(question.text) == "boolean" or not question.annotations:
                continue
            refs, types = reference_answers(question)
            if traced is not None:
                evidence = [by_id[c] for c in traced[question.id] if c in by_id]
            else:
                evidence = proxy_evidence(question.text, chunks[question.paper_id], k)
            pool = candidates(evidence)
            if not pool:
                continue
            lexical = lexical_scores(question.text, [c.scoring_text for c in pool])
            answered = [r for r, t in zip(refs, types, strict=True) if t in ("extractive", "abstractive")]
            f1 = np.asarray([max((qasper_score.token_f1(c.text, r) for r in answered), default=0.0) for c in pool])
            out.append(
                Example(
                    question,
                    evidence,
                    pool,
                    lexical,
                    unit_features(question.text, pool, lexical),
                    f1,
                    refs,
                    all(t == "none" for t in types),
                    any(t == "none" for t in types),
                )
            )
    return out


def fold_of(paper_id: str, folds: int) -> int:
    """The fold of a paper: a hash of its id (all its questions in one fold)."""
    return hashlib.sha256(paper_id.encode()).digest()[0] % folds


def fit_unit(train: Sequence[Example], alpha: float, target: str = "best", c: float = UNIT_C) -> Linear:
    """The unit model on standardised unit features.

    ``target="best"`` (the default): a logistic regression of whether a unit is one of its question's best units
    (answer F1 at least :data:`BEST_SHARE` of the best unit's, in evidence holding a unit of F1 at least
    :data:`MIN_BEST_F1`), each question weighing the same whatever its number of units; it ranks the units of one
    question, which is the reader's choice. ``target="f1"``: a ridge regression of unit F1 (penalty ``alpha``),
    the model before, kept to compare.
    """
    from sklearn.linear_model import LogisticRegression, Ridge

    if target == "f1":
        x = np.vstack([e.rows for e in train])
        y = np.concatenate([e.f1 for e in train])
        mean, scale = _standardiser(x)
        model = Ridge(alpha=alpha).fit((x - mean) / scale, y)
        return Linear(mean, scale, model.coef_.astype(float), float(model.intercept_))
    kept = [e for e in train if len(e.f1) and e.f1.max() >= MIN_BEST_F1]
    x = np.vstack([e.rows for e in kept])
    y = np.concatenate([(e.f1 >= BEST_SHARE * e.f1.max()).astype(int) for e in kept])
    weight = np.concatenate([np.full(len(e.f1), 1.0 / len(e.f1)) for e in kept])
    mean, scale = _standardiser(x)
    model = LogisticRegression(C=c, max_iter=3000).fit((x - mean) / scale, y, sample_weight=weight)
    return Linear(mean, scale, model.coef_[0].astype(float), float(model.intercept_[0]), logistic=True)


def _standardiser(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each feature's mean and standard deviation (1 where it is constant)."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    return mean, scale


def fit_answerable(x: np.ndarray, y: np.ndarray, c: float) -> Linear:
    """Logistic regression of "some annotator answered" on standardised question features."""
    from sklearn.linear_model import LogisticRegression

    mean, scale = _standardiser(x)
    model = LogisticRegression(C=c, max_iter=1000).fit((x - mean) / scale, y)
    return Linear(mean, scale, model.coef_[0].astype(float), float(model.intercept_[0]), logistic=True)


def answer_f1(example: Example, units: Sequence[int]) -> float:
    """QASPER Answer F1 of an answer made of these units (best reference)."""
    text = " ".join(example.pool[i].text for i in units)
    return max(qasper_score.token_f1(text, r) for r in example.refs)


def prf(predicted: Sequence[bool], gold: Sequence[bool]) -> tuple[float, float, float]:
    """Precision, recall and F1 of the positive class."""
    tp = sum(p and g for p, g in zip(predicted, gold, strict=True))
    p = tp / sum(predicted) if any(predicted) else 0.0
    r = tp / sum(gold) if any(gold) else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def cross_validate(
    data: Sequence[Example], folds: int, alpha: float, c: float, target: str = "best", unit_c: float = UNIT_C
) -> dict:
    """Held-out predictions for every example (each fold's models trained on the other folds)."""
    predicted: list[np.ndarray] = [np.zeros(0)] * len(data)
    answerable = np.zeros(len(data))
    for fold in range(folds):
        test = [i for i, e in enumerate(data) if fold_of(e.question.paper_id, folds) == fold]
        train = [e for e in data if fold_of(e.question.paper_id, folds) != fold]
        unit = fit_unit(train, alpha, target, unit_c)
        qx = np.vstack([question_features(e.question.text, e.rows, unit(e.rows)) for e in train])
        qy = np.asarray([not e.unanswerable_some for e in train], dtype=int)
        gate = fit_answerable(qx, qy, c)
        for i in test:
            predicted[i] = unit(data[i].rows)
            answerable[i] = gate(question_features(data[i].question.text, data[i].rows, predicted[i])[None, :])[0]
    return {"predicted": predicted, "answerable": answerable}


def report(data: Sequence[Example], held: dict) -> dict:
    """The held-out figures (see the module docstring)."""
    lexical_first = [answer_f1(e, [int(np.argmax(e.lexical))]) for e in data]
    by_sentences = {
        n: float(
            np.mean(
                [
                    max(
                        qasper_score.token_f1(
                            answer_text(
                                extractive_answer(
                                    e.question.text, e.evidence, max_sentences=n, selector=None, chooser=None
                                )
                            ),
                            r,
                        )
                        for r in e.refs
                    )
                    for e in data
                ]
            )
        )
        for n in (1, 2, 3)
    }
    oracle = [answer_f1(e, [int(np.argmax(e.f1))]) for e in data]
    by_ratio = {
        ratio: float(
            np.mean([answer_f1(e, kept_units(p, ratio)) for e, p in zip(data, held["predicted"], strict=True)])
        )
        for ratio in KEEP_RATIOS
    }
    keep_ratio = max(by_ratio, key=lambda r: by_ratio[r])
    every = [e.unanswerable_every for e in data]
    some = [e.unanswerable_some for e in data]
    with_gate = {
        level: float(
            np.mean(
                [
                    max(qasper_score.token_f1(qasper_score.UNANSWERABLE, r) for r in e.refs)
                    if a < level
                    else answer_f1(e, kept_units(p, keep_ratio))
                    for e, p, a in zip(data, held["predicted"], held["answerable"], strict=True)
                ]
            )
        )
        for level in ABSTAIN_LEVELS
    }
    abstention = {}
    for level in ABSTAIN_LEVELS:
        abstain = [a < level for a in held["answerable"]]
        abstention[level] = {
            "abstained": int(sum(abstain)),
            "every": prf(abstain, every),
            "some": prf(abstain, some),
        }
    return {
        "questions": len(data),
        "unanswerable_every": int(sum(every)),
        "unanswerable_some": int(sum(some)),
        "answer_f1_reader_today": by_sentences[1],
        "answer_f1_rules_by_sentences": by_sentences,
        "answer_f1_lexical_first": float(np.mean(lexical_first)),
        "answer_f1_oracle_unit": float(np.mean(oracle)),
        "answer_f1_by_keep_ratio": by_ratio,
        "keep_ratio": keep_ratio,
        "answer_f1_with_gate_by_level": with_gate,
        "abstention_by_level": abstention,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", nargs="+", type=Path, help="QASPER files (original or Hugging Face layout)")
    parser.add_argument("--out", type=Path, help="write the trained model here (JSON)")
    parser.add_argument("--report", type=Path, help="write the cross-validation report here (JSON)")
    parser.add_argument("--traces", type=Path, help="an in-paper evaluation run's traces folder (one data file)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--chunks", type=int, default=3, help="evidence chunks per question (the reader's default)")
    parser.add_argument(
        "--target", choices=("best", "f1"), default="best",
        help="the unit model: 'best' (a logistic regression of a unit being one of its question's best) or 'f1' "
        "(a ridge regression of unit F1, the model before)",
    )  # fmt: skip
    parser.add_argument("--alpha", type=float, default=10.0, help="ridge penalty of the unit model (--target f1)")
    parser.add_argument(
        "--unit-c", type=float, default=UNIT_C, help="inverse penalty of the unit model (--target best)"
    )
    parser.add_argument("--c", type=float, default=1.0, help="inverse penalty of the answerability model")
    args = parser.parse_args(argv)
    data = examples(args.data, args.chunks, args.traces)
    held = cross_validate(data, args.folds, args.alpha, args.c, args.target, args.unit_c)
    figures = report(data, held)
    keep_ratio = figures["keep_ratio"]
    levels = figures["abstention_by_level"]
    abstain_below = max(levels, key=lambda t: (levels[t]["every"][2], -t))
    figures["chosen"] = {"keep_ratio": keep_ratio, "abstain_below": abstain_below}
    print(json.dumps(figures, indent=1, default=float))
    if args.report:
        args.report.write_text(json.dumps(figures, indent=1, default=float), encoding="utf-8")
    if args.out:
        unit = fit_unit(data, args.alpha, args.target, args.unit_c)
        qx = np.vstack([question_features(e.question.text, e.rows, unit(e.rows)) for e in data])
        qy = np.asarray([not e.unanswerable_some for e in data], dtype=int)
        model = SelectorModel(
            unit,
            fit_answerable(qx, qy, args.c),
            abstain_below,
            keep_ratio,
            trained_on=" ".join(p.name for p in args.data),
        )
        args.out.write_text(json.dumps(model.to_dict(), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out} ({len(UNIT_FEATURES)} unit features, {len(QUESTION_FEATURES)} question features)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
