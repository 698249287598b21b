"""Training the learned fusion: labelled lists, the fit, folds by paper, the metrics, the user's questions file, and
the train-fusion command (deterministic: the same questions give the same file)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from typer.testing import CliRunner

from lit3r.cli import app
from lit3r.evals import fusion_training as training
from lit3r.retrieval.learned import FEATURES, load_model
from lit3r.retrieval.subquery import gather
from lit3r.settings.retrieval import RetrieverSettings

from fakes.index import MemoryIndex
from fakes.retrieval import ScriptedReranker


def _lists(rows: list[list[float]], labels: list[int], list_id: list[int], papers: list[str]) -> training.Lists:
    full = np.zeros((len(rows), len(FEATURES)))
    full[:, : len(rows[0])] = rows
    n = len(papers)
    return training.Lists(
        rows=full,
        labels=np.array(labels, dtype=np.int8),
        list_id=np.array(list_id),
        papers=papers,
        in_paper=[False] * n,
        own=[True] * n,
        blend_position=np.array([0, 1] * (len(rows) // 2)),
    )


def test_collect_labels_each_candidate_by_the_gold_evidence(memory_index: MemoryIndex) -> None:
    gold = {c.id for c in memory_index.chunks_by_paper["sparse"][1:2]}
    question = training.LabelledQuestion("q1", "How does okapi saturation work?", "sparse", gold)
    settings = RetrieverSettings()
    lists = training.collect(memory_index, ScriptedReranker(), settings, [question])
    subqueries = 2  # the question and one keyword subquery ("okapi saturation work")
    assert len(lists.papers) == 2 * subqueries and lists.in_paper == [False, False, True, True]
    assert lists.own == [True, False, True, False]
    first = gather(memory_index, question.text, ScriptedReranker(), settings)
    rows = lists.list_id == 0
    assert rows.sum() == len(first.candidates)
    assert lists.labels[rows].tolist() == [int(c in gold) for c in first.candidates]
    assert lists.rows.shape[1] == len(FEATURES)


def test_fit_is_deterministic_and_learns_the_informative_feature() -> None:
    rows = [[1.0, 0.3], [0.0, 0.2], [0.9, 0.9], [0.1, 0.8], [1.0, 0.5], [0.2, 0.4]]
    lists = _lists(rows, [1, 0, 1, 0, 1, 0], [0, 0, 1, 1, 2, 2], ["a", "b", "c"])
    first = training.fit(lists, features=FEATURES[:2])
    assert first == training.fit(lists, features=FEATURES[:2])
    assert first.coef[0] > 0 and abs(first.coef[1]) < first.coef[0]
    assert first.mean[0] == pytest.approx(0.5333333, abs=1e-6)
    assert first.trained_on == {"rows": 6, "positives": 3, "lists": 3}
    with pytest.raises(ValueError, match="only one label"):
        training.fit(_lists(rows[:2], [0, 0], [0, 0], ["a"]))


def test_list_metrics_hand_computed() -> None:
    lists = _lists([[0.0]] * 4, [0, 1, 1, 0], [0, 0, 1, 1], ["a", "b"])  # blend positions 0,1 in each list
    scores = np.array([0.1, 0.9, 0.2, 0.8])  # learned puts the gold first in list 0 only
    metrics = training.list_metrics(lists, scores, np.array([True, True]), ks=(1, 2))
    assert metrics == {"lists": 2, "learned@1": 0.5, "learned@2": 1.0, "blend@1": 0.5, "blend@2": 1.0}


def test_folds_keep_a_papers_lists_together() -> None:
    assert training.paper_fold("sparse", 5) == training.paper_fold("sparse", 5)
    assert {training.paper_fold(p, 4) for p in ("a", "b", "c", "d", "e", "f", "g", "h")} <= set(range(4))


def test_user_questions_file_errors_name_the_line(memory_index: MemoryIndex, tmp_path) -> None:
    chunk = memory_index.chunks_by_paper["sparse"][1]
    good = {"question": "What saturates?", "paper_id": "sparse", "evidence": [chunk.text]}
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(good) + "\n\n" + json.dumps({**good, "evidence": [chunk.id]}) + "\n", "utf-8")
    found = training.jsonl_questions(path, memory_index)
    assert [q.gold for q in found] == [{chunk.id}, {chunk.id}] and found[1].id == "3"
    cases = {
        "not json": "q.jsonl:1: not JSON",
        json.dumps([1]): "q.jsonl:1: expected an object",
        json.dumps({**good, "question": " "}): "q.jsonl:1: 'question' must be",
        json.dumps({**good, "paper_id": "nope"}): "q.jsonl:1: 'paper_id' 'nope' is not a paper",
        json.dumps({**good, "evidence": "text"}): "q.jsonl:1: 'evidence' must be",
        json.dumps({**good, "evidence": ["no such words anywhere"]}): "q.jsonl:1: no chunk of paper 'sparse'",
    }
    for line, message in cases.items():
        path.write_text(line + "\n", encoding="utf-8")
        with pytest.raises(ValueError, match=message):
            training.jsonl_questions(path, memory_index)
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no labelled questions"):
        training.jsonl_questions(path, memory_index)


def test_train_fusion_command_on_a_users_questions_is_deterministic(disk_index, hashing_encoder, tmp_path) -> None:
    home = str(disk_index.settings.home)
    lines = []
    for pid in ("sparse", "dense", "rerank", "fusion", "citation", "graph", "vision", "speech"):
        chunk = disk_index.chunks_by_paper[pid][1]
        words = chunk.text.split()[:6]
        lines.append(
            json.dumps({"question": f"What about {' '.join(words[2:5])}?", "paper_id": pid, "evidence": [chunk.id]})
        )
    questions = tmp_path / "mine.jsonl"
    questions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    runs = []
    for name in ("a.json", "b.json"):
        result = CliRunner().invoke(
            app, ["--home", home, "eval", "train-fusion", str(questions), "--out", str(tmp_path / name), "--folds", "2"]
        )
        assert result.exit_code == 0, result.output
        runs.append((tmp_path / name).read_bytes())
    assert runs[0] == runs[1]
    model = load_model(tmp_path / "a.json")
    assert model.trained_on["questions"] == 8 and model.trained_on["data"] == "mine.jsonl"
    assert "in_paper (question lists, 2-fold by paper)" in result.output
    bad = CliRunner().invoke(
        app, ["--home", home, "eval", "train-fusion", str(questions), "--out", "x", "--folds", "1"]
    )
    assert bad.exit_code != 0 and "--folds must be 0" in bad.output


@pytest.mark.shared_data
@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("LIT3R_REPRODUCE_FUSION"),
    reason="minutes of retrieval: set LIT3R_REPRODUCE_FUSION=1 (needs the QASPER evaluation index under .lit3r)",
)
def test_the_packaged_model_is_what_the_training_command_produces(tmp_path) -> None:
    from conftest import shared

    data = shared("qasper", "qasper-test-v0.3.corpus-and-dev-questions.json.gz")
    out = tmp_path / "model.json"
    result = CliRunner().invoke(app, ["eval", "train-fusion", str(data), "--out", str(out), "--folds", "0"])
    assert result.exit_code == 0, result.output
    packaged = load_model()
    assert load_model(out).model_dump() == packaged.model_dump()
