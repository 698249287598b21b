"""The session: everything a question needs, opened once, serving many questions and threads.

A :class:`Session` opens the index, the reranker, the calibrated gate, the chat model (starting lit3r's own
llama.cpp server for provider 'local'), the offline claim judge, the thread store and the compiled graphs
once. Each question then gets its own run :class:`~lit3r.agent.context.Context` (trace recorder, budget, and
the model wrappers, LLM reranker and LLM judge bound to them), built in one go by :meth:`Session.context`.
``lit3r ask`` is a one-turn session, ``lit3r chat`` a :class:`Thread`, and the retrieval evaluation and gate
calibration run :meth:`Session.retrieve`: the same graph stopped before the reader. Every surface (CLI, HTTP
server, MCP) runs this one path.

Sharing across threads (a server's concurrent requests): what a run changes lives in its own context and
graph state; what the session shares is read-only after opening (index, reranker, gate, chat model, graphs),
except the index's query-vector cache, which locks itself, and the thread store: turns of one thread are
serialised by a lock per thread id, turns of different threads run in parallel.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from lit3r.agent.adapters import agent_tools
from lit3r.agent.context import Context, PlannerKind, StopAfter
from lit3r.agent.rewrite import HISTORY_TURNS, ChatTurn, rewrite_followup, turns_of
from lit3r.app.documents import AnswerDocument, answer_document
from lit3r.app.errors import NotFound, Unavailable, UserError
from lit3r.app.traces import new_trace_id, run_settings, trace_path, write_trace
from lit3r.graphs.agent import build_graph, run_config
from lit3r.grounding.judges import make_judge
from lit3r.index.corpus_index import CorpusIndex
from lit3r.index.opening import open_index
from lit3r.llm.budget import Budget
from lit3r.llm.client import make_chat_model
from lit3r.llm.errors import LLMConfigError
from lit3r.llm.local_server import local_llm
from lit3r.llm.trace import Listener, TraceRecorder
from lit3r.llm.wrapper import LLM, Breaker
from lit3r.models import Answer, Chunk, TraceEvent
from lit3r.prompts.common import AnswerSpec
from lit3r.reading import extractive_answer
from lit3r.reading.compact_reader import CompactReader
from lit3r.reading.llm_reader import LLMReader
from lit3r.reading.reader import ExtractiveReader, ModelReader
from lit3r.retrieval.gate import GateThreshold, load_gate
from lit3r.retrieval.llm_planning import LLMDecomposer, LLMHyde, LLMVerifier
from lit3r.retrieval.planning import GateVerifier, KeywordDecomposer, Verdict
from lit3r.retrieval.rerankers import Reranker
from lit3r.retrieval.rerankers.factory import load_reranker, needs_llm, reranker_for_index
from lit3r.settings import Settings
from lit3r.tools.context import ToolContext

PLANNERS: tuple[PlannerKind, ...] = ("fixed", "llm")
FROM_SETTINGS: Any = object()
"""Default of ``reranker`` and ``gate``: the one the settings name (the gate stored beside the index)."""
logger = logging.getLogger(__name__)
THREADS_FILE = "threads.sqlite"


def planner_kind(name: str) -> PlannerKind:
    """``name`` as a planner; :class:`UserError` for one that does not exist."""
    if name not in PLANNERS:
        raise UserError(f"unknown planner {name!r}: use fixed or llm", "unknown_planner")
    return name  # type: ignore[return-value]


def _extractive_fallback(question: str, chunks: Sequence[Chunk], spec: AnswerSpec) -> Answer:
    """The LLM reader's deterministic fallback: the extractive reader over the same chunks and options."""
    return extractive_answer(question, list(chunks), options=list(spec.options.values()) or None)


@dataclass(frozen=True)
class Reply:
    """A finished question: the answer, its document (what the surfaces send) and, for a thread turn, its
    position in the thread."""

    answer: Answer
    document: AnswerDocument
    turn: int | None = None


@dataclass(frozen=True)
class Retrieval:
    """What the one retrieval path found for a question, before the reader (the retrieval evaluation's input)."""

    question: str
    pool: list[tuple[str, float]]
    """The shared pool, best first."""
    final_papers: list[tuple[str, float]]
    """The A/B fusion (Ranking A when Relate is off): the papers the reader would read, best first."""
    best_reranker_score: float | None
    rounds: int
    subqueries: list[str]
    verdicts: list[Verdict]
    stop_reason: str | None
    events: list[TraceEvent] = field(repr=False)


class Session:
    """Opens what answering needs once and answers questions, one-off or in threads.

    Args:
        settings: All settings; ``settings.home`` holds the index, the traces and ``threads.sqlite``.
        index: An opened index (default: the one built for ``settings``).
        reranker: A reranker, None for none; default: the one ``settings.reranker`` names ('llm' is built per
            run on the run's model wrapper).
        chat_model: A chat model to use instead of the one ``settings.llm`` configures.
        planner: The default planner: 'fixed' (the Lit3R sequence) or 'llm' (needs a chat model).
        gate: The relevance-gate threshold; default: the one calibrated for these settings (None: no gate).
        checkpointer: Where threads are kept (default: ``<home>/threads.sqlite``, opened on first use).

    With ``settings.llm.provider == 'local'`` (and no ``chat_model``) llama.cpp's server is started here and
    stopped by :meth:`close`.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        index: CorpusIndex | None = None,
        reranker: Reranker | None = FROM_SETTINGS,
        chat_model: BaseChatModel | None = None,
        planner: PlannerKind = "fixed",
        gate: GateThreshold | None = FROM_SETTINGS,
        checkpointer: BaseCheckpointSaver | None = None,
    ) -> None:
        self._stack = ExitStack()
        try:
            if chat_model is None:  # provider 'local': llama.cpp's server runs while the session is open
                settings = self._stack.enter_context(local_llm(settings))
            self.settings = settings
            self.index = index if index is not None else open_index(settings)
            if chat_model is None and settings.llm.enabled:
                chat_model = make_chat_model(settings.llm)
            self.chat_model = chat_model
            self.planner = self.check_planner(planner)
            self._reranker_spec = settings.reranker if reranker is FROM_SETTINGS else None
            if self._reranker_spec is not None and needs_llm(self._reranker_spec) and chat_model is None:
                raise LLMConfigError("reranker 'llm' needs a chat model: set llm.provider (and llm.base_url or a key)")
            if reranker is FROM_SETTINGS and not needs_llm(settings.reranker):
                reranker = reranker_for_index(settings.reranker, self.index)
            self.reranker: Reranker | None = None if reranker is FROM_SETTINGS else reranker
            self.gate: GateThreshold | None = load_gate(settings) if gate is FROM_SETTINGS else gate
            verify = settings.grounding.verify
            self._offline_judge = make_judge(settings.grounding) if verify and chat_model is None else None
            self.graph: CompiledStateGraph = build_graph()
        except BaseException:
            self._stack.close()
            raise
        self._checkpointer = checkpointer
        self._threaded: CompiledStateGraph | None = None
        self._lock = threading.Lock()
        self._thread_locks: dict[str, threading.Lock] = {}

    # ------------------------------------------------------------ the checks every surface relies on

    def check_planner(self, planner: str | None) -> PlannerKind:
        """The planner a run uses (None: the session's); :class:`UserError` for an unknown one,
        :class:`Unavailable` for 'llm' without a chat model."""
        kind = planner_kind(planner) if planner is not None else self.planner
        if kind == "llm" and self.chat_model is None:
            raise Unavailable("planner 'llm' needs a chat model: set llm.provider (and llm.base_url or a key)",
                              "llm_unavailable")  # fmt: skip
        return kind

    def check_papers(self, paper_ids: Sequence[str] | None) -> list[str] | None:
        """The paper restriction, each id once; :class:`NotFound` names ids the index does not hold,
        :class:`UserError` an empty restriction."""
        if paper_ids is None:
            return None
        ids = list(dict.fromkeys(paper_ids))
        unknown = [p for p in ids if p not in self.index.papers]
        if unknown:
            shown = ", ".join(unknown[:5])
            raise NotFound(f"unknown paper id(s): {shown} (list the corpus's papers to see their ids)", "unknown_paper")
        if not ids:
            raise UserError("no paper to answer from: the paper restriction is empty", "invalid_request")
        return ids

    def check_request(self, planner: str | None = None, paper_ids: Sequence[str] | None = None) -> None:
        """Refuse, before a run starts, what it would refuse (a surface that streams answers with a status)."""
        self.check_planner(planner)
        self.check_papers(paper_ids)

    # ------------------------------------------------------------ one run

    def context(
        self,
        *,
        planner: PlannerKind | None = None,
        max_seconds: float | None = None,
        stop_after: StopAfter = "answer",
        on_event: Listener | None = None,
    ) -> Context:
        """A fresh run context: its own trace recorder and budget, the model pieces bound to them."""
        planner = self.check_planner(planner)
        settings = self.settings
        recorder = TraceRecorder(on_event=on_event)
        budget = Budget.for_question(settings.llm, max_seconds=max_seconds)
        llm = None
        if self.chat_model is not None:
            llm = LLM(self.chat_model, settings.llm, recorder=recorder, budget=budget, breaker=Breaker())
        reranker = self.reranker
        if self._reranker_spec is not None and needs_llm(self._reranker_spec):
            reranker = load_reranker(self._reranker_spec, llm=llm)
        if llm is None:
            tools = ToolContext(
                self.index, settings, GateVerifier(self.gate), ExtractiveReader(self.index.papers),
                reranker=reranker, gate=self.gate, judge=self._offline_judge, recorder=recorder,
            )  # fmt: skip
            return Context(tools, KeywordDecomposer(), planner, budget=budget, stop_after=stop_after)
        chars = settings.retriever.verify_chunk_chars
        reader = ModelReader(self._reader(llm, recorder), self.index.papers)
        judge = make_judge(settings.grounding, llm=llm) if settings.grounding.verify else None
        if settings.llm.planning == "offline":  # the reader (and the judge) are the run's only model calls
            verifier, hyde, decomposer = GateVerifier(self.gate), None, KeywordDecomposer()
        else:
            verifier = LLMVerifier(
                llm, papers=self.index.papers, chunks=self.index.chunk_by_id, chunk_chars=chars, recorder=recorder
            )
            hyde, decomposer = LLMHyde(llm, recorder=recorder), LLMDecomposer(llm, recorder=recorder)
        tools = ToolContext(self.index, settings, verifier, reader, reranker, self.gate, hyde, judge, recorder)
        planner_model = llm.bind_tools(agent_tools(settings)) if planner == "llm" else None
        return Context(tools, decomposer, planner, planner_model, llm, budget, stop_after=stop_after)

    def _reader(self, llm: LLM, recorder: TraceRecorder) -> LLMReader | CompactReader:
        """The reader ``llm.reader`` names: the two-stage Lit3R reader or the compact one for small models."""
        settings = self.settings
        if settings.llm.reader == "compact":
            compact = settings.llm.compact
            return CompactReader(
                llm, _extractive_fallback, passages=compact.passages, passage_chars=compact.passage_chars,
                min_overlap=settings.grounding.min_overlap, verbatim=settings.grounding.judge == "exact",
                recorder=recorder,
            )  # fmt: skip
        chars = settings.retriever.verify_chunk_chars
        return LLMReader(llm, _extractive_fallback, chunk_chars=chars, recorder=recorder)

    def _invoke(self, graph: CompiledStateGraph, context: Context, inputs: dict[str, Any], thread_id: str | None):
        if thread_id is None:
            return graph.invoke(inputs, config=run_config(thread_id, context.max_turns), context=context)
        # a thread turn is checkpointed once, when it ends (not after every step), and only the thread's latest
        # checkpoint is kept: Thread.history reads the latest state alone (a thread's turns live in its messages)
        config = run_config(thread_id, context.max_turns)
        state = graph.invoke(inputs, config=config, context=context, durability="exit")
        keep_latest_checkpoint(self._checkpointer, thread_id)
        return state

    def _inputs(self, question: str, options: Sequence[str] | None, allowed_papers: Sequence[str] | None) -> dict:
        """The graph's input; :class:`UserError` for an empty question, :class:`NotFound` for unknown papers."""
        question = " ".join(question.split())
        if not question:
            raise UserError("the question is empty")
        return {
            "question": question,
            "options": list(options) if options else None,
            "allowed_papers": self.check_papers(allowed_papers),
        }

    def reply(
        self,
        question: str,
        *,
        options: Sequence[str] | None = None,
        allowed_papers: Sequence[str] | None = None,
        thread_id: str | None = None,
        planner: str | None = None,
        max_seconds: float | None = None,
        on_event: Listener | None = None,
    ) -> Reply:
        """Answer ``question`` with citations and write its trace: the answer, its document, its turn.

        With ``thread_id`` the question is one turn of that thread (its pool and citation numbers carry over),
        answered as asked: :meth:`Thread.reply` rewrites follow-ups first.
        """
        if thread_id is not None:
            thread = self.thread(thread_id)
            return thread.reply_as_asked(
                question, options=options, allowed_papers=allowed_papers, planner=planner, on_event=on_event
            )
        inputs = self._inputs(question, options, allowed_papers)
        context = self.context(planner=planner, max_seconds=max_seconds, on_event=on_event)
        state = self._invoke(self.graph, context, inputs, None)
        return self.finish_reply(context, state, None)

    def ask(self, question: str, **options: Any) -> Answer:
        """:meth:`reply`'s answer alone (the answer names its trace file)."""
        return self.reply(question, **options).answer

    def retrieve(self, question: str, *, allowed_papers: Sequence[str] | None = None) -> Retrieval:
        """The agent's retrieval for ``question``, stopped before the reader (no trace file is written)."""
        context = self.context(stop_after="retrieval")
        state = self._invoke(self.graph, context, self._inputs(question, None, allowed_papers), None)
        pool = sorted((state.get("pool") or {}).items(), key=lambda item: -item[1])
        return Retrieval(
            question=state["question"],
            pool=pool,
            final_papers=[tuple(p) for p in state.get("final_papers") or []],
            best_reranker_score=state.get("best_reranker_score"),
            rounds=state.get("round", 0),
            subqueries=list(state.get("subqueries") or []),
            verdicts=[Verdict.model_validate(v) for v in state.get("verdicts") or []],
            stop_reason=state.get("stop_reason"),
            events=list(context.recorder.events),
        )

    def finish(self, context: Context, state: dict[str, Any], thread_id: str | None, **extra: Any) -> Answer:
        """Write the run's trace (``extra`` adds top-level keys, e.g. a chat turn's rewrite) and return the final
        answer naming it."""
        trace_id = new_trace_id()
        path = trace_path(self.settings, trace_id)
        answer = Answer.model_validate(state["answer"]).model_copy(update={"trace_path": str(path)})
        write_trace(
            path,
            context.recorder.events,
            answer,
            trace_id=trace_id,
            thread_id=thread_id,
            planner=context.planner,
            stop_reason=state.get("stop_reason"),
            stop_detail=state.get("stop_detail"),
            verdicts=state.get("verdicts", []),
            budget=context.budget.snapshot(),
            **run_settings(self.settings),
            **extra,
        )
        return answer

    def finish_reply(
        self, context: Context, state: dict[str, Any], thread_id: str | None, message: str | None = None, **extra: Any
    ) -> Reply:
        """:meth:`finish`, and the answer's document; a thread turn's position comes from the run's own state
        (its messages), not from reading the thread store again."""
        answer = self.finish(context, state, thread_id, **({"message": message} if message else {}), **extra)
        turn = len(turns_of(state)) - 1 if thread_id is not None else None
        document = answer_document(answer, self.index.papers, thread_id=thread_id, message=message, turn=turn)
        return Reply(answer, document, turn)

    # ------------------------------------------------------------ threads

    def thread(self, thread_id: str | None = None) -> Thread:
        """The thread with this id (a new one when None); its state lives in the thread store."""
        return Thread(self, thread_id or f"chat-{new_trace_id()}")

    def has_thread(self, thread_id: str) -> bool:
        """Whether the thread store holds answered turns of ``thread_id``."""
        return bool(self.thread(thread_id).history())

    def check_thread(self, thread_id: str, *, new: bool = False) -> str:
        """The thread a surface's request names, checked before it runs: :class:`NotFound` (``unknown_thread``)
        for an id with no turns in the thread store unless ``new`` (the caller explicitly starts that thread),
        :class:`UserError` for ``new`` with an id that already has turns."""
        exists = self.has_thread(thread_id)
        if new and exists:
            raise UserError(f"thread {thread_id!r} already exists: continue it without new_thread", "thread_exists")
        if not new and not exists:
            raise NotFound(f"no thread {thread_id!r}: start one with new_thread=true", "unknown_thread")
        return thread_id

    def threaded_graph(self) -> CompiledStateGraph:
        """The graph compiled with the thread store (opened on first use)."""
        with self._lock:
            if self._threaded is None:
                if self._checkpointer is None:
                    self._checkpointer = self._open_threads()
                self._threaded = build_graph(self._checkpointer)
            return self._threaded

    def _open_threads(self) -> BaseCheckpointSaver:
        """The SQLite checkpointer of ``<home>/threads.sqlite``, closed with the session."""
        from langgraph.checkpoint.sqlite import SqliteSaver

        self.settings.home.mkdir(parents=True, exist_ok=True)
        return self._stack.enter_context(SqliteSaver.from_conn_string(str(self.settings.home / THREADS_FILE)))

    def thread_lock(self, thread_id: str) -> threading.Lock:
        """The lock that serialises the turns of one thread."""
        with self._lock:
            return self._thread_locks.setdefault(thread_id, threading.Lock())

    # ------------------------------------------------------------ life cycle

    def close(self) -> None:
        """Close what the session opened (the thread store, the local model server)."""
        self._stack.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def keep_latest_checkpoint(checkpointer: BaseCheckpointSaver | None, thread_id: str) -> None:
    """Delete the thread's checkpoints (and their pending writes) but the latest of each namespace.

    The SQLite store is pruned in SQL (langgraph's ``prune`` is not implemented there; the graph has no delta
    channels, so the latest checkpoint holds the whole state); another store is asked to ``prune``.
    """
    conn = getattr(checkpointer, "conn", None)
    if checkpointer is None:
        return
    if conn is None:
        try:
            checkpointer.prune([thread_id], strategy="keep_latest")
        except NotImplementedError:  # a store that cannot prune keeps every turn's checkpoint
            logger.info("the thread store %s cannot prune; thread %s keeps its checkpoints", checkpointer, thread_id)
        return
    with checkpointer.lock:  # type: ignore[attr-defined]
        latest = (
            "(select max(checkpoint_id) from checkpoints c"
            " where c.thread_id = t.thread_id and c.checkpoint_ns = t.checkpoint_ns)"
        )
        conn.execute(f"delete from writes as t where thread_id = ? and checkpoint_id != {latest}", (thread_id,))
        conn.execute(f"delete from checkpoints as t where thread_id = ? and checkpoint_id != {latest}", (thread_id,))
        conn.commit()


class Thread:
    """One conversation of a :class:`Session`: questions answered in turn, follow-ups rewritten first."""

    def __init__(self, session: Session, thread_id: str) -> None:
        self.session = session
        self.thread_id = thread_id

    def history(self) -> list[ChatTurn]:
        """The thread's answered turns, oldest first (empty for a new thread)."""
        graph = self.session.threaded_graph()
        return turns_of(graph.get_state(run_config(self.thread_id)).values)

    def delete(self) -> None:
        """Remove the thread's checkpoints from the thread store (its turns, pool and citation numbers)."""
        graph = self.session.threaded_graph()
        with self.session.thread_lock(self.thread_id):
            graph.checkpointer.delete_thread(self.thread_id)

    def reply(
        self,
        message: str,
        *,
        planner: str | None = None,
        on_event: Listener | None = None,
        allowed_papers: Sequence[str] | None = None,
    ) -> Reply:
        """Answer ``message`` as the thread's next turn; the answer's ``question`` is the standalone question
        that was answered (a follow-up is rewritten first), the document's ``message`` what the user wrote.
        ``allowed_papers``: answer from these papers only (e.g. a library filter's); a follow-up is answered
        from the papers of these the previous turn cited (:meth:`lit3r.agent.rewrite.Rewrite.allowed`)."""
        message = " ".join(message.split())
        if not message:
            raise UserError("the message is empty")
        with self.session.thread_lock(self.thread_id):
            context = self.session.context(planner=planner, on_event=on_event)
            turns = self.history()[-HISTORY_TURNS:]
            rewrite = rewrite_followup(message, turns, context.llm, context.recorder)
            state = self._run(context, rewrite.question, None, rewrite.allowed(allowed_papers))
            return self.session.finish_reply(
                context, state, self.thread_id, message=rewrite.message, rewrite=rewrite.model_dump()
            )

    def ask(
        self,
        message: str,
        *,
        planner: str | None = None,
        on_event: Listener | None = None,
        allowed_papers: Sequence[str] | None = None,
    ) -> Answer:
        """:meth:`reply`'s answer alone."""
        return self.reply(message, planner=planner, on_event=on_event, allowed_papers=allowed_papers).answer

    def reply_as_asked(
        self,
        question: str,
        *,
        options: Sequence[str] | None = None,
        allowed_papers: Sequence[str] | None = None,
        planner: str | None = None,
        on_event: Listener | None = None,
    ) -> Reply:
        """Answer ``question`` as asked (no rewrite) as the thread's next turn."""
        with self.session.thread_lock(self.thread_id):
            context = self.session.context(planner=planner, on_event=on_event)
            state = self._run(context, question, options, allowed_papers)
            return self.session.finish_reply(context, state, self.thread_id)

    def _run(
        self,
        context: Context,
        question: str,
        options: Sequence[str] | None = None,
        allowed_papers: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        inputs = self.session._inputs(question, options, allowed_papers)
        return self.session._invoke(self.session.threaded_graph(), context, inputs, self.thread_id)


class ChatSession:
    """A conversation in one thread of ``<home>/threads.sqlite`` that owns its session (the documented Python
    API of ``lit3r chat``): ``ChatSession(settings, thread_id)``, then :meth:`ask` per message.

    Args:
        settings: All settings.
        thread_id: The thread to open or resume; None starts a new one (see :attr:`thread_id`).
        **options: Passed to :class:`Session` (index, reranker, chat_model, planner, gate, checkpointer).
    """

    def __init__(self, settings: Settings, thread_id: str | None = None, **options: Any) -> None:
        self.session = Session(settings, **options)
        self.thread = self.session.thread(thread_id)

    @property
    def thread_id(self) -> str:
        return self.thread.thread_id

    def history(self) -> list[ChatTurn]:
        """The thread's answered turns, oldest first."""
        return self.thread.history()

    def ask(self, message: str, allowed_papers: Sequence[str] | None = None) -> Answer:
        """Answer ``message`` in the thread (a follow-up is rewritten into a standalone question first)."""
        return self.thread.ask(message, allowed_papers=allowed_papers)

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> ChatSession:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
