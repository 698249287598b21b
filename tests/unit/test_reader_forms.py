"""The offline reader's answer forms: Yes/No from polar questions, numbers, the shortest quoted span.

Every expected value below is worked out by hand from the rule it tests (see each module's docstring).
"""

from __future__ import annotations

import re

import pytest

from lit3r.answers import repair_citations, validate_answer
from lit3r.answers.question import (
    answer_form,
    asked_measure,
    asked_qualifier,
    asks_time,
    implicit_options,
    is_negated,
)
from lit3r.grounding.claims import split_claims
from lit3r.grounding.judges import ExactJudge
from lit3r.grounding.verify import verify_answer
from lit3r.models import Answer, Chunk, Locator
from lit3r.reading import extractive_answer
from lit3r.reading.extractive import AUTO_SHAPED
from lit3r.reading.polarity import cue_spans, negation_cues, yes_or_no
from lit3r.reading.scoring import query_terms
from lit3r.reading.spans import answer_span, clauses, covering_span, number_span


def chunk(cid: str, text: str, type: str = "text") -> Chunk:
    return Chunk(id=cid, paper_id="toy", type=type, text=text, locator=Locator(section="4 Experiments", paragraph=3))


DATA = chunk(
    "toy::c1",
    "We introduce ToyQA, a benchmark of 1,240 questions over 3,100 papers. "
    "We use the Yelp Challenge dataset BIBREF2 for our fake review generation. "
    "The reader does not use pretrained embeddings. "
    "Our baseline is a bidirectional LSTM (BiLSTM) with attention.",
)
RESULTS = chunk(
    "toy::c2",
    "Of the 1,240 questions, 149 are unanswerable and 12% need a table. "
    "The model reaches an F1 of 61.2 on the test set; it was trained for 3 epochs.",
)
LOOKUP = {c.id: c for c in (DATA, RESULTS)}.get


def verified(answer: Answer, *extra: Chunk) -> Answer:
    """The answer after the agent's own checks: citation repair, then claim verification with the exact judge."""
    lookup = {c.id: c for c in (DATA, RESULTS, *extra)}.get
    repaired = repair_citations(answer, lookup)
    checked, _ = verify_answer(repaired, lambda cid: lookup(cid).text, ExactJudge())
    return checked


# --- the form of a question ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "form"),
    [
        ("Do they use pretrained embeddings?", "boolean"),
        ("Is the dataset balanced?", "boolean"),
        ("Did the authors report macro F1?", "boolean"),
        ("Can the model handle code-switching?", "boolean"),
        ("Doesn't the model overfit?", "boolean"),
        ("In the experiments, do they use BERT?", "boolean"),
        ("Is the reader a BiLSTM or a Transformer?", "span"),  # alternatives: choose, not yes/no
        ("How many questions does ToyQA contain?", "quantity"),
        ("By how much does the model beat the baseline?", "quantity"),
        ("What is the size of the dataset?", "quantity"),
        ("What percentage of questions is unanswerable?", "quantity"),
        ("What recall at 10 did the dense encoder reach on the test set?", "quantity"),  # a measure's value
        ("What is the ROUGE-L score of the baseline?", "quantity"),
        ("What precision-recall tradeoff do they pick?", "span"),  # names measures, asks for no value
        ("What value of k does the fusion use?", "quantity"),
        ("What learning rate was used?", "quantity"),  # a qualified rate
        ("What does size 0 mean for the error rate?", "span"),  # asks what it means, not a size
        ("Which fusion method reached the highest recall at 10?", "span"),
        ("What dataset do they use?", "span"),
        ("Which baseline do they compare to?", "span"),
        ("In which language are the tweets?", "span"),
        ("Who annotated the data?", "span"),
        ("How do they train the reader?", "sentence"),
        ("Why does PRF help?", "sentence"),
        ("Describe the annotation process.", "sentence"),
        ("", "sentence"),
    ],
)
def test_answer_form(question: str, form: str) -> None:
    assert answer_form(question) == form


def test_the_measure_and_the_time_a_question_asks_for() -> None:
    assert asked_measure("What recall at 10 did the dense encoder reach?") == "recall"
    assert asked_measure("what was their accuracy result?") == "accuracy"
    assert asked_measure("What is their F1-score on SQuAD?") == asked_measure("What is the F-measure?") == "f1"
    assert asked_measure("What is the ROUGE-L score?") == "rouge" and asked_measure("What dataset is used?") is None
    assert asks_time("When was the corpus collected?") and asks_time("In which year was BERT released?")
    assert not asks_time("When the baseline fails, does the reranker help?") and not asks_time("What is it?")
    assert asked_qualifier("What learning rate was used?") == "learning"
    assert asked_qualifier("What is the atomic number of gold?") == "atomic"
    assert asked_qualifier("What is the average number of speakers?") is None  # qualifies any number
    assert asked_qualifier("What does size 0 mean?") is None


def test_negated_questions_and_implicit_options() -> None:
    assert is_negated("Don't they use BERT?") and is_negated("Is it not trained on English?")
    assert not is_negated("Do they use BERT?") and not is_negated("Do they compare models that do not use BERT?")
    assert implicit_options("Do they use BERT?") == ("Yes", "No")
    assert implicit_options("What do they use?") == ()


# --- yes or no ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "cues"),
    [
        ("The reader does not use pretrained embeddings.", ["not"]),
        ("We didn't evaluate on German, and never on French.", ["didn't", "never"]),
        ("The corpus lacks speaker labels.", ["lacks"]),
        ("We use not only BERT but also ELMo.", []),  # "not only" does not negate
        ("Sentences no longer than 40 words are kept.", []),
        ("We use BERT.", []),
    ],
)
def test_negation_cues(sentence: str, cues: list[str]) -> None:
    assert negation_cues(sentence) == cues


@pytest.mark.parametrize(
    ("question", "sentence", "expected"),
    [
        ("Do they use BERT?", "We use BERT as the encoder.", "Yes"),
        ("Do they use BERT?", "We do not use BERT.", "No"),
        ("Don't they use BERT?", "We do not use BERT.", "Yes"),  # both negated: it agrees with the question
        ("Don't they use BERT?", "We use BERT.", "No"),
        # a contrastive cue denies only what follows it
        ("Do they fuse rankings?", "Hybrid systems fuse rankings rather than scores.", "Yes"),
        ("Do they fuse scores?", "Hybrid systems fuse rankings rather than scores.", "No"),
        ("Do they use ELMo?", "We use BERT instead of ELMo.", "No"),
        ("Do they use BERT?", "We use BERT instead of ELMo.", "Yes"),
        ("Do they use BERT?", "BERT was not used.", "No"),  # a cue after the term still negates
        # the object of "without" ends at punctuation: what follows the comma is not denied
        (
            "Does evidence verification reduce unsupported claims?",
            "Verification alone, without further rounds, halves the rate of unsupported claims.",
            "Yes",
        ),
        ("Do they use labelled data?", "We train without any labelled data, as in earlier work.", "No"),
        ("Do they fine-tune on the target task?", "It performs well without fine-tuning on the target task.", "No"),
    ],
)
def test_yes_or_no(question: str, sentence: str, expected: str) -> None:
    assert yes_or_no(question, sentence) == expected


def test_yes_no_answer_quotes_the_deciding_words_and_passes_every_check() -> None:
    answer = extractive_answer("Does the reader use pretrained embeddings?", [DATA, RESULTS])
    sentence = "The reader does not use pretrained embeddings."
    # The deciding clause (here the whole sentence: no clause boundary), which reads alone.
    words = sentence
    assert (answer.text, answer.option) == (f"No — {words} [1]", "No")
    assert [(c.chunk_id, c.quote) for c in answer.citations] == [(DATA.id, sentence)]
    assert validate_answer(answer, LOOKUP) == []  # "No" is one of the question's implicit options
    # The claim splitter leaves the "No — " out, so the claim is the quote, and the exact judge keeps it.
    assert [(c.text, c.citations) for c in split_claims(answer)] == [(words, (1,))]
    checked = verified(answer)
    assert (checked.text, checked.supported_fraction) == (answer.text, 1.0)
    affirmative = extractive_answer("Is the baseline a bidirectional LSTM?", [DATA])
    assert affirmative.option == "Yes"
    assert affirmative.text == "Yes — Our baseline is a bidirectional LSTM (BiLSTM) with attention. [1]"
    assert affirmative.citations[0].quote == "Our baseline is a bidirectional LSTM (BiLSTM) with attention."


def test_yes_no_reads_the_clause_about_the_question() -> None:
    mixed = chunk("toy::c4", "In all experiments we use BERT as the encoder, but not for the French data.")
    answer = extractive_answer("Do they use BERT?", [mixed])
    # ", but" opens another clause; the negation there is about French, not about using BERT.
    assert (answer.text, answer.option) == ("Yes — In all experiments we use BERT as the encoder [1]", "Yes")
    assert verified(answer, mixed).supported_fraction == 1.0
    french = extractive_answer("Do they use BERT for French?", [mixed])
    assert french.option == "Yes"  # "BERT" and "French" sit in different clauses; the first with most terms wins


def test_a_yes_no_answer_can_quote_the_window_of_its_clause() -> None:
    from lit3r.reading import forms

    shipped = forms.POLAR_QUOTE
    try:
        forms.POLAR_QUOTE = "window"  # the shortest stretch holding the question's terms and the negation cue
        answer = extractive_answer("Does the reader use pretrained embeddings?", [DATA, RESULTS])
        assert answer.text == "No — reader does not use pretrained embeddings [1]"
    finally:
        forms.POLAR_QUOTE = shipped


def test_covering_span() -> None:
    text = "In all experiments we use the BERT encoder, and BERT is fine-tuned."
    terms = query_terms("Do they use BERT?")
    assert text[slice(*covering_span(text, (0, len(text)), terms))] == "use the BERT"
    negated = "We did not use BERT."
    cues = cue_spans(negated)
    assert negated[slice(*covering_span(negated, (0, len(negated)), terms, keep=cues))] == "not use BERT"
    assert covering_span("Nothing relevant.", (0, 17), terms) is None


def test_body_before_abstract() -> None:
    abstract = Chunk(
        id="toy::c0",
        paper_id="toy",
        type="title_abstract",
        text="ToyQA\n\nWe introduce ToyQA, a dataset of questions.",
        locator=Locator(),
    )
    body = chunk("toy::c5", "The ToyQA dataset has 1,240 questions from 3,100 papers.")
    question = "What dataset do they introduce?"
    # The abstract shares more of the question's words, but the body matches too: the body is quoted.
    assert extractive_answer(
        question, [abstract, body], form="sentence", prefer_body=False, min_coverage=0.0
    ).citations[0].chunk_id == (abstract.id)
    assert (
        extractive_answer(question, [abstract, body], form="sentence", min_coverage=0.0).citations[0].chunk_id
        == body.id
    )
    # When only the abstract matches, it answers.
    assert extractive_answer(question, [abstract, RESULTS], form="sentence").citations[0].chunk_id == abstract.id


def test_yes_no_options_only_for_polar_questions() -> None:
    answer = extractive_answer("Does the reader use pretrained embeddings?", [DATA])
    moved = answer.model_copy(update={"question": "What does the reader use?"})
    assert [p.split(":")[0] for p in validate_answer(moved, LOOKUP)] == ["invalid-option"]
    maybe = answer.model_copy(update={"option": "Maybe", "text": answer.text.replace("No", "Maybe", 1)})
    assert [p.split(":")[0] for p in validate_answer(maybe, LOOKUP)] == ["invalid-option"]


# --- spans ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "sentence", "expected"),
    [
        # "Our", "is", "a" are function words, "baseline" is the question's: cut from the left.
        ("What is the baseline?", "Our baseline is a bidirectional LSTM (BiLSTM) with attention.", None),
        # "dataset", "use", "fake", "review", "generation" are the question's; BIBREF2 is a placeholder.
        (
            "Which dataset do they use for fake review generation?",
            "We use the Yelp Challenge dataset BIBREF2 for our fake review generation.",
            "Yelp Challenge",
        ),
        # Plain commas keep a list together.
        ("What datasets do they use?", "We use SNLI, MultiNLI and SciTail datasets.", "SNLI, MultiNLI and SciTail"),
        # ", which" opens a clause: the clause with the question's terms is kept.
        (
            "What encoder do they use?",
            "The encoder is a GRU, which was chosen after pilot runs on held-out data.",
            "GRU",
        ),
        # Nothing new: the sentence only restates the question.
        ("What baseline do they use?", "They use a baseline.", ""),
    ],
)
def test_answer_span(question: str, sentence: str, expected: str | None) -> None:
    expected = "bidirectional LSTM (BiLSTM) with attention" if expected is None else expected
    span = answer_span(sentence, (0, len(sentence)), query_terms(question))
    assert (sentence[slice(*span)] if span else "") == expected


def test_clauses() -> None:
    text = "We train on A; the test set is B: C, which is new, and D — a subset."
    assert [text[s:e] for s, e in clauses(text, 0, len(text))] == [
        "We train on A",
        "the test set is B",
        "C",
        "which is new, and D",
        "a subset.",
    ]


BENCHMARK = "A benchmark of 1,240 questions over 3,100 papers."


@pytest.mark.parametrize(
    ("question", "sentence", "expected"),
    [
        ("How many questions does ToyQA contain?", BENCHMARK, "1,240 questions"),
        ("How many papers does ToyQA cover?", BENCHMARK, "3,100 papers"),
        ("What percentage needs a table?", "Of 1,240 questions, 149 are unanswerable and 12% need a table.", "12%"),
        ("How big is the seed lexicon?", "It has 15 positive words and 15 negative words.", "15 positive words"),
        ("How many epochs?", "Training took long.", None),
    ],
)
def test_number_span(question: str, sentence: str, expected: str | None) -> None:
    span = number_span(sentence, (0, len(sentence)), question, query_terms(question))
    assert (sentence[slice(*span)] if span else None) == expected


@pytest.mark.parametrize(
    ("question", "text", "quote"),
    [
        (
            "How many questions are unanswerable?",
            "149",
            "Of the 1,240 questions, 149 are unanswerable and 12% need a table.",
        ),
        ("What is the baseline?", "bidirectional LSTM (BiLSTM) with attention", DATA.text.split(". ")[-1]),
        (
            "What F1 does the model reach on the test set?",
            "61.2",
            "The model reaches an F1 of 61.2 on the test set; it was trained for 3 epochs.",
        ),
    ],
)
def test_span_answers_quote_the_sentence_and_survive_verification(question: str, text: str, quote: str) -> None:
    form = answer_form(question)
    assert form in ("quantity", "span")
    answer = extractive_answer(question, [DATA, RESULTS], form=form)
    assert answer.text == f"{text} [1]" and answer.option is None
    assert len(answer.citations) == 1 and answer.citations[0].quote == quote
    assert validate_answer(answer, LOOKUP) == []
    checked = verified(answer)
    assert (checked.text, checked.supported_fraction, checked.sufficient) == (answer.text, 1.0, True)


def test_no_span_falls_back_to_the_sentence() -> None:
    restating = chunk("toy::c3", "They use a baseline.")
    answer = extractive_answer("What baseline do they use?", [restating], form="span")
    assert answer.text == "They use a baseline. [1]"


def test_auto_shapes_yes_no_and_quotes_sentences_otherwise() -> None:
    # Measured on QASPER: Yes/No pays, numbers and short spans do not (AUTO_SHAPED), so "auto" quotes sentences.
    assert AUTO_SHAPED == {"boolean"}
    # (a question asking which named things quotes the names: tests/unit/test_named.py)
    for question in ("How do they build the benchmark?", "Why is the reader used?", "How many questions are there?"):
        auto = extractive_answer(question, [DATA, RESULTS])
        assert auto == extractive_answer(question, [DATA, RESULTS], form="sentence")
        assert re.search(r"\. \[\d\]$", auto.text) and auto.option is None
    assert extractive_answer("Is the baseline a bidirectional LSTM?", [DATA]).option == "Yes"


def test_sentence_form_and_explicit_forms() -> None:
    question = "How do they build the benchmark?"
    assert extractive_answer(question, [DATA]) == extractive_answer(question, [DATA], form="sentence")
    forced = extractive_answer("ToyQA benchmark questions", [DATA], form="quantity")
    assert forced.text == "1,240 questions [1]"
