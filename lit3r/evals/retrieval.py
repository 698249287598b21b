"""Retrieval evaluation on QASPER: every configuration side by side, open-domain and within the question's paper.

Configurations:

* ``bm25``, ``dense``, ``hybrid``: chunk search (hybrid = RRF k=60 of the two), the QASPER seed's front end;
  papers ranked by their best chunk.
* ``hybrid_rerank``: the hybrid's top candidates reordered by the reranker's score.
* ``lit3r``: the agent's own retrieval, exactly the path ``lit3r ask`` runs (:meth:`lit3r.app.session.Session.retrieve`:
  the graph with the same planner, tools and settings, stopped before the reader): subqueries, paper-level
  fusion, PRF, blended rerank, pool, Relate; chunks ranked by pool score, papers by the final A/B ranking.
* ``lit3r_no_prf``, ``lit3r_no_rerank``, ``lit3r_no_relate``: the same with one stage switched off.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lit3r.app.session import Session
from lit3r.evals.metrics import QuestionResult, summarise
from lit3r.evals.qasper import QasperQuestion, evidence_chunks
from lit3r.index.corpus_index import CorpusIndex
from lit3r.models import TraceEvent
from lit3r.retrieval.fusion import best_chunk_per_paper
from lit3r.retrieval.rerankers import Reranker
from lit3r.retrieval.search import rank_chunks

CONFIGURATIONS = (
    "bm25",
    "dense",
    "hybrid",
    "hybrid_rerank",
    "lit3r",
    "lit3r_no_prf",
    "lit3r_no_rerank",
    "lit3r_no_relate",
)
ABLATIONS = {
    "lit3r": {},
    "lit3r_no_prf": {"prf": False},
    "lit3r_no_rerank": {"rerank": False},
    "lit3r_no_relate": {"relate": False},
}
DEPTH = 100


@dataclass(frozen=True)
class Retrieved:
    papers: list[str]
    chunks: list[str]
    stages: dict[str, float] | None = None
    """Milliseconds per retriever stage (Lit3R configurations only)."""


def stage_timings(events: Sequence[TraceEvent]) -> dict[str, float]:
    """Milliseconds per stage of one retrieval run of the agent, summed over rounds and subqueries.

    Stages: ``decompose``, ``hyde``, the four parts of each ``search_chunks`` retrieval (``sweep``, ``prf``,
    ``candidates``, ``rerank``), ``verify`` (the verifier's verdicts), and the three parts of the final papers
    (``ranking_a``, ``relate`` for Ranking B and ``fuse`` for the A/B fusion).
    """
    totals: dict[str, float] = {}
    for event in events:
        if event.type == "ranking" and event.name in ("retrieve_subquery", "expand_neighbors"):
            parts = event.data.get("timings_ms", {})
        elif event.type in ("decompose", "hyde"):
            parts = {event.type: event.duration_ms}
        elif event.type == "verdict":
            parts = {"verify": event.duration_ms}
        else:
            continue
        for stage, ms in parts.items():
            totals[stage] = round(totals.get(stage, 0.0) + ms, 3)
    return totals


Runner = Callable[[str, list[str] | None], Retrieved]


def make_runner(name: str, session: Session) -> Runner:
    """A function ``(question, allowed papers) -> Retrieved`` for one configuration over ``session``'s index.

    The Lit3R configurations run :meth:`Session.retrieve` of a session with the ablation's settings (sharing
    the index, reranker, chat model and gate of ``session``).
    """
    index = session.index
    if name in ("bm25", "dense", "hybrid"):
        return lambda question, allowed: _from_chunks(index, rank_chunks(index, question, name, DEPTH, allowed))
    if name == "hybrid_rerank":
        reranker = session.context().tools.reranker  # the settings' reranker ('llm': on the session's model)
        if reranker is None:
            raise ValueError("hybrid_rerank needs a reranker")
        depth = session.settings.retriever.rerank_candidates
        return lambda question, allowed: _reranked(index, reranker, question, allowed, depth)
    if name in ABLATIONS:
        ablated = ablation(session, ABLATIONS[name])

        def run(question: str, allowed: list[str] | None) -> Retrieved:
            found = ablated.retrieve(question, allowed_papers=allowed)
            chunks = [chunk_id for chunk_id, _ in found.pool]
            return Retrieved([p for p, _s in found.final_papers], chunks, stage_timings(found.events))

        return run
    raise ValueError(f"unknown configuration {name!r}; choose from {', '.join(CONFIGURATIONS)}")


def ablation(session: Session, switches: dict[str, bool]) -> Session:
    """A session like ``session`` (same index, reranker, model, gate) with retriever ``switches`` applied."""
    if not switches:
        return session
    retriever = session.settings.retriever.model_copy(update=switches)
    settings = session.settings.model_copy(update={"retriever": retriever})
    return Session(
        settings, index=session.index, reranker=session.reranker, chat_model=session.chat_model, gate=session.gate
    )


def _from_chunks(index: CorpusIndex, ranked: Sequence[tuple[str, float]]) -> Retrieved:
    chunks = [chunk_id for chunk_id, _ in ranked]
    papers = best_chunk_per_paper([(c, index.chunk_by_id[c].paper_id) for c in chunks])
    return Retrieved(papers, chunks)


def _reranked(
    index: CorpusIndex, reranker: Reranker, question: str, allowed: list[str] | None, candidates: int
) -> Retrieved:
    ranked = rank_chunks(index, question, "hybrid", max(candidates, DEPTH), allowed)[:candidates]
    texts = [index.chunk_by_id[c].text for c, _ in ranked]
    scores = reranker.score(question, texts) if texts else []
    order = sorted(range(len(ranked)), key=lambda i: (-scores[i], i))
    return _from_chunks(index, [(ranked[i][0], scores[i]) for i in order])


def evaluate(
    session: Session,
    questions: Sequence[QasperQuestion],
    configurations: Sequence[str],
    on_question: Callable[[], None] | None = None,
) -> dict[str, dict[str, dict]]:
    """``{configuration: {"open_domain": metrics, "in_paper": metrics}}`` over questions with gold evidence."""
    index = session.index
    gold = {q.id: evidence_chunks(q, index.chunks_by_paper.get(q.paper_id, [])) for q in questions}
    runners = {name: make_runner(name, session) for name in configurations}
    results: dict[str, dict[str, list[QuestionResult]]] = {n: {"open_domain": [], "in_paper": []} for n in runners}
    for question in questions:
        for name, runner in runners.items():
            for setting, allowed in (("open_domain", None), ("in_paper", [question.paper_id])):
                start = time.perf_counter()
                retrieved = runner(question.text, allowed)
                latency = (time.perf_counter() - start) * 1000
                results[name][setting].append(
                    QuestionResult(
                        question.id,
                        retrieved.papers,
                        retrieved.chunks,
                        question.paper_id,
                        gold[question.id],
                        latency,
                        retrieved.stages,
                    )
                )
        if on_question:
            on_question()
    return {
        name: {setting: summarise(rs) for setting, rs in by_setting.items()} for name, by_setting in results.items()
    }
