"""A question asking which named things is answered with the stretch of its sentence that names them
(lit3r.reading.named, lit3r.reading.extractive.named_answer)."""

from __future__ import annotations

import pytest

from lit3r.models import Chunk, Locator
from lit3r.reading.extractive import extractive_answer
from lit3r.reading.named import asks_names, names_stretch


@pytest.mark.parametrize(
    "question",
    [
        "What datasets do they use?",
        "What are the baselines?",
        "Which model performs best?",
        "What corpus is used?",
        "What evaluation metrics are used?",
    ],
)
def test_a_question_asking_which_named_things(question: str) -> None:
    assert asks_names(question)


@pytest.mark.parametrize("question", ["How many datasets do they use?", "Why does the model fail?", "Is it fast?"])
def test_a_question_asking_something_else(question: str) -> None:
    assert not asks_names(question)


def test_the_stretch_runs_from_the_first_name_to_the_last_placeholders_and_the_opening_capital_aside() -> None:
    text = "We compare against BERT BIBREF3 and the Transformer of BIBREF7 on our data."
    assert text[slice(*names_stretch(text, (0, len(text))))] == "BERT BIBREF3 and the Transformer"
    assert names_stretch("We use our own data.", (0, 20)) is None  # "We" opens the sentence: no name
    assert names_stretch("BERT", (0, 4)) is None  # the whole sentence: nothing to trim
    bracket = "Our baseline is an LSTM (BiLSTM) tagger."
    assert bracket[slice(*names_stretch(bracket, (0, len(bracket))))] == "LSTM (BiLSTM)"  # the bracket closed


def chunk(cid: str, text: str) -> Chunk:
    return Chunk(id=cid, paper_id="toy", type="text", text=text, locator=Locator(section="4 Data", paragraph=1))


def test_a_which_dataset_question_quotes_the_names_and_cites_the_sentence() -> None:
    data = chunk("toy::c1", "We use the Yelp Challenge dataset BIBREF2 for our fake review generation.")
    answer = extractive_answer("What dataset do they use for fake review generation?", [data])
    assert answer.text == "Yelp Challenge [1]"
    assert answer.citations[0].quote == "We use the Yelp Challenge dataset BIBREF2 for our fake review generation."
    other = extractive_answer("Why do they generate fake reviews?", [data])
    assert other.text.startswith("We use the Yelp Challenge dataset")  # not a names question: the sentence


def test_the_names_the_question_gives_are_not_the_answer() -> None:
    text = "To evaluate PaSa-7b in real-world scenarios, we also constructed RealScholarQuery, a dataset of queries."
    stretch = names_stretch(text, (0, len(text)), "Which datasets are used to evaluate PaSa?")
    assert text[slice(*stretch)] == "RealScholarQuery"
    lead = "We compare PaSa-7b against the following baselines:"
    assert names_stretch(lead, (0, len(lead)), "What baselines does PaSa compare against?") is None  # nothing else
    measures = "We evaluate recall using Recall@20, Recall@50, and Recall@100."
    assert measures[slice(*names_stretch(measures, (0, len(measures))))] == "Recall@20, Recall@50, and Recall@100"
