"""The offline reader's choice of the unit it quotes: the selector's unit model among the units the rules allow."""

from __future__ import annotations

import numpy as np

from lit3r.models import Chunk, Locator
from lit3r.reading import extractive_answer
from lit3r.reading.quotes import candidates
from lit3r.reading.scoring import lexical_scores
from lit3r.reading.selector import QUESTION_FEATURES, UNIT_FEATURES, Linear, SelectorModel, unit_features


def chunk(cid: str, text: str, section: str, *, paper: str = "hate", type: str = "text") -> Chunk:
    return Chunk(id=f"{paper}::{cid}", paper_id=paper, type=type, text=text, locator=Locator(section=section))


INTRO = chunk(
    "c0001",
    "To the best of our knowledge, we are the first to experiment with deep learning architectures for hate "
    "speech detection. Hate speech is common on social media.",
    "1 Introduction",
)
SETUP = chunk(
    "c0004",
    "The feature spaces are learned by three deep learning architectures: FastText, Convolutional Neural Networks "
    "(CNNs) and Long Short-Term Memory Networks (LSTMs). Each is trained for ten epochs.",
    "3 Experiments",
)
QUESTION = "What deep learning architectures are used?"


def preferring(feature: str, weight: float = 5.0) -> SelectorModel:
    """A selector whose unit model is a logistic of one feature."""
    width = len(UNIT_FEATURES)
    coef = np.zeros(width)
    coef[UNIT_FEATURES.index(feature)] = weight
    n = len(QUESTION_FEATURES)
    gate = Linear(np.zeros(n), np.ones(n), np.zeros(n), 0.0, True)
    return SelectorModel(Linear(np.zeros(width), np.ones(width), coef, 0.0, True), gate, 0.0, 1.01)


def test_the_packaged_unit_model_quotes_the_sentence_that_names_them_not_the_one_restating_the_question() -> None:
    lexical = extractive_answer(QUESTION, [INTRO, SETUP], chooser=None)
    assert lexical.text.startswith("To the best of our knowledge")  # the question's words, no architecture
    answer = extractive_answer(QUESTION, [INTRO, SETUP])
    assert answer.text.startswith("The feature spaces are learned by three deep learning architectures: FastText")
    assert [c.chunk_id for c in answer.citations] == ["hate::c0004"]


def test_the_unit_model_reads_the_section_and_the_unit() -> None:
    pool = candidates([INTRO, SETUP])
    rows = unit_features(QUESTION, pool, lexical_scores(QUESTION, [c.scoring_text for c in pool]))
    column = {name: rows[:, UNIT_FEATURES.index(name)].tolist() for name in UNIT_FEATURES}
    assert column["section_introduction"] == [1.0, 1.0, 0.0, 0.0]
    assert column["section_experiment"] == [0.0, 0.0, 1.0, 1.0]
    assert column["commas"][0] > 0 and column["commas"][3] == 0.0
    assert column["states_quantity"] == [0.0, 0.0, 1.0, 1.0]  # "three", "ten": quantities in words


def test_a_unit_model_that_prefers_another_unit_by_the_margin_chooses_it() -> None:
    # The names feature favours the setup's list of architectures; a flat model leaves the lexical choice.
    assert extractive_answer(QUESTION, [INTRO, SETUP], chooser=preferring("names")).citations[0].chunk_id == (
        "hate::c0004"
    )
    flat = preferring("names", weight=0.0)
    assert extractive_answer(QUESTION, [INTRO, SETUP], chooser=flat).text.startswith("To the best of our knowledge")


def test_the_unit_model_chooses_within_the_paper_the_rules_chose_and_never_a_table_row() -> None:
    other = chunk("c0009", SETUP.text, "3 Experiments", paper="other")
    answer = extractive_answer(QUESTION, [INTRO, other], chooser=preferring("names"))
    assert [c.paper_id for c in answer.citations] == ["hate"]  # the lexical best's paper
    table = chunk(
        "c0007",
        "Table 2: Deep learning architectures used.\nArchitecture | F1\nFastText | 0.72\nLSTM | 0.81",
        "3 Experiments",
        type="table",
    )
    by_rows = extractive_answer(
        "Which deep learning architectures are used, by F1?", [table, SETUP], chooser=preferring("names", -5.0)
    )
    assert (
        extractive_answer("Which deep learning architectures are used, by F1?", [table, SETUP], chooser=None).text
        == by_rows.text
    )
