"""The ``lit3r`` application object, its global options and the consoles every command shares.

Also the checks every command makes of its home folder (:func:`existing_home`,
:func:`writable_home`), the top-level translation of store errors into one clear
line, and :func:`printable`, which every plain printer uses so that text from a
paper or a question never sends control sequences to the terminal.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.logging import RichHandler
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text
from typer.core import TyperGroup

from lit3r.corpus.store import StoreError
from lit3r.settings import Settings, load_settings

EXIT_CODES = {"user": 1, "not_found": 1, "unavailable": 1, "upstream": 1}
"""The exit code of each kind of app error (:mod:`lit3r.app.errors`); the README documents 1 for all."""


class Lit3rGroup(TyperGroup):
    """Runs a command; an app error (a bad argument, an unknown id, a set-up that cannot serve it, a failed model
    call) and a corpus store that cannot be opened or written end in one clear line, not a traceback."""

    def invoke(self, ctx: Any) -> Any:
        from lit3r.app.errors import classify

        try:
            return super().invoke(ctx)
        except StoreError as exc:
            fail(str(exc))
        except sqlite3.Error as exc:  # e.g. a full disk or a read-only file under the home folder
            fail(f"the corpus store under {state.settings.home} failed: {exc}")
        except Exception as exc:
            error = classify(exc)
            if error is None:
                raise
            fail(error.message, EXIT_CODES[error.kind])


app = typer.Typer(
    cls=Lit3rGroup,
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,  # help text is plain: rich markup would eat literal '[n]'
    help="lit3r: answers over scientific papers that trace every claim to a passage.",
)
out = Console()
err = Console(stderr=True, soft_wrap=True)


class State:
    settings: Settings
    preset: str | None = None
    """The ``--preset`` given (``lit3r mcp config`` passes it on)."""


state = State()

READING_COMMANDS = frozenset({"ask", "chat", "serve", "mcp", "demo"})
"""The commands that answer a user's questions: given no preset, they read with the local model when it is
installed (:func:`default_preset`). Evaluations, the claim check and the corpus commands keep the offline defaults
unless told otherwise, so that what they measure does not depend on what happens to be installed."""


def default_preset(command: str | None, settings: Settings) -> str | None:
    """'auto' (the local reader, the offline reader its fallback) for a reading command when no chat model is
    configured and the local runtime and its model are installed; None (the defaults) otherwise."""
    if command not in READING_COMMANDS or settings.llm.provider != "none":
        return None
    from lit3r.llm.local_server import local_unavailable

    return "auto" if local_unavailable(settings.llm.local) is None else None


@app.callback()
def main(
    ctx: typer.Context,
    home: Annotated[Path | None, typer.Option(help="Corpus home folder (default ./.lit3r, or LIT3R_HOME).")] = None,
    preset: Annotated[
        str | None,
        typer.Option(
            envvar="LIT3R_PRESET",
            help="Named preset (default, qasper, local, auto) or a settings JSON file. Without one, ask, chat, "
            "serve, mcp and demo read with the local model when it is installed ('auto'); 'default' keeps them "
            "offline.",
        ),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log debug messages.")] = False,
) -> None:
    """lit3r: answers over scientific papers that trace every claim to a passage."""
    level = logging.DEBUG if verbose else logging.WARNING
    handler = RichHandler(console=err, show_path=False, level=level)  # libraries that set DEBUG on their own
    logging.basicConfig(level=level, format="%(message)s", handlers=[handler])  # loggers (bm25s) stay quiet
    state.preset = preset
    try:
        state.settings = load_settings(preset, home=home)
        if preset is None and (chosen := default_preset(ctx.invoked_subcommand, state.settings)):
            state.settings = load_settings(chosen, home=home)
    except (ValueError, ValidationError) as exc:
        fail(f"invalid settings: {exc}")


def fail(message: str, code: int = 1) -> None:
    err.print(Text.assemble(("error:", "bold red"), " ", printable(message)), highlight=False)
    raise typer.Exit(code)


def existing_home() -> Path:
    """The home folder of a command that only reads: it must exist (a mistyped --home is not created)."""
    home = state.settings.home
    if not home.exists():
        fail(
            f"no lit3r home at {home}: the folder does not exist "
            "(check --home or LIT3R_HOME; `lit3r ingest` creates it)"
        )
    if not home.is_dir():
        fail(f"--home {home} is a file, not a folder")
    return home


def writable_home() -> Path:
    """The home folder of a command that writes, created when missing; a clear error when that is impossible."""
    home = state.settings.home
    if home.exists() and not home.is_dir():
        fail(f"--home {home} is a file, not a folder")
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"cannot create the lit3r home {home}: {exc.strerror or exc}")
    if not os.access(home, os.W_OK | os.X_OK):
        fail(f"the lit3r home {home} is not writable (permission denied or a read-only file system)")
    return home


_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
"""Control characters (all but tab and new line) and the invisible marks that reorder text (bidi controls)."""


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: control characters and bidi controls shown as escapes (``\\x1b``)."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


class RateColumn(ProgressColumn):
    """Items per second, named by the task's ``unit`` field (``12.3 chunks/s``)."""

    def render(self, task: Task) -> Text:
        unit = task.fields.get("unit", "")
        return Text(f"{task.speed:.1f} {unit}/s" if task.speed else f"- {unit}/s", style="cyan")


def progress_bar(quiet: bool = False) -> Progress:
    """Progress on stderr (done of all, rate, time spent, time left); off when ``quiet`` or stderr is no terminal."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=err,
        transient=True,
        disable=quiet or not err.is_terminal,
    )
