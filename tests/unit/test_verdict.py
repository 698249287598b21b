"""The verdict of yes / no / maybe questions from the evidence (lit3r.reading.verdict) and its use by the reader."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lit3r.models import Chunk, Locator
from lit3r.reading import extractive_answer
from lit3r.reading.quotes import candidates
from lit3r.reading.verdict import (
    PACKAGED,
    VerdictModel,
    evidence_features,
    feature_names,
    load_model,
    polar_options,
    read_verdict,
)
from lit3r.reading.verdict_features import TAIL, TermWeights, p_values, result_units, text_fields, tokens


def chunk(text: str, ordinal: int = 0, section: str | None = None) -> Chunk:
    return Chunk(id=f"p::c{ordinal:04d}", paper_id="p", type="text", text=text, locator=Locator(section=section))


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


def test_packaged_model_loads_with_the_current_features_and_words() -> None:
    model = load_model()
    assert model.names == feature_names()
    assert model.classes == ["yes", "no", "maybe"]
    assert model.coef.shape == (3, len(feature_names())) and np.isfinite(model.coef).all()
    assert model.trained_on["questions"] == 500 and "cross_validation" in model.trained_on
    assert model.words, "the packaged model has bag-of-words parts"
    for name, part in model.words.items():
        assert name in ("question", "results")
        assert part.coef.shape == (3, len(part.weights.vocabulary)) and len(part.weights.vocabulary) > 50
    pool = candidates([EFFECT])
    row, fields, _, _ = evidence_features("Does aspirin reduce stroke?", pool, [1.0] * len(pool))
    probabilities = model.probabilities(row, fields)
    assert set(probabilities) == {"yes", "no", "maybe"} and abs(sum(probabilities.values()) - 1.0) < 1e-9


def test_the_model_file_is_refused_when_the_features_or_shapes_change() -> None:
    data = json.loads(PACKAGED.read_text(encoding="utf-8"))
    assert VerdictModel.from_dict(data).names == feature_names()
    renamed = {**data, "names": [*data["names"][:-1], "another_feature"]}
    with pytest.raises(ValueError, match="other features"):
        VerdictModel.from_dict(renamed)
    short = {**data, "coef": [row[:-1] for row in data["coef"]]}
    with pytest.raises(ValueError, match="do not match"):
        VerdictModel.from_dict(short)
    name = next(iter(data["words"]))
    fewer = {**data, "words": {**data["words"], name: {**data["words"][name], "idf": data["words"][name]["idf"][:-1]}}}
    with pytest.raises(ValueError, match="do not match"):
        VerdictModel.from_dict(fewer)


def test_a_model_survives_its_json_round_trip() -> None:
    model = load_model()
    again = VerdictModel.from_dict(json.loads(json.dumps(model.to_dict())))
    pool = candidates([NO_EFFECT])
    row, fields, _, _ = evidence_features("Does aspirin reduce stroke?", pool, [1.0, 2.0, 0.5])
    assert again.probabilities(row, fields) == pytest.approx(model.probabilities(row, fields), abs=1e-6)


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
    pool = candidates([chunk("X helps significantly (p < 0.01). No difference was seen in Y.")])
    row, fields, best, coverage = evidence_features("Does X help?", pool, [2.0, 1.0])
    assert row.shape == (len(feature_names()),) and np.isfinite(row).all()
    assert best == 0 and 0.0 < coverage <= 1.0
    assert fields == {"question": "Does X help?", "results": " ".join(c.text for c in pool)}


def test_p_values_are_read_as_numbers() -> None:
    text = "A fell (p < 0.001), B rose (P = .03); C did not change (p>0.05), nor D (p = 0.41), E p < 2 x 10-6."
    assert p_values(text) == (3, 2)
    assert p_values("no statistics here") == (0, 0)
    assert p_values("p < 0.10") == (0, 0)  # below 0.10 says neither


def test_result_units_are_the_results_section_in_document_order() -> None:
    background = chunk("Aspirin may prevent stroke. We asked whether it does.", 1, "BACKGROUND")
    methods = chunk("We randomised 240 patients.", 2, "METHODS")
    results = chunk("The rate of stroke did not differ (p = 0.61). Bleeding was rare.", 3, "RESULTS")
    found, named = result_units(candidates([results, background, methods]))  # retrieval order, not the paper's
    assert named and [c.text for c in found] == ["The rate of stroke did not differ (p = 0.61).", "Bleeding was rare."]
    unnamed = [chunk(f"Sentence {i} of the paper.", i) for i in range(5, 0, -1)]
    found, named = result_units(candidates(unnamed))
    assert not named and [c.text for c in found] == [f"Sentence {i} of the paper." for i in range(6 - TAIL, 6)]
    assert text_fields("Q?", candidates([results, methods]))["results"] == results.text


def test_term_weights_are_tf_idf_over_the_fitted_vocabulary() -> None:
    assert tokens("No difference, no effect.", 2) == ["no", "difference", "no", "effect", "no difference",
                                                      "difference no", "no effect"]  # fmt: skip
    weights = TermWeights.fit(["no difference", "no effect", "a large effect"], 1, min_df=2)
    assert weights.vocabulary == ["effect", "no"]
    vector = weights.vector("No effect at all, no.")
    assert np.linalg.norm(vector) == pytest.approx(1.0) and vector[1] > vector[0] > 0
    assert not weights.vector("unrelated words").any()


def test_the_verdict_reads_the_results_section_of_evidence_in_any_order() -> None:
    question = "Does aspirin reduce the rate of stroke?"
    background = chunk("Aspirin is thought to reduce stroke. Its effect on stroke is debated.", 1, "BACKGROUND")
    for results in (NO_EFFECT, EFFECT):
        placed = chunk(results.text, 2, "RESULTS")
        for order in ([background, placed], [placed, background]):
            pool = candidates(order)
            p = read_verdict(question, pool, [1.0] * len(pool)).probabilities
            assert max(p, key=p.get) == ("no" if results is NO_EFFECT else "yes")


def test_the_quote_for_a_verdict_is_the_result_that_shows_it_not_the_background() -> None:
    question = "Does aspirin reduce the rate of stroke in older patients?"
    aim = chunk("It is not known whether aspirin reduces the rate of stroke in older patients.", 1, "BACKGROUND")
    results = chunk(
        "Follow-up lasted two years. In older patients aspirin did not lower the rate of stroke (12% vs 13%, "
        "p = 0.61).",
        2,
        "RESULTS",
    )
    answer = extractive_answer(question, [aim, results], options=["yes", "no", "maybe"])
    assert answer.option == "no"
    assert answer.citations[0].locator.section == "RESULTS"
    assert answer.citations[0].quote.startswith("In older patients aspirin did not lower the rate of stroke")


def test_a_result_about_something_else_is_not_quoted_for_the_verdict() -> None:
    question = "Does aspirin reduce the rate of stroke in older patients?"
    aim = chunk("Aspirin did not reduce the rate of stroke in older patients.", 1, "CONCLUSIONS")
    # shares "older patients" with the question (it scores above 0) but matches it far less than half as well
    unrelated = chunk("Bleeding was rare in older patients and did not differ (p = 0.61).", 2, "RESULTS")
    answer = extractive_answer(question, [aim, unrelated], options=["yes", "no", "maybe"])
    assert answer.citations[0].locator.section == "CONCLUSIONS"


def test_the_clause_negation_features_read_negation_as_the_yes_no_rule_does() -> None:
    names = feature_names()
    question = "Does evidence verification reduce unsupported claims?"
    scoped = candidates([chunk("Verification alone, without further rounds, halves the rate of unsupported claims.")])
    denied = candidates([chunk("Verification did not reduce the rate of unsupported claims.")])
    rows = [evidence_features(question, pool, [1.0])[0] for pool in (scoped, denied)]
    at = [names.index("best_clause_negated"), names.index("results_clause_negated")]
    assert [rows[0][i] for i in at] == [0.0, 0.0]  # "without" denies further rounds, not the reduction
    assert [rows[1][i] for i in at] == [1.0, 1.0]
    answer = extractive_answer(question, [chunk(scoped[0].text, 3, "Results")], options=["yes", "no", "maybe"])
    assert answer.option == "yes", answer.text
