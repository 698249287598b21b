"""The learned sentence selector: its features, its model file, and the answers it makes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lit3r.models import Chunk, Locator
from lit3r.reading import extractive_answer
from lit3r.reading.extractive import selected_answer
from lit3r.reading.quotes import candidates
from lit3r.reading.scoring import lexical_scores
from lit3r.reading.selector import (
    PACKAGED,
    QUESTION_FEATURES,
    UNIT_FEATURES,
    Linear,
    SelectorModel,
    load_selector,
    unit_features,
)


def chunk(cid: str, text: str, *, type: str = "text") -> Chunk:
    return Chunk(id=cid, paper_id="demo", type=type, text=text, locator=Locator(section="3 Results"))


ERRORS = chunk(
    "demo::c0006",
    "We read 100 answers that still contained an unsupported claim after verification. "
    "In 41 of them the cited passage reported a related number from a different experiment.",
)
RESULTS = chunk(
    "demo::c0005",
    "Verification alone, without further rounds, halves the rate of unsupported claims, mostly by turning "
    "confident wrong answers into abstentions. Additional rounds recover some of those questions.",
)


def one_feature_model(feature: str, *, abstain_below: float = 0.0, keep_ratio: float = 1.01) -> SelectorModel:
    """A selector whose unit score is one feature (weight 1) and whose answerability is always 0.5."""
    width = len(UNIT_FEATURES)
    coef = np.zeros(width)
    coef[UNIT_FEATURES.index(feature)] = 1.0
    unit = Linear(np.zeros(width), np.ones(width), coef, 0.0)
    n = len(QUESTION_FEATURES)
    gate = Linear(np.zeros(n), np.ones(n), np.zeros(n), 0.0, True)
    return SelectorModel(unit, gate, abstain_below, keep_ratio)


def test_features_have_one_column_per_name_and_see_numbers_and_position() -> None:
    pool = candidates([ERRORS, RESULTS])
    question = "How much did verification reduce unsupported claims?"
    rows = unit_features(question, pool, lexical_scores(question, [c.scoring_text for c in pool]))
    assert rows.shape == (len(pool), len(UNIT_FEATURES))
    quantity = rows[:, UNIT_FEATURES.index("states_quantity")]
    assert list(quantity) == [1.0, 1.0, 1.0, 0.0]  # "100", "41", "halves" (a quantity in words); none
    assert rows[:, UNIT_FEATURES.index("chunk_recip_rank")].tolist() == [1.0, 1.0, 0.5, 0.5]
    assert rows[:, UNIT_FEATURES.index("lexical_rel")].max() == pytest.approx(1.0)


def test_the_selector_quotes_its_best_unit_first_and_only_what_is_within_keep_ratio() -> None:
    question = "How much did verification reduce unsupported claims?"
    pool = candidates([ERRORS, RESULTS])
    lexical = lexical_scores(question, [c.scoring_text for c in pool])
    prefer_late = one_feature_model("chunk_recip_rank")
    prefer_late = SelectorModel(
        Linear(prefer_late.unit.mean, prefer_late.unit.scale, -prefer_late.unit.coef, 0.0),
        prefer_late.answerable,
        0.0,
        1.01,
    )
    answer = selected_answer(question, pool, lexical, prefer_late)
    assert answer.sufficient
    assert answer.text.startswith("Verification alone")
    assert [c.chunk_id for c in answer.citations] == ["demo::c0005"]
    assert answer.confidence == pytest.approx(0.5)


def test_the_selector_abstains_below_its_answerability_level() -> None:
    question = "How much did verification reduce unsupported claims?"
    pool = candidates([ERRORS, RESULTS])
    lexical = lexical_scores(question, [c.scoring_text for c in pool])
    answer = selected_answer(question, pool, lexical, one_feature_model("states_quantity", abstain_below=0.9))
    assert not answer.sufficient
    assert answer.citations == []


def test_a_model_trained_on_other_features_is_refused_by_name(tmp_path) -> None:
    data = json.loads(PACKAGED.read_text(encoding="utf-8"))
    data["unit_features"] = data["unit_features"][:-1]
    broken = tmp_path / "selector.json"
    broken.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="retrain"):
        load_selector(broken)


def test_the_packaged_model_loads_and_is_opt_in() -> None:
    model = load_selector()
    assert 0.0 <= model.abstain_below < 1.0 and model.keep_ratio > 0
    question = "What is the boiling point of liquid nitrogen in Kelvin?"
    assert not extractive_answer(question, [ERRORS, RESULTS], selector="packaged").sufficient  # silent evidence
    default = extractive_answer("How much did evidence verification reduce unsupported claims?", [ERRORS, RESULTS])
    rules = extractive_answer(
        "How much did evidence verification reduce unsupported claims?", [ERRORS, RESULTS], selector=None
    )
    assert default == rules  # the default reader is the rule path


def test_the_training_command_writes_a_model_that_loads(tmp_path) -> None:
    from lit3r.evals import selector_training

    data = Path(__file__).resolve().parents[2] / "../shared/data/qasper/qasper-train-sample-10-papers.hf-layout.json"
    if not data.exists():
        pytest.skip("needs ../shared/data/qasper (the shared QASPER train sample)")
    out, report = tmp_path / "model.json", tmp_path / "report.json"
    assert selector_training.main([str(data), "--out", str(out), "--report", str(report), "--folds", "2"]) == 0
    model = load_selector(out)
    figures = json.loads(report.read_text(encoding="utf-8"))
    assert figures["questions"] > 20
    assert 0.0 < figures["answer_f1_lexical_first"] <= figures["answer_f1_oracle_unit"] <= 1.0
    assert model.keep_ratio == figures["chosen"]["keep_ratio"]
    assert model.abstain_below == figures["chosen"]["abstain_below"]


def test_the_rule_path_stays_available() -> None:
    answer = extractive_answer(
        "How much did evidence verification reduce unsupported claims?", [ERRORS, RESULTS], selector=None
    )
    assert answer.sufficient
    assert len(answer.citations) >= 1


def test_the_cli_says_whether_the_answer_answers_and_how_sure_it_is() -> None:
    from lit3r.cli.agent import assurance_line

    answer = extractive_answer("How much did evidence verification reduce unsupported claims?", [ERRORS, RESULTS])
    assert answer.answers_question is not None and answer.confidence is not None
    line = assurance_line(answer)
    assert line.endswith(f"(confidence {answer.confidence:.2f})")
    assert line.startswith("answers the question" if answer.answers_question else "may not answer the question")
    assert assurance_line(answer.model_copy(update={"answers_question": None, "confidence": None})) == ""
    closed = answer.model_copy(update={"answers_question": True, "unmentioned": ["MFCC", "LDA"]})
    assert assurance_line(closed).endswith("; no paper read mentions MFCC, LDA")


def test_the_cli_says_which_names_an_abstention_rests_on(capsys) -> None:
    from lit3r.answers import insufficient_answer
    from lit3r.cli.agent import print_answer

    abstained = insufficient_answer("Which optimizer was used to train AlphaGo?")
    print_answer(abstained.model_copy(update={"unmentioned": ["AlphaGo"]}))
    assert "no paper read mentions AlphaGo" in capsys.readouterr().out
    print_answer(abstained)
    assert "no paper read mentions" not in capsys.readouterr().out
