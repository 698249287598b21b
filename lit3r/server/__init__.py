"""``lit3r serve``: the HTTP API, the OpenAI-compatible endpoint and the web UI, in one process.

Every answer runs through one shared :class:`lit3r.app.session.Session` (the path ``lit3r ask`` runs), held by
:class:`~lit3r.server.holder.SessionHolder`, which swaps in a new session when a new index generation is
published. :func:`lit3r.server.app.create_app` builds the ASGI application; :mod:`lit3r.cli.serve` runs it
with uvicorn.
"""
