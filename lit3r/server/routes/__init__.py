"""The API's routes, one module per resource; each reads the :class:`~lit3r.server.runtime.Runtime` from the
application state."""

from fastapi import Request

from lit3r.server.runtime import Runtime


def runtime_of(request: Request) -> Runtime:
    """The runtime of the application serving ``request``."""
    return request.app.state.runtime
