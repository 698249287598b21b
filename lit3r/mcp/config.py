"""Ready client configurations for launching ``lit3r mcp`` from the common MCP hosts (``lit3r mcp config``).

Each host keeps its servers in a JSON file of its own shape; :func:`client_config` writes the entry for one
host with absolute paths: the ``lit3r`` executable of this installation, ``--home`` (and ``--preset``), and an
environment that keeps model libraries offline plus the ``LIT3R_`` settings in force now. Secrets are never
copied: a variable whose name holds KEY, TOKEN, SECRET or PASSWORD is left for the user to add.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

Client = Literal["claude-desktop", "claude-code", "vscode", "cursor"]
CLIENTS: dict[Client, str] = {
    "claude-desktop": "claude_desktop_config.json (Settings > Developer > Edit Config), under mcpServers",
    "claude-code": ".mcp.json at the project root (or `claude mcp add-json lit3r '<entry>'`), under mcpServers",
    "vscode": ".vscode/mcp.json of the workspace (or the user mcp.json), under servers",
    "cursor": "~/.cursor/mcp.json (or .cursor/mcp.json of a project), under mcpServers",
}
"""Where each host reads its server list."""
SERVER_NAME = "lit3r"
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def lit3r_executable() -> str:
    """The absolute path of this installation's ``lit3r`` script (beside the running interpreter, else on PATH)."""
    beside = Path(sys.executable).parent / "lit3r"
    if beside.is_file():
        return str(beside.absolute())
    found = shutil.which("lit3r")
    if found is None:
        raise FileNotFoundError("no lit3r executable beside the interpreter or on PATH: install lit3r (make install)")
    return str(Path(found).absolute())


ARGUMENT_VARIABLES = ("LIT3R_HOME", "LIT3R_PRESET")
"""Variables whose values the entry passes as arguments (``--home``, ``--preset``)."""


def launch_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a host should start the server with: offline model libraries and the ``LIT3R_`` settings
    set now, without secrets (the home and the preset travel as arguments)."""
    environ = os.environ if environ is None else environ
    settings = {
        k: v
        for k, v in sorted(environ.items())
        if k.startswith("LIT3R_") and k not in ARGUMENT_VARIABLES and not any(w in k.upper() for w in SECRET_WORDS)
    }
    return {**OFFLINE_ENV, **settings}


def stdio_entry(home: Path, preset: str | None = None, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The command, arguments and environment that start ``lit3r mcp`` over stdio."""
    args = ["--home", str(Path(home).absolute())]
    if preset:
        args += ["--preset", str(Path(preset).absolute()) if Path(preset).is_file() else preset]
    return {"command": lit3r_executable(), "args": [*args, "mcp"], "env": launch_env(environ)}


def client_config(
    client: Client,
    home: Path,
    *,
    preset: str | None = None,
    url: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The whole JSON document ``client`` reads, with the one ``lit3r`` server: launched over stdio, or, given
    ``url``, reached over streamable HTTP (start ``lit3r mcp --transport http`` yourself)."""
    if url is None:
        entry = stdio_entry(home, preset, environ)
        if client in ("vscode", "claude-code"):
            entry = {"type": "stdio", **entry}
    elif client == "claude-desktop":
        raise ValueError("Claude Desktop starts local servers over stdio only: use --transport stdio")
    else:
        entry = {"type": "http", "url": url} if client in ("vscode", "claude-code") else {"url": url}
    key = "servers" if client == "vscode" else "mcpServers"
    return {key: {SERVER_NAME: entry}}
