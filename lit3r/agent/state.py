"""Graph state: a narrow input, a full internal state, and one reducer per shared field.

The input is what a caller gives (:class:`InputState`): the question, answer options for a
multiple-choice question, and an optional paper restriction. Everything else is internal
(:class:`AgentState`) and written by the planner node and by the tools through
``Command(update=...)``.

Several tool calls of one planner turn run in the same step, so every field a tool writes
has a reducer; none of them is a plain "last value" channel that would reject two writes:

* ``pool`` merges chunk scores by maximum (:func:`lit3r.retrieval.fusion.merge_pool`): a chunk
  found by two subqueries is stored once, with its best score; a ``rerank`` update (:data:`RESCORED`)
  replaces the scores of the chunks it re-ordered instead;
* lists append (``subqueries``, ``verdicts``) or append unseen items (``named_papers``);
* ``best_reranker_score`` keeps the maximum;
* ``changes`` counts the tool calls that changed what the final papers depend on (the pool, the named papers);
* rankings and the answer are replaced by the latest write.

The control flow is in the state, not in the messages: ``phase`` says whether the planner is still planning
('plan'), the answer path runs ('answer': expand if stale, synthesize, finish) or the question is done; why
retrieval stopped is ``stop_reason`` (one vocabulary, :data:`StopReason`) with a ``stop_detail``; the final
papers are stale when ``expanded_at`` (the ``changes`` count they were computed at) is behind ``changes``.

Writing ``None`` resets a field (the start of a new question in a chat thread). All values
are plain JSON data (chunk ids, scores, dicts), so a checkpointer can store the state.

Two fields outlive a question of a chat thread (a thread's state is checkpointed between questions):

* the pool is carried into the next question by :func:`carry_pool`: every earlier chunk stays, so a
  follow-up can cite it, but with its pin bonus removed and its score times :data:`POOL_DECAY`, so the
  new question's own evidence ranks first (a chunk found again takes its new, higher score);
* ``citation_numbers`` maps each chunk cited in the thread to its number, so :func:`stable_numbers`
  gives a chunk cited as [2] before the number 2 again and new chunks the next free numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal, NotRequired, TypeVar, get_args, get_origin, get_type_hints

from langchain_core.messages import AnyMessage
from langgraph.graph import add_messages
from typing_extensions import TypedDict

from lit3r.answers.validate import MARKER, marker_numbers
from lit3r.models import Answer, Citation
from lit3r.retrieval import fusion
from lit3r.tools.rerank import RESCORED

POOL_DECAY = 0.5
"""Factor applied to the pool scores of earlier questions when a thread's next question starts."""

T = TypeVar("T")
Phase = Literal["plan", "answer", "done"]
"""'plan': the planner is choosing tool calls; 'answer': the answer path runs; 'done': the answer is final."""
StopReason = Literal[
    "sufficient",
    "no_new_subqueries",
    "max_rounds",
    "budget",
    "turn_limit",
    "planner_answered",
    "planner_stopped",
    "planner_failed",
]
"""Why retrieval stopped: the verdict was sufficient; decomposition gave nothing new; the round cap; the budget
(tokens, cost or time: ``stop_detail`` says which); the planner-turn guard; the LLM planner called
synthesize_answer itself, stopped calling tools without an answer, or its model call failed."""
PoolUpdate = Mapping[str, float] | Mapping[str, Mapping[str, list[float]]] | Iterable[tuple[str, float]] | None


def reduce_pool(current: dict[str, float] | None, update: PoolUpdate) -> dict[str, float]:
    """Merge ``(chunk id, score)`` pairs into the pool keeping each chunk's maximum score; ``None`` empties it.

    A ``{RESCORED: {chunk: [old, new]}}`` update (:func:`lit3r.tools.rerank.rerank`'s) replaces the scores of the
    pooled chunks it names, which come first, in its order (the pool's order breaks equal scores); a chunk whose
    score is no longer ``old`` (another call of the same step raised it) keeps the higher of its score and ``new``.
    """
    if update is None:
        return {}
    if isinstance(update, Mapping) and isinstance(update.get(RESCORED), Mapping):
        return _rescored(current or {}, update[RESCORED])  # type: ignore[arg-type]
    pairs = update.items() if isinstance(update, Mapping) else update
    return fusion.merge_pool(current or {}, ((chunk, float(score)) for chunk, score in pairs))  # type: ignore[misc]


def _rescored(current: dict[str, float], scores: Mapping[str, Sequence[float]]) -> dict[str, float]:
    replaced = {}
    for chunk, (old, new) in scores.items():
        if chunk in current:
            replaced[chunk] = float(new) if current[chunk] == old else max(current[chunk], float(new))
    return {**replaced, **{c: s for c, s in current.items() if c not in replaced}}


def append(current: list[T] | None, update: list[T] | None) -> list[T]:
    """Append ``update`` to the list; ``None`` empties it."""
    return [] if update is None else [*(current or []), *update]


def append_unseen(current: list[T] | None, update: list[T] | None) -> list[T]:
    """Append the items of ``update`` not already in the list, in order; ``None`` empties it."""
    return [] if update is None else list(dict.fromkeys([*(current or []), *update]))


def count(current: int | None, update: int | None) -> int:
    """Add ``update`` to the count; ``None`` resets it to 0."""
    return 0 if update is None else (current or 0) + update


def keep_max(current: float | None, update: float | None) -> float | None:
    """The larger of two scores; ``None`` resets (a tool that has no score leaves the key out)."""
    if update is None:
        return None
    return update if current is None else max(current, update)


def replace(_current: Any, update: T) -> T:
    """The latest write wins (several writes in one step do not raise)."""
    return update


class InputState(TypedDict):
    """What a caller passes in: one question."""

    question: str
    options: NotRequired[list[str] | None]
    """Answer options of a multiple-choice question (None: free-form)."""
    allowed_papers: NotRequired[list[str] | None]
    """Restrict retrieval to these paper ids (None: the whole corpus)."""


class AgentState(InputState, total=False):
    """Everything the planner and the tools share while answering one question."""

    messages: Annotated[list[AnyMessage], add_messages]
    """The conversation: the question, the planner's tool calls and the tools' one-line statuses."""
    pool: Annotated[dict[str, float], reduce_pool]
    """The shared chunk pool: chunk id -> best score over every subquery that returned it (plus the decayed
    chunks of the thread's earlier questions, see :func:`carry_pool`)."""
    subqueries: Annotated[list[str], append]
    """Every query ``search_chunks`` retrieved, in order."""
    round: int
    """Retrieval rounds started (a planner turn that issues ``search_chunks`` calls starts one)."""
    turns: int
    """Planner turns taken for this question."""
    last_calls: list[str]
    """Tool names of the planner's last turn (the fixed planner's place in its sequence)."""
    verdicts: Annotated[list[dict[str, Any]], append]
    """Each verification: a :class:`lit3r.retrieval.planning.Verdict` as a dict, plus its ``round``."""
    named_papers: Annotated[list[str], append_unseen]
    """Papers verifiers said hold evidence (Ranking B seeds after the top paper of Ranking A)."""
    best_reranker_score: Annotated[float | None, keep_max]
    """Best raw reranker score seen (the relevance gate's input); None when nothing was reranked."""
    ranking_a: Annotated[list[tuple[str, float]] | None, replace]
    """Pool papers by their best chunk score, as of the last ``expand_neighbors``."""
    seeds: Annotated[list[str] | None, replace]
    """Ranking B seeds used by the last ``expand_neighbors``."""
    ranking_b: Annotated[list[str] | None, replace]
    """Ranking B of the last ``expand_neighbors`` (empty when Relate is off)."""
    final_papers: Annotated[list[tuple[str, float]] | None, replace]
    """A/B fusion: the reader's papers, best first; None until ``expand_neighbors`` ran."""
    answer: Annotated[dict[str, Any] | None, replace]
    """The :class:`lit3r.models.Answer` as a dict, once ``synthesize_answer`` ran."""
    phase: Phase
    """Where the question is (see the module docstring)."""
    changes: Annotated[int, count]
    """Tool calls so far that changed the pool or the named papers (what the final papers are computed from)."""
    expanded_at: int | None
    """``changes`` when ``expand_neighbors`` last ran (None: never); behind ``changes`` means stale final papers."""
    stop_reason: StopReason | None
    """Why retrieval stopped (None while planning)."""
    stop_detail: str | None
    """What the stop reason does not say: which budget ran out, the model error, the turn count."""
    planner_fallback: str | None
    """Why the LLM planner handed over to the fixed Lit3R sequence for the rest of the question (its model call
    failed, or its tool-call arguments did not parse); None while it plans."""
    citation_numbers: Annotated[dict[str, int], replace]
    """Chunk id -> its citation number in this thread; kept across questions (see :func:`stable_numbers`)."""


def reducers() -> dict[str, Callable[[Any, Any], Any]]:
    """Each field's reducer, as the graph applies it (fields without one are replaced by a write)."""
    hints = get_type_hints(AgentState, include_extras=True)
    return {
        key: get_args(hint)[1]
        for key, hint in hints.items()
        if get_origin(hint) is Annotated and callable(get_args(hint)[1])
    }


def apply_update(state: dict[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``update`` into ``state`` in place with each field's reducer, as the graph merges a node's write;
    for callers that hold the state themselves (a host's toolkit). Returns ``state``."""
    merge = reducers()
    for key, value in update.items():
        state[key] = merge[key](state.get(key), value) if key in merge else value
    return state


def question_reset() -> dict[str, Any]:
    """The update that clears every per-question field (a new question in a chat thread)."""
    return {
        "pool": None,
        "subqueries": None,
        "round": 0,
        "turns": 0,
        "last_calls": [],
        "verdicts": None,
        "named_papers": None,
        "best_reranker_score": None,
        "ranking_a": None,
        "seeds": None,
        "ranking_b": None,
        "final_papers": None,
        "answer": None,
        "phase": "plan",
        "changes": None,
        "expanded_at": None,
        "stop_reason": None,
        "stop_detail": None,
        "planner_fallback": None,
    }


def carry_pool(
    pool: Mapping[str, float], keep: Callable[[str], bool], pin_bonus: float, decay: float = POOL_DECAY
) -> dict[str, float]:
    """The pool a thread's next question starts with: the chunks ``keep`` accepts, each score unpinned
    (``pin_bonus`` removed: a pin belongs to the subquery that set it) and multiplied by ``decay``."""
    return {c: (s - pin_bonus if s >= pin_bonus else s) * decay for c, s in pool.items() if keep(c)}


def stable_numbers(answer: Answer, numbers: Mapping[str, int]) -> tuple[Answer, dict[str, int]]:
    """``answer`` with the thread's citation numbers, and the numbers extended by its new chunks.

    A chunk numbered before keeps its number; a new chunk gets the next free number (one more than the
    largest given), in order of first use in the text. Markers and ``Citation.number`` are rewritten alike;
    two citations of one chunk become one (the first, with its quote). Citations stay in order of first use.
    """
    mapping = dict(numbers)
    first: dict[int, Citation] = {}
    for citation in answer.citations:
        first.setdefault(citation.number, citation)
    used = list(dict.fromkeys(marker_numbers(answer.text)))
    order = [n for n in used if n in first] + [n for n in first if n not in used]
    new_of: dict[int, int] = {}
    renumbered: dict[int, Citation] = {}
    for old in order:
        chunk = first[old].chunk_id
        new_of[old] = mapping.setdefault(chunk, max(mapping.values(), default=0) + 1)
        renumbered.setdefault(new_of[old], first[old].model_copy(update={"number": new_of[old]}))
    citations = list(renumbered.values())
    text = MARKER.sub(lambda m: _renumbered_group(m.group(1), new_of), answer.text)
    return answer.model_copy(update={"text": text, "citations": citations}), mapping


def _renumbered_group(group: str, new_of: Mapping[int, int]) -> str:
    """A marker group ``[a, b]`` with each number mapped (unknown numbers kept, repeats dropped)."""
    numbers = dict.fromkeys(new_of.get(int(n), int(n)) for n in group.split(","))
    return f"[{', '.join(map(str, numbers))}]"
