"""``expand_neighbors``: Relate the pool's papers to their neighbours and fix the papers the answer is read from.

Ranking A is the pool by paper (max chunk score); the seeds are its top paper plus every paper a verification
named; Ranking B fuses their neighbours (paper vectors, bibliographic coupling, paper BM25); the A/B fusion gives
the final papers (Ranking A alone when Relate is off).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from lit3r.retrieval import fusion
from lit3r.retrieval.relate import final_ranking, ranking_b
from lit3r.retrieval.subquery import StageClock
from lit3r.tools.context import ToolContext


@dataclass(frozen=True)
class Expansion:
    """Ranking A, the seeds, Ranking B and the final papers."""

    ranking_a: list[tuple[str, float]]
    seeds: list[str]
    ranking_b: list[str]
    final: list[tuple[str, float]]
    neighbours: dict[str, list[list[str]]] = field(default_factory=dict)


def expand_neighbors(
    tools: ToolContext,
    pool: Mapping[str, float],
    named_papers: Sequence[str] = (),
    allowed_papers: Collection[str] | None = None,
) -> Expansion:
    """Ranking A, Ranking B and their fusion for the pool; an empty pool gives empty rankings.

    The ``ranking`` event's ``timings_ms`` has the milliseconds of ``ranking_a``, ``relate`` and ``fuse``.
    """
    settings = tools.settings.retriever
    clock = StageClock()
    ranking_a = fusion.rank_papers_by_max(pool, {c: tools.index.chunk_by_id[c].paper_id for c in pool})
    clock.lap("ranking_a")
    ids_a = [p for p, _s in ranking_a]
    seeds = list(dict.fromkeys(ids_a[:1] + list(named_papers)))
    related: list[str] = []
    neighbours: dict[str, list[list[str]]] = {}
    if settings.relate and seeds:
        found = ranking_b(tools.index, seeds, settings, allowed_papers)
        related, seeds, neighbours = found.papers, found.seeds, found.neighbours
        clock.lap("relate")
        final = final_ranking(ids_a, related, settings)
    else:
        final = ranking_a[: settings.final_papers]
    clock.lap("fuse")
    data = {"ranking_a": ranking_a, "seeds": seeds, "neighbours": neighbours, "ranking_b": related, "final": final}
    data["timings_ms"] = clock.laps
    tools.recorder.add("ranking", "expand_neighbors", data)
    return Expansion(ranking_a, seeds, related, final, neighbours)
