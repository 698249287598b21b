"""The tools' contracts with the planner, written from the settings in force.

A contract states what a tool does in numbers (rounds, candidates, pool share, blend weights, what the verifier
reads), and presets change those numbers, so each description that has any is rendered here from the settings
the run uses; the tools' docstrings (:mod:`lit3r.agent.adapters`) keep the contracts that have none.
:func:`lit3r.agent.adapters.agent_tools` puts them on the tools the planner is bound to.
"""

from __future__ import annotations

from lit3r.settings.retrieval import RetrieverSettings
from lit3r.settings import Settings


def _number(value: float) -> str:
    return f"{value:g}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def reranks(settings: Settings) -> bool:
    """Whether searches and ``rerank`` score passages with a reranker under these settings."""
    return settings.retriever.rerank and settings.reranker != "none"


def search_contract(settings: Settings) -> str:
    retriever = settings.retriever
    text = (
        "Search the papers for passages matching one focused query and add the best ones to the shared pool. "
        "Call it once per aspect of the question (a method, dataset, metric or claim); the calls of one turn form "
        f"one retrieval round ({_plural(retriever.max_rounds, 'round')} at most). It searches chunk BM25, paper "
        "BM25 and dense vectors"
    )
    if retriever.prf:
        text += ", expands the query once with the top paper's abstract"
        if retriever.prf_when == "agree":
            text += " when all three rank that paper first"
    candidates = _plural(retriever.rerank_candidates, "candidate passage")
    text += f", reranks up to {candidates}" if reranks(settings) else f", orders up to {candidates} by retrieval rank"
    return text + _pool_share(retriever) + " (a passage found twice keeps its higher score)."


def _pool_share(retriever: RetrieverSettings) -> str:
    share = retriever.pool_per_subquery
    if retriever.fusion == "learned":
        text = f" and adds its {share} most probable (by a learned model over every signal) to the pool"
        if retriever.pool_papers:
            text += f", plus the most probable passage of each of its first {retriever.pool_papers} papers"
            text += " not yet among them"
        return text
    text = f" and merges the best {share} into the pool"
    if retriever.pinned:
        text += f", its top {retriever.pinned} by retrieval rank pinned above the rest"
    return text


def rerank_contract(settings: Settings) -> str:
    retriever = settings.retriever
    text = (
        "Re-order the passages already in the pool for a sharper query; retrieves nothing new. Use it when the pool "
        "holds the right papers but other passages rank first. "
    )
    if not reranks(settings):
        return text + "No reranker is configured in these settings, so it changes nothing."
    k = retriever.blend_k
    blend = f"{_number(retriever.w_ret)}/({k} + pool rank) + {_number(retriever.w_rr)}/({k} + reranker rank)"
    text += f"The pooled passages are ranked by {blend} for this query and take the pool's scores, best first, "
    text += "in that order"
    if retriever.fusion == "blend" and retriever.pinned:
        text += " (pinned passages among themselves, the others among themselves)"
    return text + ": passages this query favours move up and the ones they pass move down."


def expand_contract(settings: Settings) -> str:
    text = "Relate the pool's papers to their neighbours and fix the list of papers the answer is read from. "
    text += "Call it once, after the last search (and verification), before synthesize_answer. "
    if not settings.retriever.relate:
        return text + "Relate is off in these settings: the final papers are the pool's papers by their best passage."
    return text + (
        "Seeds are the top paper of the pool plus every paper a verification named; their neighbours by paper "
        "similarity, shared references and paper-level BM25 form Ranking B, which is fused with the pool's own "
        f"paper ranking (Ranking A) into the final papers (at most {settings.retriever.final_papers})."
    )


def verify_contract(settings: Settings) -> str:
    retriever = settings.retriever
    return (
        "Judge whether the pool already holds enough evidence to answer the question. Call it after each round of "
        f"search_chunks. The verifier reads the top {_plural(retriever.verify_papers, 'pooled paper')}, "
        f"{_plural(retriever.verify_chunks_per_paper, 'best passage')} each, and reports whether the evidence "
        "suffices, which papers hold it (they seed expand_neighbors) and what is missing (search for that next)."
    )


CONTRACTS = {
    "search_chunks": search_contract,
    "rerank": rerank_contract,
    "expand_neighbors": expand_contract,
    "verify_sufficiency": verify_contract,
}
"""The tools whose contract depends on the settings, and the function that writes it."""


def contracts(settings: Settings) -> dict[str, str]:
    """Each settings-dependent tool's description under ``settings``, by tool name."""
    return {name: write(settings) for name, write in CONTRACTS.items()}
