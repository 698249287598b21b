"""``lit3r check CLAIM``: which papers of the library support the claim, which contradict it, with the sentences."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.text import Text

from lit3r.cli.agent import AUTHOR_HELP, COLLECTION_HELP, TAG_HELP, YEAR_HELP, library_filter
from lit3r.cli.app import app, existing_home, fail, out, printable, state

STYLE = {"supports": "green", "contradicts": "red", "mixed": "yellow", "not_addressed": "dim"}


def print_check(result) -> None:
    """The summary, then each paper with a verdict and its quotes (locator and chunk id), then the trace path."""
    out.print(printable(result.summary.message), highlight=False, markup=False)
    for paper in result.papers:
        if paper.verdict == "not_addressed":
            continue
        out.print(
            Text.assemble(
                (paper.verdict.upper(), f"bold {STYLE[paper.verdict]}"),
                f" ({paper.confidence:.2f}) ",
                (printable(paper.paper_id), "cyan"),
                printable(f" {paper.title}"),
            )
        )
        for quote in paper.quotes:
            where = printable(f"{quote.chunk_id} {quote.locator.describe()}")
            out.print(Text.assemble(f"  {quote.role}: ", (f'"{printable(quote.quote)}"', "italic"), f"  [{where}]"))
    quiet = sum(p.verdict == "not_addressed" for p in result.papers)
    if quiet and result.summary.addressed:
        out.print(f"{quiet} other retrieved paper(s) do not address the claim", style="dim")
    out.print(f"trace: {result.trace_path}", style="dim", highlight=False)


@app.command()
def check(
    claim: Annotated[str, typer.Argument(help="The claim to check, e.g. a sentence of your draft.")],
    paper: Annotated[list[str] | None, typer.Option(help="Check against this paper id only (repeatable).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    collection: Annotated[list[str] | None, typer.Option(help=COLLECTION_HELP)] = None,
    tag: Annotated[list[str] | None, typer.Option(help=TAG_HELP)] = None,
    year: Annotated[str | None, typer.Option(help=YEAR_HELP)] = None,
    author: Annotated[list[str] | None, typer.Option(help=AUTHOR_HELP)] = None,
) -> None:
    """Check a claim against the library: per paper supports / contradicts / mixed / does not address, with the
    deciding sentences as verified quotes; then how many papers go each way. Writes a trace."""
    from lit3r.app.check import check_claim
    from lit3r.app.session import Session
    from lit3r.index.corpus_index import IndexNotBuiltError
    from lit3r.llm.errors import LLMConfigError

    existing_home()
    try:
        with Session(state.settings) as session:  # the filter reads the session's index papers: one index load
            allowed = library_filter(paper, collection, tag, year, author, papers=session.index.papers)
            named = allowed if paper else None
            result = check_claim(session, claim, paper_ids=named, allowed_papers=None if paper else allowed)
    except (IndexNotBuiltError, LLMConfigError, ValueError) as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps(result.model_dump(mode="json"), indent=1, ensure_ascii=False))
    else:
        print_check(result)
