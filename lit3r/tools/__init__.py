"""The six tools the planner calls, each in the module of its name, pure and typed (no LangGraph):

* :func:`~lit3r.tools.search_chunks.search_chunks`: retrieve one query, add its best passages to the pool;
* :func:`~lit3r.tools.rerank.rerank`: re-score the pool against a sharper query;
* :func:`~lit3r.tools.expand_neighbors.expand_neighbors`: Relate (Ranking B) and the A/B fusion: the final papers;
* :func:`~lit3r.tools.read_paper.read_paper`: show one paper's best pooled passages as quoted evidence;
* :func:`~lit3r.tools.verify_sufficiency.verify_sufficiency`: is the evidence enough, which papers hold it;
* :func:`~lit3r.tools.synthesize_answer.synthesize_answer`: the cited, claim-verified answer.

Each takes a :class:`~lit3r.tools.context.ToolContext` (index, settings, reranker, readers, trace recorder) and
plain data (the pool, papers, scores). The agent wraps them as LangChain tools (:mod:`lit3r.agent.adapters`);
the retrieval machinery they use lives in :mod:`lit3r.retrieval`, the readers in :mod:`lit3r.reading`.
"""

TOOL_NAMES = (
    "search_chunks",
    "rerank",
    "expand_neighbors",
    "read_paper",
    "verify_sufficiency",
    "synthesize_answer",
)
"""The six tools, in the order the planner is shown them."""
