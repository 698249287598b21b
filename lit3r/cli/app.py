"""The ``lit3r`` application object, its global options and the consoles every command shares."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

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
    try:
        state.settings = load_settings(preset, home=home)
    except (ValueError, ValidationError) as exc:
        fail(f"invalid settings: {exc}")


def fail(message: str, code: int = 1) -> None:
    err.print(f"[bold red]error:[/] {message}", markup=True, highlight=False)
    raise typer.Exit(code)


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
