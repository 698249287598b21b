"""Training the verdict model (lit3r.evals.verdict_training) and the PubMedQA files it reads, on small fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lit3r.evals.pubmedqa import load_pqal, load_scholarqabench
from lit3r.evals.verdict_training import (
    Config,
    conclusion_examples,
    conclusions,
    examples,
    fit,
    item_chunks,
    main,
    predict,
    scholarqabench_items,
)
from lit3r.reading.verdict import VerdictModel, feature_names, load_model

RESULTS = {
    "yes": "Treatment {n} significantly reduced the rate of infection (p < 0.01) compared with placebo.",
    "no": "The rate of infection did not differ between the groups (p = 0.{n}4); there was no significant difference.",
    "maybe": "Infection tended to be less frequent with treatment {n}, a trend that may warrant larger studies.",
}

CONCLUSIONS = {
    "yes": "The treatment reduces infection.",
    "no": "The treatment does not reduce infection.",
    "maybe": "The treatment might reduce infection; larger trials are needed.",
}


def pqal_folder(tmp_path: Path, per_label: int = 8) -> Path:
    """A PQA-L folder: ``per_label`` questions of each label, the first two of each in the test set."""
    data, test = {}, {}
    for label, result in RESULTS.items():
        for n in range(per_label):
            pmid = f"{label}{n}"
            data[pmid] = {
                "QUESTION": f"Does treatment {n} reduce infection in study {len(data)}?",
                "CONTEXTS": [f"Infection after surgery {len(data)} is common.", f"We randomised {40 + n} patients.",
                             result.format(n=n)],
                "LABELS": ["BACKGROUND", "METHODS", "RESULTS"],
                "LONG_ANSWER": CONCLUSIONS[label],
                "final_decision": label,
                "reasoning_required_pred": label,
            }  # fmt: skip
            if n < 2:
                test[pmid] = label
    (tmp_path / "ori_pqal.json").write_text(json.dumps(data), encoding="utf-8")
    (tmp_path / "test_ground_truth.json").write_text(json.dumps(test), encoding="utf-8")
    return tmp_path / "ori_pqal.json"


def test_scholarqabench_records_become_sections_without_the_annotators_labels(tmp_path: Path) -> None:
    record = {"contexts": ["Background text.", "We found no difference."], "labels": ["BACKGROUND", "RESULTS"],
              "meshes": ["Humans"], "reasoning_required_pred": "no", "reasoning_free_pred": "no"}  # fmt: skip
    path = tmp_path / "pubmed_test.jsonl"
    rows = [
        {"input": "Does it work?", "gold_ctx": [{"title": "", "text": record}], "answer": "no"},
        {"input": "Is it safe?", "gold_ctx": [{"title": "T", "text": "Plain abstract text."}], "answer": "yes"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    first, second = load_scholarqabench(path)
    assert first.sections == (("BACKGROUND", "Background text."), ("RESULTS", "We found no difference."))
    assert "reasoning" not in json.dumps(first.record()) and first.label == "no"
    assert second.sections == (("", "Plain abstract text."),) and second.title == "T"


def test_scholarqabench_questions_of_pqal_are_dropped_and_counted(tmp_path: Path) -> None:
    path = pqal_folder(tmp_path)
    train, test = load_pqal(path, split="train"), load_pqal(path, split="test")
    rows = [
        {"input": test[0].question, "gold_ctx": [{"title": "", "text": "Other text."}], "answer": "yes"},
        {"input": "Reworded question?", "gold_ctx": [{"title": "", "text": train[0].sections[0][1]}], "answer": "no"},
        {"input": "A new question?", "gold_ctx": [{"title": "", "text": "A new abstract."}], "answer": "no"},
    ]
    sqa = tmp_path / "pubmed_test.jsonl"
    sqa.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    kept, counts = scholarqabench_items(sqa, train, test)
    assert counts == {"in_pqal_test": 1, "in_pqal_training": 1, "added": 1}
    assert [k.question for k in kept] == ["A new question?"]


def test_a_fitted_model_separates_the_cues_and_keeps_its_word_parts(tmp_path: Path) -> None:
    items = load_pqal(pqal_folder(tmp_path), split="train")
    data = examples(items, {item.id: item_chunks(item) for item in items})
    assert len(data) == len(items) == 18 and all(e.row.shape == (len(feature_names()),) for e in data)
    assert all(e.fields["results"] == item.sections[-1][1] for e, item in zip(data, items, strict=True))
    model = fit(data, Config(c=1.0, word_weight=1.0, class_weight="sqrt"))
    assert set(model.words) == {"question", "results"}
    assert sum(predict(model, e) == e.label for e in data) >= 15
    again = VerdictModel.from_dict(json.loads(json.dumps(model.to_dict())))
    assert predict(again, data[0]) == predict(model, data[0])


def test_conclusion_examples_put_the_conclusion_in_place_of_the_results(tmp_path: Path) -> None:
    path = pqal_folder(tmp_path)
    items = load_pqal(path, split="train")
    extra = conclusion_examples(items, {item.id: item_chunks(item) for item in items}, conclusions(path))
    assert [e.id for e in extra] == [item.id for item in items]  # the training items only
    assert all(e.fields["results"] == CONCLUSIONS[e.label] for e in extra)
    assert all(e.row[feature_names().index("results_section")] == 1.0 for e in extra)


def test_the_training_command_writes_a_model_that_loads(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "model.json"
    main([str(pqal_folder(tmp_path)), "--out", str(out), "--evidence", "abstract", "--folds", "3", "--repeats", "1"])
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert printed[0]["questions"] == 18 and printed[0]["conclusion_examples"] == 18
    assert printed[0]["majority"]["accuracy"] == pytest.approx(1 / 3, abs=1e-3)
    assert len(printed) == 1 + 18 and all("accuracy_by_split" in row for row in printed[1:])
    model = load_model(str(out))
    assert model.names == feature_names() and model.trained_on["questions"] == 18
    chosen = model.trained_on["cross_validation"]["chosen"]
    assert chosen["accuracy"] == max(row["accuracy"] for row in printed[1:])
