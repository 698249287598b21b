"""Agent commands: ask a question, show a trace."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from lit3r.app.documents import step_line
from lit3r.cli.app import app, err, existing_home, fail, out, printable, state
from lit3r.models import Answer, Citation, Paper, TraceEvent

trace_app = typer.Typer(no_args_is_help=True, help="Inspect the traces of answered questions.")


def print_answer(answer: Answer) -> None:
    """The answer with its inline markers, the cited chunks with their locators, and the trace path.

    Text from papers and questions is printed through :func:`printable`: no control sequence reaches the terminal.
    """
    out.print(printable(answer.text), highlight=False, markup=False)
    for citation in answer.citations:
        out.print(
            Text.assemble(
                (f"[{citation.number}]", "bold"),
                " ",
                (printable(citation.paper_id), "cyan"),
                printable(f" {where(citation)} "),
                (printable(citation.chunk_id), "dim"),
            ),
            highlight=False,
        )
        out.print(f"    “{printable(' '.join(citation.quote.split()))}”", highlight=False, markup=False)
    if answer.claims:
        out.print(Text(printable(verification_line(answer)), "dim"))
    if answer.sufficient and (line := assurance_line(answer)):
        out.print(Text(printable(line), "dim"))
    elif not answer.sufficient and answer.unmentioned:  # abstained on names no paper read mentions
        out.print(Text(printable(f"no paper read mentions {', '.join(answer.unmentioned)}"), "dim"))
    for fallback in answer.fallbacks:
        err.print(Text.assemble(("fell back: ", "yellow"), printable(fallback)))
    if answer.candidate_papers:
        out.print(Text(printable(f"candidate papers: {', '.join(answer.candidate_papers[:5])}"), "dim"))
    out.print(Text(printable(f"rounds: {answer.rounds} · trace: {answer.trace_path}"), "dim"))


def where(citation: Citation) -> str:
    """The citation's locator, and the table row (and column) it quotes when it quotes one."""
    cell = citation.cell
    if cell is None:
        return citation.locator.describe()
    named = cell if cell.table != citation.locator.object_id else cell.model_copy(update={"table": None})
    return f"{citation.locator.describe()} · {named.describe()}"


def print_step(event: TraceEvent) -> None:
    """One completed trace event on stderr, as :func:`~lit3r.app.documents.step_line` words it."""
    err.print(Text(printable(step_line(event)), "dim"), highlight=False)


def assurance_line(answer: Answer) -> str:
    """Whether the answer supplies what the question asks and the reader's confidence ("" when it says neither)."""
    sure = f"confidence {answer.confidence:.2f}" if answer.confidence is not None else ""
    if answer.answers_question is None:
        return sure
    said = "answers the question" if answer.answers_question else "may not answer the question"
    said = f"{said} ({sure})" if sure else said
    if answer.unmentioned:
        said += f"; no paper read mentions {', '.join(answer.unmentioned)}"
    return said


def verification_line(answer: Answer) -> str:
    """What claim verification found, in words that say what it checked."""
    supported = sum(c.supported for c in answer.claims)
    acted = [c.action for c in answer.claims if c.action != "kept"]
    note = f" ({len(acted)} {acted[0]})" if acted else ""
    if answer.verified_by == "exact":
        return (
            f"quotes checked: {supported}/{len(answer.claims)} claims are verbatim in the chunks they cite{note} "
            "(whether they answer the question is not judged)"
        )
    return f"supported: {supported}/{len(answer.claims)} claims (judge {answer.verified_by}){note}"


def library_filter(
    paper: list[str] | None,
    collection: list[str] | None,
    tag: list[str] | None,
    year: str | None,
    author: list[str] | None,
    papers: Mapping[str, Paper] | None = None,
) -> list[str] | None:
    """The paper ids ``--paper`` and the library filters leave (None: no restriction); exits with the reason
    when they leave none or a year range cannot be read. ``papers``: the open session's index papers (else the
    index is opened for a non-empty filter)."""
    from lit3r.app.filters import PaperFilter, restrict, restrict_for
    from lit3r.index.corpus_index import IndexNotBuiltError

    try:
        paper_filter = PaperFilter.of(collection, tag, year, author)
        if papers is not None:
            return restrict(papers, paper_filter, paper)
        return restrict_for(state.settings, paper_filter, paper)
    except (IndexNotBuiltError, ValueError) as exc:
        fail(str(exc))


COLLECTION_HELP = "Only papers in this library collection (or a subcollection); repeatable."
TAG_HELP = "Only papers with this library tag; repeatable (any of them)."
YEAR_HELP = "Only papers of this year or range: 2021, 2019-2021, 2019-, -2021."
AUTHOR_HELP = "Only papers with this author (name or surname); repeatable."


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question.")],
    option: Annotated[list[str] | None, typer.Option(help="A multiple-choice option (repeat for each).")] = None,
    paper: Annotated[list[str] | None, typer.Option(help="Answer from this paper id only (repeatable).")] = None,
    planner: Annotated[str, typer.Option(help="'fixed' (the Lit3R sequence, no model) or 'llm'.")] = "fixed",
    thread: Annotated[str | None, typer.Option(help="Conversation thread id (state kept across calls).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    steps: Annotated[bool, typer.Option("--steps", help="Print each step to stderr as it completes.")] = False,
    export: Annotated[
        str | None,
        typer.Option(
            "--format", help="Print the answer with references as markdown, or its bibliography as bibtex or csl-json."
        ),  # fmt: skip
    ] = None,
    style: Annotated[
        str, typer.Option(help="Citations in --format markdown: author-year or numbered.")
    ] = "author-year",
    collection: Annotated[list[str] | None, typer.Option(help=COLLECTION_HELP)] = None,
    tag: Annotated[list[str] | None, typer.Option(help=TAG_HELP)] = None,
    year: Annotated[str | None, typer.Option(help=YEAR_HELP)] = None,
    author: Annotated[list[str] | None, typer.Option(help=AUTHOR_HELP)] = None,
) -> None:
    """Answer a question with inline citations [n], the cited chunks with locators, and a trace."""
    from lit3r.app.export import EXPORT_FORMATS
    from lit3r.app.session import Session, planner_kind

    kind = planner_kind(planner)  # app errors end in one line (lit3r.cli.app.Lit3rGroup)
    if export is not None and export not in EXPORT_FORMATS:
        fail(f"unknown --format {export!r}: use {', '.join(EXPORT_FORMATS)}")
    if style not in ("author-year", "numbered"):
        fail(f"unknown --style {style!r}: use author-year or numbered")
    if export is not None and as_json:
        fail("--format and --json each print one document: choose one")
    existing_home()
    with Session(state.settings, planner=kind) as session:
        allowed = library_filter(paper, collection, tag, year, author, papers=session.index.papers)
        on_event = print_step if steps else None
        reply = session.reply(question, options=option, allowed_papers=allowed, thread_id=thread, on_event=on_event)
        if export is not None:  # from the papers the session has open: no second index load
            from lit3r.app.export import export_answer

            exported = export_answer(reply.answer, session.index.papers, export, style)  # type: ignore[arg-type]
    if as_json:
        print(json.dumps(reply.document.model_dump(mode="json"), indent=1, ensure_ascii=False))
    elif export is not None:
        print(printable(exported), end="")
    else:
        print_answer(reply.answer)


def find_trace(trace_id: str) -> Path:
    """The file of a trace given by id (under the home) or by path; exits with an error naming both if none."""
    from lit3r.app.traces import trace_path

    path = Path(trace_id)
    if not path.is_file():
        existing_home()
        path = trace_path(state.settings, trace_id.removesuffix(".json"))
    if not path.is_file():
        fail(f"no trace {trace_id!r} (looked for {path})")
    return path


@trace_app.command("show")
def trace_show(
    trace_id: Annotated[str, typer.Argument(help="A trace id (file name without .json) or a trace file path.")],
) -> None:
    """Render a trace as a readable timeline."""
    from lit3r.app.traces import render_timeline

    path = find_trace(trace_id)
    try:
        out.print(printable(render_timeline(path)), highlight=False, markup=False)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:  # bad JSON, or JSON of another shape
        fail(f"{path}: not a lit3r trace ({type(exc).__name__}: {exc})")


@trace_app.command("list")
def trace_list(limit: Annotated[int, typer.Option(help="How many, newest first.")] = 20) -> None:
    """List the traces under the home folder, newest first."""
    from lit3r.app.traces import newest_first

    folder = existing_home() / "traces"
    paths = newest_first(folder)[:limit]
    if not paths:
        err.print(f"no traces under {folder}")
    for path in paths:
        try:
            question = json.loads(path.read_text(encoding="utf-8")).get("question", "")
        except (json.JSONDecodeError, OSError):
            question = "(unreadable)"
        out.print(printable(f"{path.stem}  {question}"), highlight=False, markup=False)
