"""The demo's own questions (lit3r/demo/QUESTIONS.md) on the demo home, offline: each answered with the words that
answer it, and the question the corpus cannot answer abstaining."""

from __future__ import annotations

from pathlib import Path

import pytest

from lit3r.app.session import Session
from lit3r.models import ABSTENTION
from lit3r.settings import Settings


@pytest.fixture(scope="module")
def session(demo_home: Path):
    with Session(Settings(home=demo_home)) as opened:
        yield opened


@pytest.mark.parametrize(
    ("question", "words", "paper"),
    [
        (
            "Which fusion method reached the highest paper-level recall at 10 on the LocatorQA development set?",
            ("Reciprocal rank fusion", "0.63"),
            "demo-rank-fusion",
        ),
        ("Which BM25 configuration was best?", ("section-title field", "0.52"), "demo-sparse-retrieval"),
        ("How much did evidence verification reduce unsupported claims?", ("halves",), "demo-evidence-verification"),
        (
            "What candidate budget is recommended for cross-encoder reranking, and what does it cost?",
            ("100 candidates", "at half the latency"),
            "demo-cross-encoder-rerank",
        ),
    ],
)
def test_a_demo_question_is_answered_with_the_words_that_answer_it(session, question, words, paper) -> None:
    answer = session.ask(question)
    assert answer.sufficient and all(w in answer.text for w in words), answer.text
    assert answer.citations[0].paper_id == paper


def test_the_benchmarks_size_is_answered_by_the_benchmark_paper(session) -> None:
    # The evidence-verification paper's "1,000 test questions of LocatorQA, of which 120 are unanswerable" counts
    # one split; the benchmark paper's abstract and Table 1 count all of them.
    answer = session.ask("How many questions does LocatorQA contain, and how many of them are unanswerable?")
    assert "1,240 questions" in answer.text and "Unanswerable | 29 | 120 | 149" in answer.text, answer.text
    assert {c.paper_id for c in answer.citations} == {"demo-benchmark"}


def test_the_question_that_needs_two_papers_compares_their_values(session) -> None:
    answer = session.ask("Do the sparse retrieval and rank fusion papers agree on the recall at 10 of tuned BM25?")
    assert answer.option == "Yes" and answer.text.count("0.44") == 2, answer.text
    assert [c.paper_id for c in answer.citations] == ["demo-sparse-retrieval", "demo-rank-fusion"]
    restricted = session.ask(
        "Do the sparse retrieval and rank fusion papers agree on the recall at 10 of tuned BM25?",
        allowed_papers=["demo-sparse-retrieval"],
    )
    assert {c.paper_id for c in restricted.citations} <= {"demo-sparse-retrieval"}, restricted.text


def test_the_demo_s_first_question_asked_as_yes_no_is_answered_yes(session) -> None:
    # "Verification alone, without further rounds, halves the rate of unsupported claims": "without" denies
    # "further rounds" (its object ends at the comma), not the reduction the question asks about.
    answer = session.ask("Does evidence verification reduce unsupported claims?")
    assert answer.option == "Yes" and "halves the rate of unsupported claims" in answer.text, answer.text


def test_the_question_the_demo_corpus_cannot_answer_abstains(session) -> None:
    # Every demo paper reports recall on the development set only; the sparse-retrieval paper's "0.61 recall at
    # 10" names no split, but its paper says it answers "on the development split of LocatorQA".
    answer = session.ask("What recall at 10 did the dense encoder reach on the LocatorQA test set?")
    assert not answer.sufficient and answer.text == ABSTENTION, answer.text


def test_a_table_computes_the_extreme_whichever_reader_is_configured(demo_home: Path, monkeypatch) -> None:
    """A superlative a table holds is the row with the extreme value, computed from the table's numbers: a
    language-model reader is not asked (the 1.5B local model named "BM25, tuned" and quoted a third row)."""
    from lit3r.app.traces import load_trace
    from lit3r.settings.llm import LLMSettings

    from fakes.openai_server import OpenAIServer

    for variable in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(variable, "127.0.0.1,localhost")
    with OpenAIServer() as server:  # a chat model with nothing to say: any call to it would be recorded
        llm = LLMSettings(provider="openai", base_url=server.base_url, api_key="sk-test", model="fake-model",
                          planning="offline", reader="compact", max_attempts=1, timeout_s=5.0)  # fmt: skip
        with Session(Settings(home=demo_home, llm=llm)) as opened:
            answer = opened.ask("Which BM25 configuration was best?")
        assert server.requests == []
    assert answer.text.startswith("+ section-title field | 0.52") and answer.verified_by == "exact", answer.text
    (cell,) = [c.cell for c in answer.citations]
    assert cell.row_label == "+ section-title field" and cell.column == "Recall@10" and cell.value == "0.52"
    reads = [e for e in load_trace(answer.trace_path)["events"] if e["type"] == "read"]
    assert [e["name"] for e in reads] == ["table"]


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("Which optimizer was used to train AlphaGo?", ["AlphaGo"]),
        ("What dataset was used to train Stable Diffusion?", ["Stable Diffusion"]),
        ("What is the tallest building in Dubai?", ["Dubai"]),
    ],
)
def test_a_question_naming_what_no_demo_paper_mentions_abstains_whichever_reader(
    demo_home: Path, monkeypatch, question: str, names: list[str]
) -> None:
    """The demo papers share the question's other words ("optimizer", "dataset", "train", "building"), and the
    offline reader answered each with a sentence about something else; a named thing no paper read mentions is not
    read, and a language-model reader is not asked."""
    from lit3r.app.traces import load_trace
    from lit3r.settings.llm import LLMSettings

    from fakes.openai_server import OpenAIServer

    for variable in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(variable, "127.0.0.1,localhost")
    with OpenAIServer() as server:
        llm = LLMSettings(provider="openai", base_url=server.base_url, api_key="sk-test", model="fake-model",
                          planning="offline", reader="compact", max_attempts=1, timeout_s=5.0)  # fmt: skip
        with Session(Settings(home=demo_home, llm=llm)) as opened:
            answer = opened.ask(question)
        assert server.requests == []
    assert not answer.sufficient and answer.text == ABSTENTION and answer.unmentioned == names, answer.text
    (read,) = [e for e in load_trace(answer.trace_path)["events"] if e["type"] == "read"]
    assert read["data"]["unnamed"] == names and read["data"]["papers_coverage"] >= 0.2
