"""The verdict of yes / no / maybe questions from the evidence (lit3r.reading.verdict) and its use by the reader."""

from __future__ import annotations

import numpy as np

from lit3r.models import Chunk
from lit3r.reading import extractive_answer
from lit3r.reading.verdict import feature_names, features, load_model, polar_options


def chunk(text: str) -> Chunk:
    return Chunk(id="p::c0000", paper_id="p", type="text", text=text)


NO_EFFECT = chunk(
    "We randomised 240 patients to aspirin or placebo. The rate of stroke did not differ between the groups "
    "(12% vs 13%, p = 0.61). Aspirin was not associated with fewer strokes."
)
EFFECT = chunk(
    "We randomised 240 patients to aspirin or placebo. Aspirin significantly reduced the rate of stroke "
    "(4% vs 13%, p < 0.001). Aspirin was independently associated with fewer strokes."
)


def test_verdict_options_are_recognised_and_word_options_are_not() -> None:
    assert polar_options(["yes", "no", "maybe"]) == {"yes": "yes", "no": "no", "maybe": "maybe"}
    assert polar_options(["True", "False"]) == {"True": "yes", "False": "no"}
    assert polar_options(["BERT", "ELMo"]) is None
    assert polar_options(["yes"]) is None  # one verdict is no choice


def test_packaged_model_loads_with_the_current_features() -> None:
    model = load_model()
    assert model.names == feature_names()
    assert set(model.classes) == {"yes", "no", "maybe"}
    probabilities = model.probabilities(features("Does it work?", ["It works."], [1.0], 1.0))
    assert abs(sum(probabilities.values()) - 1.0) < 1e-9


def test_no_effect_evidence_gets_no_and_effect_evidence_gets_yes() -> None:
    question = "Does aspirin reduce the rate of stroke?"
    no = extractive_answer(question, [NO_EFFECT], options=["yes", "no", "maybe"])
    yes = extractive_answer(question, [EFFECT], options=["yes", "no", "maybe"])
    assert (no.option, yes.option) == ("no", "yes")
    assert no.sufficient and yes.sufficient and no.answers_question and yes.answers_question
    assert 0.0 < no.confidence <= 1.0 and 0.0 < yes.confidence <= 1.0
    assert no.text.startswith("no — ") and no.citations[0].quote in NO_EFFECT.text


def test_true_false_options_are_chosen_from_the_evidence_not_abstained() -> None:
    answer = extractive_answer("Is it true that aspirin reduces stroke?", [NO_EFFECT], options=["true", "false"])
    assert answer.sufficient and answer.option == "false"


def test_off_topic_evidence_gives_no_verdict() -> None:
    answer = extractive_answer("What is the boiling point of nitrogen?", [EFFECT], options=["yes", "no"])
    assert not answer.sufficient and answer.answers_question is False


def test_features_have_one_value_per_name() -> None:
    row = features("Does X help?", ["X helps significantly.", "No difference was seen."], [2.0, 1.0], 0.5)
    assert row.shape == (len(feature_names()),) and np.isfinite(row).all()
