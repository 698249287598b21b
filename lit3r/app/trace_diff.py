"""Two traces compared step by step: what changed between two runs, and where they first part.

:func:`diff_traces` reads two trace documents (:mod:`lit3r.app.traces`) and returns a :class:`TraceDiff`, a
pydantic model that is JSON-ready (``lit3r trace diff --json``, the HTTP server's trace-diff endpoint). It
compares, in the order the agent produces them: the steps (nodes, tool calls, model calls, aligned), the
subqueries, every ranking of each subquery (per index and level of each sweep, the fused paper ranking, the
reranker's scores, the pool share), the ``rerank`` tool's rankings, the pool, the verdicts, Ranking A and B and
the final papers, the answer, its citations, the tokens, the time and the steps that fell back. Rankings list
their rank moves: each id in the top :data:`TOP_K` of either run with its 1-based rank in both (None: absent).

Subqueries are paired by text (repeats in order of appearance); a subquery only one run retrieved is listed
under ``subqueries`` and has no ranking rows.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from lit3r.retrieval import fusion

TOP_K = 20
"""Rank moves are reported for the ids in the top ``TOP_K`` of either ranking."""
SHOWN = 10
"""How many ids of each ranking ``top_a`` / ``top_b`` show."""
Scored = Sequence[Any]
"""A ranking as a trace stores it: ids, or ``[id, score]`` pairs, best first."""


class RankMove(BaseModel):
    """Where one id stands in the two rankings (1-based; None when the ranking lacks it)."""

    id: str
    rank_a: int | None
    rank_b: int | None
    change: int | None = Field(description="rank_a - rank_b: positive when the id moved up in B; None if one lacks it.")


class RankingDiff(BaseModel):
    """One ranking in both runs."""

    name: str = Field(description="Which ranking, e.g. 'original sweep / papers / bm25_chunks', 'pool', 'final'.")
    subquery: str | None = Field(default=None, description="The subquery it belongs to (None: not per subquery).")
    same: bool = Field(description="The same ids in the same order (scores may still differ: see max_score_change).")
    size_a: int
    size_b: int
    top_a: list[str] = Field(description=f"The first {SHOWN} ids of A.")
    top_b: list[str] = Field(description=f"The first {SHOWN} ids of B.")
    overlap: float = Field(description=f"Shared ids in the two top {TOP_K}s, over the larger of the two top lists.")
    max_score_change: float | None = Field(description="Largest |score A - score B| of an id in both (None: unscored).")
    moves: list[RankMove] = Field(description=f"Every id of either top {TOP_K} whose rank differs, best B rank first.")


class ListDiff(BaseModel):
    """An ordered list of strings in both runs."""

    a: list[str]
    b: list[str]
    same: bool
    only_a: list[str]
    only_b: list[str]


class ValueDiff(BaseModel):
    """A value in both runs."""

    a: Any
    b: Any
    same: bool


class NumberDiff(BaseModel):
    """A number in both runs, and B minus A."""

    a: float
    b: float
    delta: float


class StepPair(BaseModel):
    """One aligned step: its one-line key in A and in B (None: the run lacks it)."""

    a: str | None
    b: str | None
    same: bool


class VerdictDiff(BaseModel):
    """The n-th verification of both runs (None: that run verified fewer times)."""

    position: int
    a: dict[str, Any] | None
    b: dict[str, Any] | None
    same: bool


class CitationDiff(BaseModel):
    """The citations as (number, chunk id, quote) in both runs."""

    a: list[dict[str, Any]]
    b: list[dict[str, Any]]
    same: bool
    chunks_only_a: list[str]
    chunks_only_b: list[str]


class SettingChange(BaseModel):
    """One answer-shaping setting with another value in B (dotted key; None: the trace does not record it)."""

    key: str = Field(description="Dotted settings key, e.g. 'retriever.prf'.")
    a: Any
    b: Any


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(value, Mapping):
        return {prefix: value}
    flat: dict[str, Any] = {}
    for key, item in value.items():
        flat.update(_flat(item, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def settings_changes(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> list[SettingChange]:
    """The settings keys whose values differ between two recorded settings dumps, in key order."""
    flat_a, flat_b = _flat(a or {}), _flat(b or {})
    keys = sorted(k for k in {*flat_a, *flat_b} if k and flat_a.get(k) != flat_b.get(k))
    return [SettingChange(key=k, a=flat_a.get(k), b=flat_b.get(k)) for k in keys]


class TraceSide(BaseModel):
    """What identifies a run."""

    trace_id: str | None
    question: str
    planner: str | None
    stop_reason: str | None
    rerankers: list[str] = Field(description="Reranker names its subqueries used, in order of first use.")
    presets: list[str] | None = Field(
        default=None, description="The presets the run's settings came from ([]: defaults; None: not recorded)."
    )
    settings_recorded: bool = Field(default=False, description="The trace records its answer-shaping settings.")


class TraceDiff(BaseModel):
    """Two runs compared; ``first_difference`` names the earliest part that differs (None: identical)."""

    a: TraceSide
    b: TraceSide
    identical: bool = Field(
        description="Subqueries, rankings, pool, verdicts, final papers, answer and citations same."
    )
    first_difference: str | None
    steps: list[StepPair]
    subqueries: ListDiff
    rankings: list[RankingDiff]
    pool: RankingDiff
    verdicts: list[VerdictDiff]
    final_papers: RankingDiff
    answer: ValueDiff
    sufficient: ValueDiff
    citations: CitationDiff
    stop_reason: ValueDiff
    tokens: dict[str, NumberDiff] = Field(description="prompt, completion and total tokens of the model calls.")
    time_ms: dict[str, NumberDiff] = Field(description="'total' (first start to last end) and each tool's summed time.")
    fallbacks: ListDiff = Field(
        default_factory=lambda: _list_diff([], []),
        description="The steps that fell back to their offline path in each run (stages, in order); not part of "
        "``identical``, which compares what the runs found and answered.",
    )
    settings: list[SettingChange] = Field(
        default_factory=list,
        description="The answer-shaping settings that differ (recorded in each trace); not part of ``identical``, "
        "they are what may explain a difference.",
    )


def _ids_scores(ranking: Iterable[Any] | None) -> tuple[list[str], dict[str, float]]:
    """Ids in order and their scores from a ranking of ids or ``[id, score]`` pairs (first position wins)."""
    ids: dict[str, None] = {}
    scores: dict[str, float] = {}
    for item in ranking or []:
        key, score = (item[0], item[1]) if isinstance(item, list | tuple) else (item, None)
        key = str(key)
        if key in ids:
            continue
        ids[key] = None
        if isinstance(score, int | float):
            scores[key] = float(score)
    return list(ids), scores


def compare_rankings(name: str, a: Scored | None, b: Scored | None, subquery: str | None = None) -> RankingDiff:
    """Two rankings (ids or ``[id, score]`` pairs, best first) with their rank moves."""
    ids_a, scores_a = _ids_scores(a)
    ids_b, scores_b = _ids_scores(b)
    rank_a = {c: i + 1 for i, c in enumerate(ids_a)}
    rank_b = {c: i + 1 for i, c in enumerate(ids_b)}
    top = list(dict.fromkeys(ids_b[:TOP_K] + ids_a[:TOP_K]))
    moves = []
    for key in top:
        ra, rb = rank_a.get(key), rank_b.get(key)
        if ra != rb:
            moves.append(RankMove(id=key, rank_a=ra, rank_b=rb, change=ra - rb if ra and rb else None))
    shared = [k for k in scores_a if k in scores_b]
    largest = max(len(ids_a[:TOP_K]), len(ids_b[:TOP_K]))
    return RankingDiff(
        name=name,
        subquery=subquery,
        same=ids_a == ids_b,
        size_a=len(ids_a),
        size_b=len(ids_b),
        top_a=ids_a[:SHOWN],
        top_b=ids_b[:SHOWN],
        overlap=round(len(set(ids_a[:TOP_K]) & set(ids_b[:TOP_K])) / largest, 4) if largest else 1.0,
        max_score_change=max((abs(scores_a[k] - scores_b[k]) for k in shared), default=None),
        moves=moves,
    )


def _events(doc: Mapping[str, Any], type_: str, name: str | None = None) -> list[dict[str, Any]]:
    return [e for e in doc.get("events") or [] if e.get("type") == type_ and name in (None, e.get("name"))]


def _subquery_runs(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [e.get("data") or {} for e in _events(doc, "ranking", "retrieve_subquery")]


def _by_score(pairs: Iterable[Any] | None) -> list[list[Any]]:
    """Reranker scores (in candidate order) as a ranking: best score first, ties in candidate order."""
    return sorted((list(p) for p in pairs or []), key=lambda p: -float(p[1]))


def subquery_rankings(run: Mapping[str, Any]) -> dict[str, Scored]:
    """Every ranking of one ``retrieve_subquery`` record, by name."""
    rankings: dict[str, Scored] = {}
    for sweep_name, sweep in (run.get("sweeps") or {}).items():
        for level in ("chunks", "papers"):
            for index, ranking in (sweep.get(level) or {}).items():
                rankings[f"{sweep_name} sweep / {level} / {index}"] = ranking
        rankings[f"{sweep_name} sweep / fused papers"] = sweep.get("fused") or []
    rankings["papers (original + PRF)"] = run.get("papers") or []
    if run.get("reranker") is not None:
        rankings["reranker scores"] = _by_score(run["reranker"])
    rankings["pool share"] = run.get("pool") or []
    return rankings


def final_pool(doc: Mapping[str, Any]) -> list[tuple[str, float]]:
    """The run's pool, best first, as the state builds it: every subquery's share merged by maximum, every rerank's
    scores replacing the ones it re-ordered."""
    pool: dict[str, float] = {}
    for event in _events(doc, "ranking"):
        pairs = [(str(c), float(s)) for c, s in (event.get("data") or {}).get("pool") or []]
        if event.get("name") == "retrieve_subquery":
            pool = fusion.merge_pool(pool, pairs)
        elif event.get("name") == "rerank":
            pool = {**{c: s for c, s in pairs if c in pool}, **{c: s for c, s in pool.items() if c not in dict(pairs)}}
    return sorted(pool.items(), key=lambda item: -item[1])


def _pair_subqueries(a: Sequence[Mapping], b: Sequence[Mapping]) -> list[tuple[Mapping, Mapping]]:
    """Subquery records of A and B with the same text, paired in order of appearance."""
    left = {}
    for run in a:
        left.setdefault(run.get("subquery"), []).append(run)
    pairs = []
    for run in b:
        queue = left.get(run.get("subquery"))
        if queue:
            pairs.append((queue.pop(0), run))
    return pairs


def step_key(event: Mapping[str, Any]) -> str:
    """A step as one line: type, name and what distinguishes it (a tool's arguments, a planner's decision)."""
    data = event.get("data") or {}
    detail = ""
    if event.get("type") == "tool":
        detail = " ".join(f"{k}={v!r}" for k, v in sorted((data.get("args") or {}).items()))
    elif event.get("type") == "node" and "decision" in data:
        detail = str(data["decision"])
    elif event.get("type") == "ranking" and event.get("name") == "retrieve_subquery":
        detail = repr(data.get("subquery"))
    round_ = f"r{event['round']} " if event.get("round") is not None else ""
    return f"{round_}{event.get('type')} {event.get('name')} {detail}".rstrip()


def align_steps(a: Sequence[str], b: Sequence[str]) -> list[StepPair]:
    """The two step sequences aligned (difflib): equal runs pair up, the rest is shown side by side."""
    pairs: list[StepPair] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            pairs += [StepPair(a=x, b=x, same=True) for x in a[i1:i2]]
            continue
        left, right = list(a[i1:i2]), list(b[j1:j2])
        for k in range(max(len(left), len(right))):
            x, y = left[k] if k < len(left) else None, right[k] if k < len(right) else None
            pairs.append(StepPair(a=x, b=y, same=False))
    return pairs


def _list_diff(a: Sequence[str], b: Sequence[str]) -> ListDiff:
    return ListDiff(
        a=list(a),
        b=list(b),
        same=list(a) == list(b),
        only_a=[x for x in a if x not in b],
        only_b=[x for x in b if x not in a],
    )


def _value(a: Any, b: Any) -> ValueDiff:
    return ValueDiff(a=a, b=b, same=a == b)


def _number(a: float, b: float) -> NumberDiff:
    return NumberDiff(a=round(a, 3), b=round(b, 3), delta=round(b - a, 3))


def fallback_stages(doc: Mapping[str, Any]) -> list[str]:
    """The stages that fell back, from the answer's ``fallback_steps`` records (a trace written before those
    existed names them only as the text before ``':'`` of each ``fallbacks`` line)."""
    answer = doc.get("answer") or {}
    if "fallback_steps" in answer:
        return [str(f.get("stage")) for f in answer["fallback_steps"]]
    return [str(line).split(":", 1)[0] for line in answer.get("fallbacks") or []]


def _citations(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    cited = (doc.get("answer") or {}).get("citations") or []
    return [{"number": c.get("number"), "chunk_id": c.get("chunk_id"), "quote": c.get("quote")} for c in cited]


def token_counts(doc: Mapping[str, Any]) -> dict[str, float]:
    """Prompt, completion and total tokens over the run's model calls."""
    calls = [e.get("data") or {} for e in _events(doc, "llm")]
    prompt = float(sum(c.get("prompt_tokens") or 0 for c in calls))
    completion = float(sum(c.get("completion_tokens") or 0 for c in calls))
    return {"prompt": prompt, "completion": completion, "total": prompt + completion}


def timings_ms(doc: Mapping[str, Any]) -> dict[str, float]:
    """'total' (first event start to last event end) and the summed time of each tool."""
    events = doc.get("events") or []
    spans = []
    for event in events:
        start = datetime.fromisoformat(str(event["started_at"])).timestamp() * 1000
        spans.append((start, start + float(event.get("duration_ms") or 0.0)))
    timings = {"total": max(e for _, e in spans) - min(s for s, _ in spans) if spans else 0.0}
    for event in _events(doc, "tool"):
        name = f"tool {event.get('name')}"
        timings[name] = timings.get(name, 0.0) + float(event.get("duration_ms") or 0.0)
    return timings


def _side(doc: Mapping[str, Any]) -> TraceSide:
    rerankers = [r.get("reranker_name") for r in _subquery_runs(doc) if r.get("reranker_name")]
    return TraceSide(
        trace_id=doc.get("trace_id"),
        question=str(doc.get("question") or ""),
        planner=doc.get("planner"),
        stop_reason=doc.get("stop_reason"),
        rerankers=list(dict.fromkeys(rerankers)),
        presets=doc.get("presets"),
        settings_recorded=isinstance(doc.get("settings"), Mapping),
    )


def _expansion(doc: Mapping[str, Any]) -> dict[str, Any]:
    found = _events(doc, "ranking", "expand_neighbors")
    return (found[-1].get("data") or {}) if found else {}


def _rankings(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[RankingDiff]:
    rows = []
    for run_a, run_b in _pair_subqueries(_subquery_runs(a), _subquery_runs(b)):
        ranks_a, ranks_b = subquery_rankings(run_a), subquery_rankings(run_b)
        for name in dict.fromkeys([*ranks_a, *ranks_b]):
            rows.append(compare_rankings(name, ranks_a.get(name), ranks_b.get(name), run_a.get("subquery")))
    reranks_a, reranks_b = _events(a, "ranking", "rerank"), _events(b, "ranking", "rerank")
    for i, (ra, rb) in enumerate(zip(reranks_a, reranks_b, strict=False)):
        da, db = ra.get("data") or {}, rb.get("data") or {}
        rows.append(compare_rankings(f"rerank tool {i + 1} / pool", da.get("pool"), db.get("pool"), da.get("query")))
    exp_a, exp_b = _expansion(a), _expansion(b)
    for key in ("ranking_a", "seeds", "ranking_b"):
        rows.append(compare_rankings(key.replace("_", " "), exp_a.get(key), exp_b.get(key)))
    return rows


def _verdicts(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[VerdictDiff]:
    va, vb = list(a.get("verdicts") or []), list(b.get("verdicts") or [])
    rows = []
    for i in range(max(len(va), len(vb))):
        x, y = va[i] if i < len(va) else None, vb[i] if i < len(vb) else None
        rows.append(VerdictDiff(position=i + 1, a=x, b=y, same=x == y))
    return rows


def diff_traces(a: Mapping[str, Any], b: Mapping[str, Any]) -> TraceDiff:
    """Compare trace document ``a`` with ``b`` (what :func:`lit3r.app.traces.load_trace` returns)."""
    answer_a, answer_b = a.get("answer") or {}, b.get("answer") or {}
    cites_a, cites_b = _citations(a), _citations(b)
    chunks_a, chunks_b = [c["chunk_id"] for c in cites_a], [c["chunk_id"] for c in cites_b]
    final_a = _expansion(a).get("final") or answer_a.get("candidate_papers")
    final_b = _expansion(b).get("final") or answer_b.get("candidate_papers")
    tokens_a, tokens_b = token_counts(a), token_counts(b)
    time_a, time_b = timings_ms(a), timings_ms(b)
    diff = TraceDiff(
        a=_side(a),
        b=_side(b),
        identical=False,
        first_difference=None,
        steps=align_steps([step_key(e) for e in a.get("events") or []], [step_key(e) for e in b.get("events") or []]),
        subqueries=_list_diff(
            [str(r.get("subquery")) for r in _subquery_runs(a)], [str(r.get("subquery")) for r in _subquery_runs(b)]
        ),
        rankings=_rankings(a, b),
        pool=compare_rankings("pool", final_pool(a), final_pool(b)),
        verdicts=_verdicts(a, b),
        final_papers=compare_rankings("final papers", final_a, final_b),
        answer=_value(answer_a.get("text"), answer_b.get("text")),
        sufficient=_value(answer_a.get("sufficient"), answer_b.get("sufficient")),
        citations=CitationDiff(
            a=cites_a,
            b=cites_b,
            same=cites_a == cites_b,
            chunks_only_a=[c for c in chunks_a if c not in chunks_b],
            chunks_only_b=[c for c in chunks_b if c not in chunks_a],
        ),
        stop_reason=_value(a.get("stop_reason"), b.get("stop_reason")),
        tokens={k: _number(tokens_a[k], tokens_b[k]) for k in tokens_a},
        time_ms={k: _number(time_a.get(k, 0.0), time_b.get(k, 0.0)) for k in dict.fromkeys([*time_a, *time_b])},
        fallbacks=_list_diff(fallback_stages(a), fallback_stages(b)),
        settings=settings_changes(a.get("settings"), b.get("settings")),
    )
    first = first_difference(diff)
    return diff.model_copy(update={"first_difference": first, "identical": first is None})


def first_difference(diff: TraceDiff) -> str | None:
    """The earliest part of the run that differs, in the order the agent produces them (None: none differs)."""
    if not diff.subqueries.same:
        return "subqueries"
    for row in diff.rankings:
        if not row.same:
            return f"ranking {row.name}" + (f" of subquery {row.subquery!r}" if row.subquery else "")
    if not diff.pool.same:
        return "pool"
    for verdict in diff.verdicts:
        if not verdict.same:
            return f"verdict {verdict.position}"
    for name in ("final_papers", "answer", "sufficient", "citations"):
        if not getattr(diff, name).same:
            return name.replace("_", " ")
    return None
