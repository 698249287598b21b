"""The application layer: a :class:`~lit3r.app.session.Session` that opens what answering needs once and serves
questions (:meth:`~lit3r.app.session.Session.ask`), threads (:class:`~lit3r.app.session.Thread`) and retrieval
runs (:meth:`~lit3r.app.session.Session.retrieve`), claim checks (:mod:`lit3r.app.check`: per-paper verdicts on a
claim with verified quotes), and the trace documents it writes (:mod:`lit3r.app.traces`).
Every surface above it (the CLI, the evaluations, servers) runs questions through it.
"""
