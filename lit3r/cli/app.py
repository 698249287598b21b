"""The ``lit3r`` application object, its global options and the consoles every command shares."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.logging import RichHandler
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from lit3r.settings import Settings, load_settings

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="lit3r: answers over scientific papers that trace every claim to a passage.",
)
out = Console()
err = Console(stderr=True, soft_wrap=True)


class State:
    settings: Settings
    preset: str | None = None
    """The ``--preset`` given (``lit3r mcp config`` passes it on)."""


state = State()


@app.callback()
def main(
    home: Annotated[Path | None, typer.Option(help="Corpus home folder (default ./.lit3r, or LIT3R_HOME).")] = None,
    preset: Annotated[str | None, typer.Option(help="Named preset (default, qasper) or a settings JSON file.")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log debug messages.")] = False,
) -> None:
    """lit3r: answers over scientific papers that trace every claim to a passage."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(message)s",
        handlers=[RichHandler(console=err, show_path=False)],
    )
    state.preset = preset
    try:
        state.settings = load_settings(preset, home=home)
    except (ValueError, ValidationError) as exc:
        fail(f"invalid settings: {exc}")


def fail(message: str, code: int = 1) -> None:
    err.print(f"[bold red]error:[/] {message}", markup=True, highlight=False)
    raise typer.Exit(code)


def progress_bar() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    )
