"""``ask()``: answer one question with the agent graph and write its trace.

It builds the run's :class:`Context` (index, reranker, calibrated gate, budget, trace recorder, and
the LLM pieces when a chat model is configured), runs the graph, and writes the trace to
``<home>/traces/<trace id>.json``. With a ``thread_id`` the graph state is kept between calls in
``<home>/threads.sqlite`` (or the given checkpointer), so questions can follow each other in a thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver

from lit3r.agent.context import Context, LLMReaderAdapter, PlannerKind
from lit3r.agent.llm_planning import LLMDecomposer, LLMHyde, LLMVerifier
from lit3r.agent.llm_reader import LLMReader
from lit3r.agent.tools import AGENT_TOOLS
from lit3r.agent.trace import TraceRecorder, write_trace
from lit3r.graphs.agent import build_graph, run_config
from lit3r.grounding.judges import make_judge
from lit3r.index.corpus_index import CorpusIndex
from lit3r.llm.budget import Budget
from lit3r.llm.client import make_chat_model
from lit3r.llm.errors import LLMConfigError
from lit3r.llm.local_server import local_llm
from lit3r.llm.wrapper import LLM
from lit3r.models import Answer, Chunk
from lit3r.prompts.common import AnswerSpec
from lit3r.retrieval.gate import load_gate
from lit3r.retrieval.rerankers import Reranker
from lit3r.retrieval.rerankers.factory import reranker_for_index
from lit3r.settings import Settings
from lit3r.tools.reader import extractive_answer

FROM_SETTINGS: Any = object()
"""Default of ``reranker``: load the one ``settings.reranker`` names."""
THREADS_FILE = "threads.sqlite"


def new_trace_id() -> str:
    """A sortable, unique trace id: UTC time plus a random suffix."""
    import uuid

    return f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


def trace_path(settings: Settings, trace_id: str) -> Path:
    """Where the trace with this id is written."""
    return settings.home / "traces" / f"{trace_id}.json"


def _extractive_fallback(question: str, chunks: Sequence[Chunk], spec: AnswerSpec) -> Answer:
    """The LLM reader's deterministic fallback: the extractive reader over the same chunks and options."""
    return extractive_answer(question, list(chunks), options=list(spec.options.values()) or None)


def build_context(
    settings: Settings,
    *,
    planner: PlannerKind = "fixed",
    index: CorpusIndex | None = None,
    reranker: Reranker | None = FROM_SETTINGS,
    chat_model: BaseChatModel | None = None,
    max_seconds: float | None = None,
) -> Context:
    """The run-scoped context for one question.

    Without a chat model (``settings.llm.provider == 'none'`` and no ``chat_model``) everything is
    offline: keyword decomposition, the gate verifier, the extractive reader. With one, the
    decomposer, verifier, HyDE writer and reader are LLM-backed, and ``planner='llm'`` binds the six tools.
    With ``settings.grounding.verify`` the claim judge is built here, once per run (:func:`make_judge`).
    """
    index = index if index is not None else CorpusIndex.open(settings)
    if reranker is FROM_SETTINGS:
        reranker = reranker_for_index(settings.reranker, index)
    recorder = TraceRecorder()
    budget = Budget.for_question(settings.llm, max_seconds=max_seconds, max_rounds=settings.retriever.max_rounds)
    context = Context(
        index=index,
        settings=settings,
        reranker=reranker,
        gate=load_gate(settings),
        planner="fixed",
        recorder=recorder,
        budget=budget,
    )
    if chat_model is None and settings.llm.enabled:
        chat_model = make_chat_model(settings.llm)
    if chat_model is None:
        if planner == "llm":
            raise LLMConfigError("planner 'llm' needs a chat model: set llm.provider (and llm.base_url or a key)")
        if settings.grounding.verify:
            context.judge = make_judge(settings.grounding)
        return context
    note = recorder.record
    context.llm = LLM(chat_model, settings.llm, recorder=recorder, budget=budget)
    context.decomposer = LLMDecomposer(context.llm, recorder=note)
    context.verifier = LLMVerifier(
        context.llm,
        papers=index.papers,
        chunks=index.chunk_by_id,
        chunk_chars=settings.retriever.verify_chunk_chars,
        recorder=note,
    )
    context.hyde = LLMHyde(context.llm, recorder=note)
    reader = LLMReader(
        context.llm, _extractive_fallback, chunk_chars=settings.retriever.verify_chunk_chars, recorder=note
    )
    context.reader = LLMReaderAdapter(reader, index.papers)
    if settings.grounding.verify:
        context.judge = make_judge(settings.grounding, llm=context.llm)
    if planner == "llm":
        bound = chat_model.bind_tools(AGENT_TOOLS)
        context.planner_model = LLM(bound, settings.llm, recorder=recorder, budget=budget)  # type: ignore[arg-type]
        context.planner = "llm"
    return context


def run_agent(
    context: Context,
    question: str,
    *,
    options: Sequence[str] | None = None,
    allowed_papers: Sequence[str] | None = None,
    thread_id: str | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
) -> dict[str, Any]:
    """Run the graph for one question and return its final state."""
    graph = build_graph(checkpointer)
    inputs = {
        "question": question,
        "options": list(options) if options else None,
        "allowed_papers": list(allowed_papers) if allowed_papers is not None else None,
    }
    return graph.invoke(inputs, config=run_config(thread_id, context.max_turns), context=context)


def ask(
    question: str,
    *,
    settings: Settings,
    thread_id: str | None = None,
    options: Sequence[str] | None = None,
    planner: PlannerKind = "fixed",
    allowed_papers: Sequence[str] | None = None,
    index: CorpusIndex | None = None,
    reranker: Reranker | None = FROM_SETTINGS,
    chat_model: BaseChatModel | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    max_seconds: float | None = None,
) -> Answer:
    """Answer ``question`` with citations; the returned answer names its trace file.

    Args:
        question: The question.
        settings: All settings (``home`` holds the index, the traces and the chat threads).
        thread_id: Keep the graph state under this id between calls (chat); None: a one-off question.
        options: Answer options of a multiple-choice question.
        planner: 'fixed' (Lit3R sequence, no model needed) or 'llm' (the chat model calls the tools).
        allowed_papers: Restrict retrieval to these paper ids.
        index: An opened index (default: the one built for ``settings``).
        reranker: A reranker, None for none; default: the one ``settings.reranker`` names.
        chat_model: A chat model to use instead of the one ``settings.llm`` configures.
        checkpointer: Where thread state is kept (default with a ``thread_id``: ``<home>/threads.sqlite``).
        max_seconds: Wall-clock budget; when it runs out the answer step is forced.

    With ``settings.llm.provider == 'local'`` (and no ``chat_model``) llama.cpp's server is started for this
    question and stopped after it; callers answering many questions wrap them in one :func:`local_llm`.
    """
    question = " ".join(question.split())
    if not question:
        raise ValueError("the question is empty")
    with ExitStack() as stack:
        if chat_model is None:  # provider 'local': llama.cpp's server runs for this question
            settings = stack.enter_context(local_llm(settings))
        context = build_context(
            settings, planner=planner, index=index, reranker=reranker, chat_model=chat_model, max_seconds=max_seconds
        )
        if thread_id is not None and checkpointer is None:
            from langgraph.checkpoint.sqlite import SqliteSaver

            settings.home.mkdir(parents=True, exist_ok=True)
            checkpointer = stack.enter_context(SqliteSaver.from_conn_string(str(settings.home / THREADS_FILE)))
        state = run_agent(
            context,
            question,
            options=options,
            allowed_papers=allowed_papers,
            thread_id=thread_id,
            checkpointer=checkpointer,
        )
    return finish_run(settings, context, state, thread_id)


def finish_run(
    settings: Settings, context: Context, state: dict[str, Any], thread_id: str | None, **extra: Any
) -> Answer:
    """Write the run's trace (``extra`` adds top-level keys, e.g. a chat turn's rewrite) and return the
    final answer naming it."""
    trace_id = new_trace_id()
    path = trace_path(settings, trace_id)
    answer = Answer.model_validate(state["answer"]).model_copy(update={"trace_path": str(path)})
    write_trace(
        path,
        context.recorder.events,
        answer,
        trace_id=trace_id,
        thread_id=thread_id,
        planner=context.planner,
        stop_reason=state.get("stop_reason"),
        verdicts=state.get("verdicts", []),
        budget=context.budget.snapshot(),
        **extra,
    )
    return answer
