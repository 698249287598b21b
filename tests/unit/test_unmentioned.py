"""A yes/no question about a technical thing no paper read mentions is answered "No" (lit3r.reading.unmentioned).

The expected words follow from the module's two tests, worked out by hand: a word is technical when general English
uses it less than once per million words, and mentioned when its stems are the papers' terms or its letters (or
stem) open a word of their text, hyphens and case aside.
"""

from __future__ import annotations

import pytest

from lit3r.answers import validate_answer
from lit3r.grounding.judges import ExactJudge
from lit3r.grounding.verify import verify_answer
from lit3r.models import Chunk, Locator
from lit3r.reading.unmentioned import (
    capitalised_names,
    closed_world_answer,
    proper_name,
    technical,
    unmentioned_answer,
    unmentioned_words,
    unnamed,
)


def chunk(cid: str, text: str) -> Chunk:
    return Chunk(id=cid, paper_id="toy", type="text", text=text, locator=Locator(section="3 Data", paragraph=1))


ANNOTATION = chunk(
    "toy::c1",
    "The dataset was annotated by two trained linguists. Disagreements were resolved by a third annotator. "
    "We report the agreement of the two annotators.",
)
FEATURES = chunk("toy::c2", "Our acoustic model reads log-Mel filterbank features with pre-trained encoders.")
PAPER = [ANNOTATION, FEATURES]


@pytest.mark.parametrize("word", ["crowdsourcing", "MFCC", "LDA", "fastText", "pretrained", "subword"])
def test_a_word_rarer_than_once_per_million_words_is_technical(word: str) -> None:
    assert technical(word)


@pytest.mark.parametrize("word", ["hurt", "region", "claim", "platform", "dataset", "English", "outperform"])
def test_a_word_general_english_uses_is_not(word: str) -> None:
    assert not technical(word)


def test_the_technical_words_no_chunk_mentions_are_named() -> None:
    assert unmentioned_words("Did they use crowdsourcing to annotate the dataset?", PAPER) == ["crowdsourcing"]
    assert unmentioned_words("Does their model use MFCC or LDA features?", PAPER) == []  # "or": a choice, not yes/no
    assert unmentioned_words("Does their model use MFCC features?", PAPER) == ["MFCC"]
    # a common word the paper does not use is not evidence of absence: it may say it otherwise
    assert unmentioned_words("Does their annotation hurt the agreement?", PAPER) == []


def test_a_word_written_with_a_hyphen_a_plural_or_another_ending_is_mentioned() -> None:
    assert unmentioned_words("Do they use pretrained encoders?", PAPER) == []  # "pre-trained"
    hyphenated = [chunk("toy::c3", "Labels were crowd-sourced from volunteers.")]
    assert unmentioned_words("Did they use crowdsourcing?", hyphenated) == []  # the stem opens "crowdsourced"
    plural = [chunk("toy::c4", "We compute MFCCs over 25 ms windows.")]
    assert unmentioned_words("Does their model use MFCC features?", plural) == []


@pytest.mark.parametrize("word", ["ColBERT", "MARCO", "LoRA", "GPT-4"])
def test_a_word_spelt_as_a_coined_name_is_technical_whatever_its_frequency(word: str) -> None:
    assert technical(word)


def test_the_words_of_a_multi_word_name_are_each_read() -> None:
    question = "Did they use Amazon Mechanical Turk to collect the labels?"
    assert unmentioned_words(question, PAPER) == ["Amazon", "Mechanical", "Turk"]
    assert unmentioned_words("Is English a pro-drop language in their data?", PAPER) == []  # one capital: no name


def test_a_misspelt_word_names_the_word_of_the_paper_it_is_a_letter_or_two_from() -> None:
    consistent = [chunk("toy::c7", "The tuned model consistently outperforms the baselines.")]
    assert unmentioned_words("Do they consistenly outperform the baselines?", consistent) == []
    # "contiguous" is three letters from "discontiguous": a different word, not a typo
    contiguous = [chunk("toy::c8", "Entities are contiguous spans of tokens.")]
    assert unmentioned_words("Does their dataset include discontiguous entities?", contiguous) == ["discontiguous"]


def test_only_a_positive_yes_no_question_about_the_authors_work_over_some_chunks_is_read_for_absence() -> None:
    assert unmentioned_words("Which features does the MFCC baseline use?", PAPER) == []  # not yes/no
    assert unmentioned_words("Don't they use MFCC features?", PAPER) == []  # negated: left to the reader
    assert unmentioned_words("Does their model use MFCC features?", []) == []
    # a question about the world, not about what the authors did: a paper may state a fact in other words
    assert unmentioned_words("Is halofantrine ototoxic?", [chunk("toy::c6", "Halofantrine caused hearing loss.")]) == []
    assert unmentioned_words("Is the model ototoxic?", PAPER) == []
    assert unmentioned_words("Is this model ototoxic?", PAPER) == ["ototoxic"]


def test_the_closed_world_answer_says_no_and_quotes_what_the_paper_says_instead() -> None:
    question = "Did they use crowdsourcing to annotate the dataset?"
    answer = closed_world_answer(question, PAPER, ["crowdsourcing"])
    assert answer is not None and answer.sufficient
    assert answer.option == "No" and answer.text.startswith("No — ") and answer.unmentioned == ["crowdsourcing"]
    assert answer.answers_question is True
    assert validate_answer(answer, {c.id: c for c in PAPER}.get) == []
    assert answer.citations[0].chunk_id == ANNOTATION.id and answer.citations[0].quote in ANNOTATION.text
    # the whole sentence its citation quotes: what the paper says instead
    assert answer.text == "No — The dataset was annotated by two trained linguists. [1]"
    checked, verdicts = verify_answer(answer, {c.id: c.text for c in PAPER}.get, ExactJudge())
    assert checked.text == answer.text and [v["supported"] for v in verdicts] == [True]


def test_without_a_sentence_to_quote_there_is_no_closed_world_answer() -> None:
    unrelated = [chunk("toy::c5", "Convolution kernels slide over image pixels.")]
    assert closed_world_answer("Did they use crowdsourcing to annotate the dataset?", unrelated, ["x"]) is None


def test_a_closed_world_no_is_made_only_of_a_yes_no_answer_citing_one_sentence() -> None:
    polar = closed_world_answer("Did they use crowdsourcing to annotate the dataset?", PAPER, ["crowdsourcing"])
    assert polar is not None
    twice = polar.model_copy(
        update={"citations": [*polar.citations, polar.citations[0].model_copy(update={"number": 2})]}
    )
    with pytest.raises(ValueError, match="cites one sentence, not 2"):
        unmentioned_answer(twice, ["crowdsourcing"])


@pytest.mark.parametrize("word", ["AlphaGo", "fastText", "ColBERT", "SQuAD", "OpenAI", "GPT-3", "WMT14", "COVID-19"])
def test_a_word_spelt_as_the_name_of_one_thing_is_a_proper_name(word: str) -> None:
    assert proper_name(word)


@pytest.mark.parametrize(
    "word", ["LSTM", "NLI", "SOTA", "GPUs", "F1", "L2", "dataset", "Transformer", "k1", "BERT-based", "T1-weighted"]
)
def test_an_acronym_a_measure_or_a_plain_word_is_not(word: str) -> None:
    assert not proper_name(word)


def test_a_name_is_a_run_of_capitalised_words_past_the_first_unless_the_question_is_in_title_case() -> None:
    assert capitalised_names("What dataset was used to train Stable Diffusion?") == [["Stable", "Diffusion"]]
    question = "Did they use Amazon Mechanical Turk to collect data?"
    assert capitalised_names(question) == [["Amazon", "Mechanical", "Turk"]]
    assert capitalised_names("What is the tallest building in Dubai?") == [["Dubai"]]
    assert capitalised_names("Is English a pro-drop language in the WMT14 data?") == [["English"]]  # no acronym
    assert capitalised_names("Stable diffusion uses which dataset?") == []  # the first word's capital marks no name
    assert capitalised_names("Which Retrieval Method Performs Best On Long Papers?") == []  # title case
    # a word after a colon, a question mark or a dash opens a sentence: its capital marks no name
    assert capitalised_names(
        "Activity of antiseptic solutions with interfering substances: Improvement of the European Standard?"
    ) == [["European", "Standard"]]
    assert capitalised_names("A test for TB in Central India - Will it work?") == [["Central", "India"]]


def test_a_question_naming_what_no_paper_read_mentions_lists_the_names() -> None:
    assert unnamed("Which optimizer was used to train AlphaGo?", PAPER) == ["AlphaGo"]
    assert unnamed("What dataset was used to train Stable Diffusion?", PAPER) == ["Stable Diffusion"]
    assert unnamed("Which encoders read log-Mel filterbank features?", PAPER) == []  # "log-Mel": the paper's word
    assert unnamed("Which LSTM encoder reads the features?", PAPER) == []  # an acronym is no name
    assert unnamed("Which optimizer was used to train AlphaGo?", []) == []
    assert unnamed("Which optimizer trains AlphaGo Zero?", PAPER) == ["AlphaGo Zero"]  # once, as the run
    named = [chunk("toy::c3", "We compare with alpha-go and train on the Stable Diffusion data.")]
    assert unnamed("Which optimizer was used to train AlphaGo on Stable Diffusion?", named) == []
    assert unnamed("Which optimizer was used to train AlphaGo?", PAPER, ["Mastering AlphaGo with Adam"]) == []  # title
    kit = [chunk("toy::c5", "Uveal melanoma cells express c-Kit.")]
    assert unnamed("Is c-Kit-dependent growth of melanoma cells a target?", kit) == []  # "-dependent" modifies it
    misspelt = [chunk("toy::c4", "Our retriever is ColBERTv2 with late interaction.")]
    assert unnamed("How is ColBERT trained?", misspelt) == []  # its letters open the paper's word
