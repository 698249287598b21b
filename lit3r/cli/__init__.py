"""The ``lit3r`` command line.

Human-readable output goes to the terminal; with ``--json`` a command prints
exactly one JSON document on stdout and its progress and warnings on stderr.
"""

from lit3r.cli import chat as _chat  # noqa: F401  (registers the chat command)
from lit3r.cli import check as _check  # noqa: F401  (registers the check command)
from lit3r.cli import corpus as _corpus  # noqa: F401  (registers the corpus commands)
from lit3r.cli import mcp as _mcp  # noqa: F401  (registers lit3r mcp and lit3r mcp config)
from lit3r.cli import serve as _serve  # noqa: F401  (registers the serve command)
from lit3r.cli import traces as _traces  # noqa: F401  (registers trace replay and trace diff)
from lit3r.cli import watch as _watch  # noqa: F401  (registers the watch command)
from lit3r.cli.agent import trace_app
from lit3r.cli.app import app
from lit3r.cli.evaluate import eval_app

app.add_typer(eval_app, name="eval")
app.add_typer(trace_app, name="trace")

__all__ = ["app"]
