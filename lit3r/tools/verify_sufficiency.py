"""``verify_sufficiency``: judge whether the pool already holds enough evidence to answer the question."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from lit3r.retrieval.planning import Verdict, verification_evidence
from lit3r.tools.context import ToolContext


@dataclass(frozen=True)
class Verification:
    """The verdict, and the papers it named that exist (and are allowed): the next Ranking B seeds."""

    verdict: Verdict
    named: list[str]


def verify_sufficiency(
    tools: ToolContext,
    question: str,
    pool: Mapping[str, float],
    best_score: float | None,
    allowed_papers: Collection[str] | None = None,
) -> Verification:
    """The verifier's verdict on the top pool papers (a ``verdict`` event with what it saw)."""
    evidence = verification_evidence(tools.index, pool, tools.settings.retriever)
    with tools.recorder.step("verdict", tools.verifier.name) as data:
        verdict = tools.verifier.verify(question, evidence, best_score)
        data.update(evidence={e.paper_id: [c.chunk_id for c in e.chunks] for e in evidence}, best_score=best_score)
        data["verdict"] = verdict.model_dump()
    papers = tools.index.papers
    named = [p for p in verdict.papers_with_evidence if p in papers and (not allowed_papers or p in allowed_papers)]
    return Verification(verdict, named)
