"""``lit3r chat``: a conversation with the papers, one question a line, kept in a resumable thread."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Annotated, TextIO

import typer
from rich.text import Text

from lit3r.cli.agent import AUTHOR_HELP, COLLECTION_HELP, TAG_HELP, YEAR_HELP, library_filter, print_answer
from lit3r.cli.app import app, err, out, printable, state

EXIT_COMMANDS = frozenset({"/exit", "/quit"})
PROMPT = "> "


def read_messages(stream: TextIO) -> Iterator[str]:
    """Non-empty lines of ``stream`` until '/exit' or EOF; with a terminal, each read shows the prompt."""
    interactive = stream.isatty()
    while True:
        try:
            line = input(PROMPT) if interactive else stream.readline()
        except (EOFError, KeyboardInterrupt):
            return
        if not interactive and not line:
            return
        message = line.strip()
        if message in EXIT_COMMANDS:
            return
        if message:
            yield message


@app.command()
def chat(
    thread: Annotated[str | None, typer.Option(help="Resume this thread (default: start a new one).")] = None,
    planner: Annotated[str, typer.Option(help="'fixed' (the Lit3R sequence, no model) or 'llm'.")] = "fixed",
    collection: Annotated[list[str] | None, typer.Option(help=COLLECTION_HELP)] = None,
    tag: Annotated[list[str] | None, typer.Option(help=TAG_HELP)] = None,
    year: Annotated[str | None, typer.Option(help=YEAR_HELP)] = None,
    author: Annotated[list[str] | None, typer.Option(help=AUTHOR_HELP)] = None,
) -> None:
    """Chat with the papers: one question per line on stdin ('/exit' or EOF ends); follow-ups are rewritten
    into standalone questions, and the thread (printed first) can be resumed with --thread."""
    from lit3r.app.session import Session, planner_kind

    kind = planner_kind(planner)  # app errors end in one line (lit3r.cli.app.Lit3rGroup)
    with Session(state.settings, planner=kind) as session:
        allowed = library_filter(None, collection, tag, year, author, papers=session.index.papers)
        conversation = session.thread(thread)
        earlier = len(conversation.history())
        out.print(printable(f"thread: {conversation.thread_id}"), highlight=False, markup=False)
        if earlier:
            err.print(f"resuming after {earlier} earlier turns", highlight=False)
        for message in read_messages(sys.stdin):
            answer = conversation.ask(message, allowed_papers=allowed)
            if answer.question != message:
                err.print(Text(printable(f"standalone question: {answer.question}"), "dim"), highlight=False)
            print_answer(answer)
            out.print()
