"""``search_chunks``: retrieve one focused query over every index and add its best passages to the pool.

The HyDE decision belongs here: a query shorter than ``hyde_min_words`` words gets a hypothetical passage as
its dense query when a writer is configured (a ``hyde`` step in the trace), and a ``note`` when none is.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from lit3r.retrieval.subquery import SubqueryResult, retrieve_subquery
from lit3r.tools.context import ToolContext

HYDE_SKIPPED = "HyDE skipped: no language model"


@dataclass(frozen=True)
class SearchResult:
    """What one search adds: the subquery's pool share and its best reranker score."""

    query: str
    retrieved: SubqueryResult

    @property
    def pool(self) -> list[tuple[str, float]]:
        """``(chunk id, blended score)`` pairs going to the pool, best first."""
        return self.retrieved.pool

    @property
    def best_reranker_score(self) -> float | None:
        """The highest raw reranker score of the search (the gate's input); None when nothing was reranked."""
        return self.retrieved.best_reranker_score


def clean_query(query: str) -> str:
    """The query with its spacing folded; ``ValueError`` when nothing is left."""
    query = " ".join(query.split())
    if not query:
        raise ValueError("the query is empty: pass the words to search for")
    return query


def dense_query(tools: ToolContext, query: str) -> str | None:
    """A HyDE passage as the dense query for a query shorter than ``hyde_min_words`` words, when a writer is set."""
    if len(query.split()) >= tools.settings.retriever.hyde_min_words:
        return None
    if tools.hyde is None:
        tools.recorder.add("note", "hyde", {"subquery": query, "note": HYDE_SKIPPED})
        return None
    with tools.recorder.step("hyde", tools.hyde.name) as data:
        passage = tools.hyde.write(query).strip()
        data.update(subquery=query, passage=passage)
    return passage or None


def search_chunks(tools: ToolContext, query: str, allowed_papers: Collection[str] | None = None) -> SearchResult:
    """Retrieve ``query`` (sweep, PRF, candidates, blended rerank) and record its rankings (a ``ranking`` event)."""
    query = clean_query(query)
    dense = dense_query(tools, query)
    result = retrieve_subquery(tools.index, query, tools.reranker, tools.settings.retriever, allowed_papers, dense)
    tools.recorder.add("ranking", "retrieve_subquery", result.trace)
    return SearchResult(query, result)
