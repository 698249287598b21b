"""The answer runs behind the routes (synchronous: they run in the runtime's executor): a question, a thread
turn and a chat-completions turn, each through the shared session, each recorded in the server's catalogue.

The answer document and the turn's position come from the app layer (:class:`~lit3r.app.session.Reply`); what
is the server's own is the catalogue: which threads it made, each turn's message and trace, and which thread a
chat-completions conversation continues in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lit3r.agent.rewrite import HISTORY_TURNS
from lit3r.app.export import with_export
from lit3r.app.filters import library_restriction as filters_restriction
from lit3r.app.session import Reply, Session, Thread
from lit3r.llm.trace import Listener
from lit3r.server.catalog import Catalog, fingerprint
from lit3r.server.schemas import AskRequest, LibraryFilters


def ask(
    session: Session,
    catalog: Catalog,
    request: AskRequest,
    max_seconds: float | None,
    on_event: Listener | None = None,
) -> dict:
    """One question (``thread_id``: as that thread's next turn, answered as asked); its answer document."""
    allowed = library_restriction(session, request, request.papers)
    reply = session.reply(
        request.question,
        options=request.options,
        allowed_papers=allowed,
        thread_id=request.thread_id,
        planner=request.planner,
        max_seconds=max_seconds,
        on_event=on_event,
    )
    if request.thread_id is not None:
        catalog.add_turn(request.thread_id, reply.turn, reply.answer.question, reply.document.trace_id)
    document = with_export(reply.document, reply.answer, session.index.papers, request.format, request.citation_style)
    return document.model_dump(mode="json")


def library_restriction(
    session: Session, filters: LibraryFilters, papers: Sequence[str] | None = None
) -> list[str] | None:
    """The paper ids ``papers`` and the request's library filters leave (None: no restriction); a 422 for a
    year it cannot read, a 404 ``no_matching_papers`` when none passes."""
    return filters_restriction(
        session.index.papers, papers, collections=filters.collections, tags=filters.tags, year=filters.year,
        authors=filters.authors,
    )  # fmt: skip


def thread_exists(session: Session, catalog: Catalog, thread_id: str) -> bool:
    """A thread this server created, or one with answered turns in the thread store (e.g. from `lit3r chat`)."""
    return catalog.thread(thread_id) is not None or session.has_thread(thread_id)


def turn(
    thread: Thread,
    catalog: Catalog,
    message: str,
    planner: str | None = None,
    on_event: Listener | None = None,
    allowed: Sequence[str] | None = None,
) -> Reply:
    """The thread's next turn (a follow-up is rewritten first), recorded in the catalogue; ``allowed``: answer
    from these papers only (a library filter's)."""
    reply = thread.reply(message, planner=planner, on_event=on_event, allowed_papers=allowed)
    catalog.add_turn(thread.thread_id, reply.turn, reply.document.message, reply.document.trace_id)
    return reply


def history(session: Session, catalog: Catalog, thread_id: str) -> list[dict[str, Any]]:
    """The thread's answered turns, oldest first, with the message and trace of those made here."""
    recorded = catalog.turns(thread_id)
    turns = []
    for position, chat_turn in enumerate(session.thread(thread_id).history()):
        extra = recorded.get(position, {})
        turns.append({**chat_turn.model_dump(), "message": extra.get("message"), "trace_id": extra.get("trace_id")})
    return turns


def conversation_thread(
    session: Session,
    catalog: Catalog,
    prior: Sequence[tuple[str, str]],
    planner: str | None,
    allowed: Sequence[str] | None = None,
) -> Thread:
    """The thread that continues a chat-completions conversation.

    The conversation so far is looked up by its fingerprint (each reply this server gave is remembered with the
    messages before it). One it has not seen (edited, or from elsewhere) gets a new thread in which its last
    :data:`~lit3r.agent.rewrite.HISTORY_TURNS` user messages are asked first, so that the pool, the citation
    numbers and the follow-up rewrite see those turns, as ``lit3r chat`` would (from the ``allowed`` papers
    only, when the request restricts its turn).
    """
    known = catalog.conversation(fingerprint(prior)) if prior else None
    if known is not None:
        return session.thread(known)
    thread = session.thread()
    catalog.add_thread(thread.thread_id, origin="openai")
    for _role, text in [m for m in prior if m[0] == "user"][-HISTORY_TURNS:]:
        turn(thread, catalog, text, planner, allowed=allowed)
    return thread


def remember_reply(catalog: Catalog, prior: Sequence[tuple[str, str]], message: str, reply: str, thread_id: str):
    """Remember which thread the conversation continues in once the client sends it back with this reply."""
    catalog.remember_conversation(fingerprint([*prior, ("user", message), ("assistant", reply)]), thread_id)
