"""Training and cross-validation of the learned fusion (:mod:`lit3r.retrieval.learned`) on labelled questions.

A *list* is one subquery's candidates for one question, open domain or within the question's paper, exactly as
the fixed planner's first round retrieves them (the question and its keyword subqueries,
:func:`lit3r.retrieval.planning.deterministic_subqueries`). Each candidate is a row of features; its label is 1
when it holds the question's gold evidence. The model is a logistic regression (scikit-learn, L2, lbfgs) on
standardised features: deterministic, so the same lists always give the same model.

Cross-validation splits by paper (a paper's questions are all in one fold, by a hash of its id), so no fold
sees a test paper's text through another question about it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lit3r.index.corpus_index import CorpusIndex
from lit3r.retrieval import fusion
from lit3r.retrieval.learned import FEATURES, FusionModel
from lit3r.retrieval.planning import deterministic_subqueries
from lit3r.retrieval.rerankers import Reranker
from lit3r.retrieval.subquery import features_of, gather
from lit3r.settings.retrieval import RetrieverSettings


@dataclass
class LabelledQuestion:
    """A question, its paper and the ids of the chunks holding its gold evidence."""

    id: str
    text: str
    paper_id: str
    gold: set[str]


@dataclass
class Lists:
    """Every candidate list as one matrix: rows, labels, and which list / paper / setting each row is from."""

    rows: np.ndarray
    labels: np.ndarray
    list_id: np.ndarray
    papers: list[str]
    """Paper id of each list (the question's paper)."""
    in_paper: list[bool]
    """Whether each list was retrieved within the question's paper."""
    own: list[bool]
    """Whether each list is the question's own subquery (not a keyword subquery)."""
    blend_position: np.ndarray
    """Each row's position in the blend's order (the seed's rule), for comparison."""


def paper_fold(paper_id: str, folds: int) -> int:
    """The fold of a paper: its SHA-1 modulo ``folds`` (the benchmarks' paper-hash parts)."""
    return int(hashlib.sha1(paper_id.encode()).hexdigest(), 16) % folds


def collect(
    index: CorpusIndex,
    reranker: Reranker | None,
    settings: RetrieverSettings,
    questions: Sequence[LabelledQuestion],
    on_question: Callable[[], None] | None = None,
) -> Lists:
    """The candidate lists of every question's first-round subqueries, open domain and within its paper."""
    blocks, labels, list_ids, blend = [], [], [], []
    papers, in_paper, own = [], [], []
    for question in questions:
        subqueries = deterministic_subqueries(question.text, settings.subqueries_first)
        for allowed in (None, [question.paper_id]):
            for position, subquery in enumerate(subqueries):
                found = gather(index, subquery, reranker, settings, allowed)
                if not found.candidates:
                    continue
                rows = features_of(index, subquery, found.original, found.papers, found.candidates, found.raw)
                blended = fusion.blend_rerank(
                    found.candidates,
                    found.raw or {},
                    k=settings.blend_k,
                    w_ret=settings.w_ret,
                    w_rr=settings.w_rr,
                    pinned=settings.pinned,
                    keep=len(found.candidates),
                    max_candidates=settings.rerank_candidates,
                    pin_bonus=settings.pin_bonus,
                )
                order = {chunk: i for i, (chunk, _s) in enumerate(blended)}
                blocks.append(rows)
                labels.append(np.array([c in question.gold for c in found.candidates], dtype=np.int8))
                list_ids.append(np.full(len(rows), len(papers), dtype=np.int32))
                blend.append(np.array([order[c] for c in found.candidates], dtype=np.int32))
                papers.append(question.paper_id)
                in_paper.append(allowed is not None)
                own.append(position == 0)
        if on_question:
            on_question()
    if not blocks:
        raise ValueError("no candidates were retrieved for any question: nothing to train on")
    return Lists(
        rows=np.vstack(blocks),
        labels=np.concatenate(labels),
        list_id=np.concatenate(list_ids),
        papers=papers,
        in_paper=in_paper,
        own=own,
        blend_position=np.concatenate(blend),
    )


def fit(
    lists: Lists, features: Sequence[str] = FEATURES, c: float = 1.0, rows: np.ndarray | None = None
) -> FusionModel:
    """A logistic model of the label from ``features`` over the rows (a boolean mask ``rows``: those only)."""
    from sklearn.linear_model import LogisticRegression

    columns = [FEATURES.index(f) for f in features]
    mask = np.ones(len(lists.labels), dtype=bool) if rows is None else rows
    x = lists.rows[mask][:, columns]
    y = lists.labels[mask]
    if y.min() == y.max():
        raise ValueError("the training rows hold only one label: no gold evidence among the candidates, or only gold")
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=c, max_iter=2000).fit((x - mean) / scale, y)
    return FusionModel(
        features=list(features),
        mean=[round(float(v), 8) for v in mean],
        scale=[round(float(v), 8) for v in scale],
        coef=[round(float(v), 8) for v in model.coef_[0]],
        intercept=round(float(model.intercept_[0]), 8),
        trained_on={
            "rows": int(mask.sum()),
            "positives": int(y.sum()),
            "lists": int(len(np.unique(lists.list_id[mask]))),
        },
    )


def _hits(order_keys: np.ndarray, labels: np.ndarray, k: int) -> bool:
    top = np.argsort(order_keys, kind="stable")[:k]
    return bool(labels[top].any())


def list_metrics(lists: Lists, scores: np.ndarray, select: np.ndarray, ks: Sequence[int] = (1, 5, 10, 20)) -> dict:
    """Hit rate at each k of ordering each selected list by ``scores`` (high first) against the blend's order."""
    out: dict = {"lists": 0}
    sums = {f"{name}@{k}": 0 for name in ("learned", "blend") for k in ks}
    for list_index in np.flatnonzero(select):
        rows = lists.list_id == list_index
        labels = lists.labels[rows]
        out["lists"] += 1
        for k in ks:
            sums[f"learned@{k}"] += _hits(-scores[rows], labels, k)
            sums[f"blend@{k}"] += _hits(lists.blend_position[rows].astype(float), labels, k)
    out.update({name: round(total / max(out["lists"], 1), 4) for name, total in sums.items()})
    return out


def cross_validate(lists: Lists, folds: int = 5, features: Sequence[str] = FEATURES, c: float = 1.0) -> dict:
    """Out-of-fold scores (folds by paper) and the list metrics of the question's own lists, per setting."""
    list_fold = np.array([paper_fold(p, folds) for p in lists.papers])
    row_fold = list_fold[lists.list_id]
    columns = [FEATURES.index(f) for f in features]
    scores = np.zeros(len(lists.labels))
    for fold in range(folds):
        model = fit(lists, features, c, rows=row_fold != fold)
        test = row_fold == fold
        scores[test] = model.probabilities(lists.rows[test][:, columns])
    own = np.array(lists.own)
    in_paper = np.array(lists.in_paper)
    return {
        "folds": folds,
        "open_domain": list_metrics(lists, scores, own & ~in_paper),
        "in_paper": list_metrics(lists, scores, own & in_paper),
        "keyword_open_domain": list_metrics(lists, scores, ~own & ~in_paper),
    }


def qasper_questions(path: Path, index: CorpusIndex) -> list[LabelledQuestion]:
    """The QASPER questions of ``path`` whose gold text evidence lies in chunks of ``index``."""
    from lit3r.evals.qasper import evidence_chunks, load_questions

    out = []
    for q in load_questions(path):
        if q.evidence_paragraphs and q.paper_id in index.papers:
            gold = evidence_chunks(q, index.chunks_by_paper.get(q.paper_id, []))
            if gold:
                out.append(LabelledQuestion(q.id, q.text, q.paper_id, gold))
    return out


def jsonl_questions(path: Path, index: CorpusIndex) -> list[LabelledQuestion]:
    """A user's labelled questions: one JSON object a line, ``{"question", "paper_id", "evidence"}``.

    ``evidence`` lists chunk ids of ``index`` or passages of the paper's text (a chunk holding a passage, spacing
    ignored, is gold). A line that is not such an object, an unknown paper, or evidence found in no chunk is a
    ``ValueError`` naming the file and line.
    """
    from lit3r.textutil import fold_space

    out = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read: {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not JSON: {exc.msg}") from None
        if not isinstance(record, dict):
            raise ValueError(f"{where}: expected an object with question, paper_id and evidence")
        question, paper, evidence = record.get("question"), record.get("paper_id"), record.get("evidence")
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"{where}: 'question' must be a non-empty string")
        if paper not in index.papers:
            raise ValueError(f"{where}: 'paper_id' {paper!r} is not a paper of the index")
        if not isinstance(evidence, list) or not evidence or not all(isinstance(e, str) for e in evidence):
            raise ValueError(f"{where}: 'evidence' must be a non-empty list of chunk ids or passages")
        chunks = index.chunks_by_paper.get(paper, [])
        passages = [fold_space(e) for e in evidence]
        gold = {c.id for c in chunks if c.id in evidence or any(p and p in fold_space(c.text) for p in passages)}
        if not gold:
            raise ValueError(f"{where}: no chunk of paper {paper!r} is or holds any of the evidence")
        out.append(LabelledQuestion(str(record.get("id", number)), question, paper, gold))
    if not out:
        raise ValueError(f"{path}: no labelled questions")
    return out
