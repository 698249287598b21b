"""The application layer, the façade every surface asks (the CLI, the HTTP API and its OpenAI endpoint, MCP,
LangGraph Platform); see docs/ARCHITECTURE.md.

* :mod:`lit3r.app.session`: a :class:`~lit3r.app.session.Session` opens what answering needs once and serves
  questions (:meth:`~lit3r.app.session.Session.reply`), threads (:class:`~lit3r.app.session.Thread`) and
  retrieval runs; it checks the planner and paper ids (the one place).
* :mod:`lit3r.app.documents`: the answer document every surface sends, and the trace-event views.
* :mod:`lit3r.app.corpus`: papers, sections, chunks and search as every surface shows them.
* :mod:`lit3r.app.errors`: the four kinds of error a surface maps (user, not found, unavailable, upstream).
* :mod:`lit3r.app.check`: the claim check (per-paper verdicts on a claim with verified quotes).
* :mod:`lit3r.app.export`, :mod:`lit3r.app.filters`: answers with references, library filters.
* :mod:`lit3r.app.traces`, :mod:`lit3r.app.replay`, :mod:`lit3r.app.trace_diff`: trace documents.
"""
