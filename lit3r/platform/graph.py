"""The graph LangGraph Platform serves (``langgraph.json`` names :func:`make_graph`).

A run's context is small and JSON (:class:`PlatformContext`: home, preset, planner). The graph is lit3r's agent
as one subgraph (:func:`lit3r.platform.embed.agent_subgraph`): input ``question`` (``options``, ``papers``),
output ``answer``, ``citations``, ``sufficient``, ``candidate_papers``, ``trace_id``; every trace step is
streamed as a custom event. Its node opens a :class:`~lit3r.app.session.Session` for the run's context the first
time that context is seen and reuses it after (index, models and graphs opened once per context). The graph is
compiled without a checkpointer: the platform brings its own.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel, Field

from lit3r.agent.context import PlannerKind
from lit3r.app.session import Session
from lit3r.platform.embed import agent_subgraph
from lit3r.settings import load_settings

GRAPH_NAME = "lit3r"


class PlatformContext(BaseModel):
    """What a run names: where the corpus is and how to answer (all JSON)."""

    home: str = Field(
        default_factory=lambda: os.environ.get("LIT3R_HOME", ".lit3r"),
        description="The corpus home folder (default: LIT3R_HOME, else ./.lit3r).",
    )
    preset: str | None = Field(default=None, description="A named preset (default, qasper, local) or a JSON file.")
    planner: PlannerKind = Field(default="fixed", description="'fixed' (Lit3R sequence) or 'llm'.")


_sessions: dict[tuple[str, str | None, str], Session] = {}
_lock = threading.Lock()


def session_for(context: PlatformContext | dict | None) -> Session:
    """The session of a run context, opened on first use and kept for the process's life."""
    context = PlatformContext.model_validate(context or {})
    key = (str(Path(context.home).resolve()), context.preset, context.planner)
    with _lock:
        if key not in _sessions:
            settings = load_settings(context.preset, home=Path(context.home))
            _sessions[key] = Session(settings, planner=context.planner)
        return _sessions[key]


def close_sessions() -> None:
    """Close every session opened here."""
    with _lock:
        for session in _sessions.values():
            session.close()
        _sessions.clear()


def make_graph() -> CompiledStateGraph:
    """lit3r's agent for LangGraph Platform: a run's context picks (and opens once) its session."""
    return agent_subgraph(session_for, context_schema=PlatformContext, name=GRAPH_NAME)
