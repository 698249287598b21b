"""Multi-turn chat: a :class:`ChatSession` keeps a conversation in a thread of ``<home>/threads.sqlite``.

Each message goes through three steps:

1. **Rewrite.** A follow-up becomes a standalone question (:func:`rewrite_followup`, one ``rewrite`` trace
   event). With a chat model, a structured-output call reads the last :data:`HISTORY_TURNS` turns (questions
   and answers, inside tags, as data) and writes the question; if the call fails, the offline rule applies.
   The offline rule (:func:`rule_rewrite`) never invents content: when the follow-up is *short* (fewer than
   :data:`SHORT_TERMS` key terms of its own) or *refers back* (:data:`REFERS_BACK`: 'it', 'its', 'they',
   'them', 'their', 'this', 'these', 'those', 'the same', 'that paper', 'the method' and the like, or a
   message opening with 'what about', 'how about', 'and', 'also'), the key terms of the previous standalone
   question that the follow-up lacks are put in front of it: ``"<terms>: <follow-up>"``. Key terms are words
   of three or more characters, or with a digit or an inner capital (F1, GPT-4, BERT), that are not stop words
   (:data:`lit3r.retrieval.planning.STOP_WORDS`), in order, at most :data:`MAX_TERMS`. The first message of a thread
   is never rewritten.
2. **Answer.** The agent graph answers the standalone question in the thread. The thread's state is
   checkpointed, so the pool of earlier questions is carried into the new one with decayed scores and
   citation numbers stay stable within the thread (:mod:`lit3r.agent.state`).
3. **Trace.** The trace (``<home>/traces/<id>.json``) holds the rewrite, the model call when there was one,
   and every step of the answer, plus the user's message and the thread id.

A session closed and opened again with the same home and thread id (another process, after a restart)
sees the same history and goes on with the same pool and citation numbers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from pydantic import BaseModel, Field

from lit3r.agent.api import (
    FROM_SETTINGS,
    THREADS_FILE,
    build_context,
    finish_run,
    new_trace_id,
    run_agent,
)
from lit3r.agent.context import PlannerKind
from lit3r.agent.trace import TraceRecorder
from lit3r.graphs.agent import build_graph, run_config
from lit3r.index.corpus_index import CorpusIndex
from lit3r.llm.client import make_chat_model
from lit3r.llm.errors import LLMConfigError, LLMError
from lit3r.llm.local_server import local_llm
from lit3r.llm.wrapper import LLM
from lit3r.models import Answer
from lit3r.prompts.chat import REWRITE_SYSTEM, render_rewrite
from lit3r.retrieval.planning import STOP_WORDS
from lit3r.retrieval.rerankers import Reranker
from lit3r.retrieval.rerankers.factory import reranker_for_index
from lit3r.settings import Settings
from lit3r.tools.reader.validate import marker_numbers

HISTORY_TURNS = 3
"""Earlier turns the model sees when it rewrites a follow-up."""
SHORT_TERMS = 3
"""A follow-up with fewer key terms than this is short: the offline rule completes it."""
MAX_TERMS = 8
"""At most this many key terms are put in front of a follow-up."""

_WORD = re.compile(r"[A-Za-z0-9]+(?:[-_./'][A-Za-z0-9]+)*")
REFERRING_NOUNS = (
    "paper", "method", "model", "approach", "work", "study", "dataset", "system", "technique", "benchmark", "metric",
    "result", "table", "figure", "author", "one",
)  # fmt: skip
"""Nouns that point back at something the conversation named after 'that' or 'the' ('that paper', 'the authors')."""
REFERS_BACK = re.compile(
    r"\b(?:it|its|they|them|their|theirs|this|these|those|the same)\b"
    rf"|\b(?:that|the) (?:{'|'.join(REFERRING_NOUNS)})s?\b"
    r"|\bthat\s*\?*$|^(?:what|how) about\b|^(?:and|also)\b",
    re.IGNORECASE,
)
"""Words and openings that refer to the conversation (see the module docstring)."""

RewriteMethod = Literal["first", "unchanged", "rule", "llm"]


class StandaloneQuestion(BaseModel):
    """The follow-up rewritten so that it stands alone."""

    question: str = Field(description="One standalone question; the follow-up itself when it already stands alone.")


class Rewrite(BaseModel):
    """How a chat message became the question the agent answered."""

    message: str = Field(description="The message as the user typed it (spacing folded).")
    question: str = Field(description="The standalone question the agent answered.")
    method: RewriteMethod = Field(
        description="'first' (no earlier turn), 'unchanged' (it stands alone), 'rule' (offline rule), 'llm'."
    )
    reason: str = Field(default="", description="Why: what the rule matched, or why the model was not used.")


class ChatTurn(BaseModel):
    """One answered turn of a thread, as kept in its checkpoint."""

    question: str = Field(description="The standalone question that was answered.")
    answer: str = Field(description="The answer text with its inline markers [n].")
    citations: dict[int, str] = Field(default_factory=dict, description="Marker number -> cited chunk id.")


def key_terms(text: str) -> list[str]:
    """The words of ``text`` that carry content (see the module docstring), in order, without repeats."""
    terms: dict[str, str] = {}
    for word in _WORD.findall(text):
        named = any(c.isdigit() for c in word) or any(c.isupper() for c in word[1:])
        if (named or len(word) >= 3) and word.lower() not in STOP_WORDS:
            terms.setdefault(word.lower(), word)
    return list(terms.values())


def rule_rewrite(message: str, previous: str | None) -> Rewrite:
    """The offline rewrite: the previous question's missing key terms in front of a short or referring message."""
    if previous is None:
        return Rewrite(message=message, question=message, method="first")
    own = {t.lower() for t in key_terms(message)}
    refers = REFERS_BACK.search(message)
    if refers is None and len(own) >= SHORT_TERMS:
        return Rewrite(message=message, question=message, method="unchanged", reason="stands alone")
    missing = [t for t in key_terms(previous) if t.lower() not in own][:MAX_TERMS]
    reason = f"refers back ({refers.group(0).strip()!r})" if refers else f"short ({len(own)} key terms)"
    if not missing:
        return Rewrite(message=message, question=message, method="unchanged", reason=f"{reason}; nothing to add")
    return Rewrite(message=message, question=f"{' '.join(missing)}: {message}", method="rule", reason=reason)


def llm_rewrite(llm: LLM, message: str, turns: Sequence[ChatTurn]) -> Rewrite:
    """The model's standalone question for ``message`` after ``turns``; the offline rule when the call fails."""
    prompt = render_rewrite(message, [(t.question, t.answer) for t in turns])
    messages = [SystemMessage(REWRITE_SYSTEM), HumanMessage(prompt)]
    try:
        question = " ".join(llm.structured(messages, StandaloneQuestion, name="rewrite").question.split())
        problem = "" if question else "the model wrote an empty question"
    except LLMError as exc:
        question, problem = "", f"the model call failed ({exc})"
    if problem:
        fallback = rule_rewrite(message, turns[-1].question)
        return fallback.model_copy(update={"reason": f"{problem}; {fallback.reason}"})
    method: RewriteMethod = "unchanged" if question == message else "llm"
    return Rewrite(message=message, question=question, method=method, reason="rewritten by the model")


def rewrite_followup(message: str, turns: Sequence[ChatTurn], llm: LLM | None, recorder: TraceRecorder) -> Rewrite:
    """The standalone question for ``message`` (one ``rewrite`` trace event; the model call records its own)."""
    name = "llm" if llm is not None and turns else "rule"
    with recorder.step("rewrite", name) as data:
        if llm is not None and turns:
            rewrite = llm_rewrite(llm, message, turns)
        else:
            rewrite = rule_rewrite(message, turns[-1].question if turns else None)
        data.update(rewrite.model_dump())
    return rewrite


def turns_of(values: dict[str, Any]) -> list[ChatTurn]:
    """The answered turns of a thread's checkpointed state: each question with its closing answer."""
    by_number = {n: c for c, n in (values.get("citation_numbers") or {}).items()}
    turns: list[ChatTurn] = []
    question: str | None = None
    answer: str | None = None
    for message in [*values.get("messages", []), HumanMessage("")]:
        if isinstance(message, HumanMessage):
            if question is not None and answer is not None:
                cited = {n: by_number[n] for n in marker_numbers(answer) if n in by_number}
                turns.append(ChatTurn(question=question, answer=answer, citations=cited))
            question, answer = message.text, None
        elif _closing(message):
            answer = message.text
    return turns


def _closing(message: AnyMessage) -> bool:
    """An AI message that calls no tool: the closing answer of a question."""
    return isinstance(message, AIMessage) and not message.tool_calls and bool(message.text)


def new_thread_id() -> str:
    """A fresh, sortable thread id."""
    return f"chat-{new_trace_id()}"


class ChatSession:
    """A conversation with the papers, kept in a LangGraph SQLite checkpointer.

    Args:
        settings: All settings; ``settings.home`` holds the index, the traces and ``threads.sqlite``.
        thread_id: The thread to open or resume; None starts a new one (see :attr:`thread_id`).
        index: An opened index (default: the one built for ``settings``).
        reranker: A reranker, None for none; default: the one ``settings.reranker`` names.
        chat_model: A chat model to use instead of the one ``settings.llm`` configures (None and no
            provider: offline, with the rule rewrite).
        planner: 'fixed' (the Lit3R sequence) or 'llm' (needs a chat model).
        checkpointer: Where threads are kept (default: ``<home>/threads.sqlite``, closed by :meth:`close`).

    With ``settings.llm.provider == 'local'`` (and no ``chat_model``) llama.cpp's server is started here and
    stopped by :meth:`close`.
    """

    def __init__(
        self,
        settings: Settings,
        thread_id: str | None = None,
        *,
        index: CorpusIndex | None = None,
        reranker: Reranker | None = FROM_SETTINGS,
        chat_model: BaseChatModel | None = None,
        planner: PlannerKind = "fixed",
        checkpointer: BaseCheckpointSaver | None = None,
    ) -> None:
        self.settings = settings
        self.thread_id = thread_id or new_thread_id()
        self.index = index if index is not None else CorpusIndex.open(settings)
        self.reranker = reranker_for_index(settings.reranker, self.index) if reranker is FROM_SETTINGS else reranker
        self._stack = ExitStack()
        if chat_model is None:  # provider 'local': llama.cpp's server runs while the session is open
            self.settings = settings = self._stack.enter_context(local_llm(settings))
        if chat_model is None and settings.llm.enabled:
            chat_model = make_chat_model(settings.llm)
        if planner == "llm" and chat_model is None:
            raise LLMConfigError("planner 'llm' needs a chat model: set llm.provider (and llm.base_url or a key)")
        self.chat_model = chat_model
        self.planner: PlannerKind = planner
        self.checkpointer = checkpointer if checkpointer is not None else self._open_threads()
        self._graph = build_graph(self.checkpointer)

    def _open_threads(self) -> BaseCheckpointSaver:
        """The SQLite checkpointer of ``<home>/threads.sqlite``, closed with the session."""
        from langgraph.checkpoint.sqlite import SqliteSaver

        self.settings.home.mkdir(parents=True, exist_ok=True)
        return self._stack.enter_context(SqliteSaver.from_conn_string(str(self.settings.home / THREADS_FILE)))

    def history(self) -> list[ChatTurn]:
        """The thread's answered turns, oldest first (empty for a new thread)."""
        return turns_of(self._graph.get_state(run_config(self.thread_id)).values)

    def ask(self, message: str) -> Answer:
        """Answer ``message`` in the thread; ``Answer.question`` is the standalone question that was answered."""
        message = " ".join(message.split())
        if not message:
            raise ValueError("the message is empty")
        context = build_context(
            self.settings, planner=self.planner, index=self.index, reranker=self.reranker, chat_model=self.chat_model
        )
        rewrite = rewrite_followup(message, self.history()[-HISTORY_TURNS:], context.llm, context.recorder)
        state = run_agent(context, rewrite.question, thread_id=self.thread_id, checkpointer=self.checkpointer)
        return finish_run(
            self.settings, context, state, self.thread_id, message=rewrite.message, rewrite=rewrite.model_dump()
        )

    def close(self) -> None:
        """Close the thread store this session opened (a given checkpointer is left open)."""
        self._stack.close()

    def __enter__(self) -> ChatSession:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
