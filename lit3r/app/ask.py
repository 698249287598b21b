"""``ask()``: answer one question in a session opened for it (what ``lit3r ask`` does)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lit3r.agent.context import PlannerKind
from lit3r.app.session import FROM_SETTINGS, Session
from lit3r.llm.trace import Listener
from lit3r.models import Answer
from lit3r.settings import Settings


def ask(
    question: str,
    *,
    settings: Settings,
    options: Sequence[str] | None = None,
    allowed_papers: Sequence[str] | None = None,
    planner: PlannerKind = "fixed",
    thread_id: str | None = None,
    max_seconds: float | None = None,
    reranker: Any = FROM_SETTINGS,
    on_event: Listener | None = None,
    **session: Any,
) -> Answer:
    """Answer ``question`` with citations; the returned answer names its trace file.

    ``session`` options go to :class:`~lit3r.app.session.Session` (index, chat_model, gate, checkpointer).
    Answering many questions? Open one :class:`Session` and call its ``ask``: the index, models and graph
    are then opened once. ``on_event`` gets each trace event as it completes (progress).
    """
    with Session(settings, reranker=reranker, planner=planner, **session) as opened:
        return opened.ask(
            question,
            options=options,
            allowed_papers=allowed_papers,
            thread_id=thread_id,
            max_seconds=max_seconds,
            on_event=on_event,
        )
