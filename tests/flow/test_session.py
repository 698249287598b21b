"""The session: one retrieval path for ``ask`` and the evaluations (the parity test), runs isolated from each other
when a session is shared by threads, turns of one thread serialised, and the per-run pieces it builds."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from lit3r.app.session import Session
from lit3r.evals.calibrate import best_scores
from lit3r.evals.qasper import QasperQuestion
from lit3r.evals.retrieval import make_runner
from lit3r.llm.errors import LLMConfigError
from lit3r.models import TraceEvent
from lit3r.retrieval import fusion
from lit3r.retrieval.rerankers.llm import LLMPointwiseReranker

from fakes.agent import assert_grounded
from fakes.chat import FakeToolCallingModel
from fakes.corpus import QUESTION
from fakes.index import MemoryIndex

QUESTIONS = [
    QUESTION,
    "Which paper uses molecule graph message passing?",
    "How are reciprocal rank fusion runs combined?",
    "Which work measures bibliographic coupling with jaccard over cited papers?",
]


@pytest.fixture(scope="module")
def index(memory_index: MemoryIndex) -> MemoryIndex:
    return memory_index


@pytest.fixture
def session(index: MemoryIndex) -> Session:
    settings = index.settings.model_copy(update={"reranker": "lexical"})
    with Session(settings, index=index) as opened:
        yield opened


def asked(session: Session, question: str, allowed: list[str] | None = None) -> tuple[list[TraceEvent], object]:
    """``session.ask``'s answer and every event its listener saw."""
    events: list[TraceEvent] = []
    answer = session.ask(question, allowed_papers=allowed, on_event=events.append)
    return events, answer


def retrieval_of(events: list[TraceEvent]) -> tuple[dict[str, float], list[tuple[str, float]], float | None]:
    """The pool (each subquery's share merged by max), final papers and best reranker score an answer run used."""
    searches = [e.data for e in events if e.type == "ranking" and e.name == "retrieve_subquery"]
    pool: dict[str, float] = {}
    for search in searches:
        pool = fusion.merge_pool(pool, [(c, s) for c, s in search["pool"]])
    (expansion,) = [e.data for e in events if e.type == "ranking" and e.name == "expand_neighbors"]
    scores = [s["best_reranker_score"] for s in searches if s["best_reranker_score"] is not None]
    return pool, [tuple(p) for p in expansion["final"]], max(scores) if scores else None


@pytest.mark.parametrize("in_paper", [False, True])
def test_the_retrieval_evaluation_runs_exactly_what_ask_runs(session: Session, in_paper: bool) -> None:
    runner = make_runner("lit3r", session)
    for question in QUESTIONS:
        allowed = ["sparse"] if in_paper else None
        events, answer = asked(session, question, allowed)
        pool, final, best = retrieval_of(events)
        retrieved = session.retrieve(question, allowed_papers=allowed)
        assert dict(retrieved.pool) == pytest.approx(pool) and retrieved.final_papers == final
        assert retrieved.best_reranker_score == best and best is not None
        evaluated = runner(question, allowed)
        assert evaluated.papers == [p for p, _s in final] == answer.candidate_papers
        assert evaluated.chunks == [c for c, _s in retrieved.pool]
        assert evaluated.stages and {"sweep", "rerank", "ranking_a", "fuse"} <= set(evaluated.stages)
        [sample] = best_scores(session, [QasperQuestion(id="q", paper_id="sparse", text=question)], in_paper=in_paper)
        assert sample.best_score == best  # the gate is calibrated on the same scores it is applied to


def test_a_shared_session_answers_concurrent_questions_as_it_answers_them_one_by_one(session, index) -> None:
    alone = [session.ask(q) for q in QUESTIONS]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(session.ask, QUESTIONS * 2))
    for answer, expected in zip(together, alone * 2, strict=True):
        assert (answer.text, answer.citations, answer.candidate_papers) == (
            expected.text,
            expected.citations,
            expected.candidate_papers,
        )
        assert_grounded(answer, index)
    assert len({a.trace_path for a in together}) == len(together)  # one trace per run


def test_turns_of_one_thread_are_serialised_and_keep_their_order(session) -> None:
    thread = session.thread("serial")
    with ThreadPoolExecutor(max_workers=3) as pool:
        list(pool.map(thread.ask, QUESTIONS[:3]))
    turns = thread.history()
    assert sorted(t.question for t in turns) == sorted(QUESTIONS[:3]) and len(turns) == 3
    numbers = [n for t in turns for n in t.citations]
    assert len(numbers) == len(set(numbers))  # stable numbers: no two turns reused a number for different chunks


def test_each_run_gets_its_own_recorder_budget_and_llm_reranker(index) -> None:
    settings = index.settings.model_copy(update={"reranker": "llm"})
    with pytest.raises(LLMConfigError, match="reranker 'llm' needs a chat model"):
        Session(settings, index=index)
    with Session(settings, index=index, chat_model=FakeToolCallingModel()) as session:
        first, second = session.context(), session.context()
    assert isinstance(first.tools.reranker, LLMPointwiseReranker)
    assert first.tools.reranker is not second.tools.reranker
    assert first.tools.reranker.llm.budget is first.budget and first.recorder is not second.recorder
