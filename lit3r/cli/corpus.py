"""Corpus commands: ingest, index, search, stats, demo."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from lit3r.cli.app import app, err, fail, out, progress_bar, state
from lit3r.corpus.store import CorpusStore
from lit3r.settings import Settings


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (searched recursively).")],
    force: Annotated[bool, typer.Option(help="Parse files again even when unchanged.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON report.")] = False,
) -> None:
    """Parse papers (PDF, QASPER JSON, JSON lines, Markdown, text) into the corpus."""
    from lit3r.corpus.ingest import discover
    from lit3r.corpus.ingest import ingest as run_ingest

    files, _ = discover(paths)
    with CorpusStore(state.settings.home) as store, progress_bar() as bar:
        task = bar.add_task("ingest", total=len(files))
        report = run_ingest(paths, store, force=force, on_file=lambda _: bar.advance(task))
        total = store.count_papers()
    if as_json:
        print(json.dumps({**report.__dict__, "papers_in_corpus": total}, indent=1))
    else:
        for path, problem in report.failed:
            err.print(f"[yellow]skipped[/] {path}: {problem}", highlight=False)
        for old, new in report.renamed:
            err.print(f"[yellow]renamed[/] paper id {old} -> {new} (id already used by another file)")
        out.print(
            f"{len(report.added)} file(s) ingested ({report.papers_added} papers), {len(report.unchanged)} unchanged, "
            f"{len(report.failed)} skipped; {report.references_resolved} references resolved; "
            f"{total} papers in {state.settings.home}"
        )
    if not report.added and not report.unchanged:
        raise typer.Exit(2)


@app.command()
def index(
    ray: Annotated[
        str | None,
        typer.Option("--ray", metavar="ADDRESS", help="Embed on this Ray cluster (its head's HOST:PORT) and shard."),
    ] = None,
) -> None:
    """Build or update the indexes for the current settings (only new text is embedded)."""
    from lit3r.index.build import EmptyCorpusError, build_index

    if ray is not None:
        ray_settings = state.settings.ray.model_copy(update={"address": ray})
        state.settings = state.settings.model_copy(update={"ray": ray_settings})
    if state.settings.ray.address:
        _index_on_ray(state.settings)
        return
    with CorpusStore(state.settings.home) as store, progress_bar() as bar:
        tasks: dict[str, Any] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.advance(tasks[stage], done)

        try:
            report = build_index(state.settings, store, progress=progress)
        except EmptyCorpusError as exc:
            fail(str(exc))
    if report.up_to_date:
        out.print(f"index up to date: {report.papers} papers, {report.chunks} chunks ({report.generation})")
        return
    timing = ", ".join(f"{k} {v:.1f}" for k, v in report.timings.items() if k.endswith("_s"))
    out.print(
        f"indexed {report.papers} papers, {report.chunks} chunks "
        f"({report.chunks_embedded} embedded, {report.chunks_reused} reused) in {report.generation}\n{timing}"
    )


def _index_on_ray(settings: Settings) -> None:
    """``lit3r index`` on the Ray cluster at ``settings.ray.address``."""
    from lit3r.index.build import EmptyCorpusError
    from lit3r.index.distributed.cluster import ClusterError
    from lit3r.index.distributed.ingest import build_index_on_ray

    with CorpusStore(settings.home) as store, progress_bar() as bar:
        tasks: dict[str, Any] = {}

        def progress(stage: str, done: int, total: int | None) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.advance(tasks[stage], done)

        try:
            report = build_index_on_ray(settings, store, progress=progress)
        except (EmptyCorpusError, ClusterError) as exc:
            fail(str(exc))
    if report.embedded_here:
        err.print("[yellow]warning:[/] the cluster's chunks differ from this machine's: do all nodes run this lit3r?")
    out.print("\n".join(report.summary()), highlight=False)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    mode: Annotated[str, typer.Option(help="bm25, dense or hybrid (RRF k=60).")] = "hybrid",
    k: Annotated[int, typer.Option("-k", "--top", help="How many chunks to show.", min=1)] = 10,
    paper: Annotated[list[str] | None, typer.Option(help="Search only within this paper id (repeatable).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON list of hits.")] = False,
) -> None:
    """Rank chunks for a query and show them with their locators."""
    from lit3r.index.corpus_index import CorpusIndex, IndexNotBuiltError
    from lit3r.tools.search import search_chunks

    try:
        hits = search_chunks(CorpusIndex.open(state.settings), query, mode=mode, k=k, paper_ids=paper)  # type: ignore[arg-type]
    except (IndexNotBuiltError, ValueError) as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps([h.model_dump(mode="json", exclude={"rank"}) for h in hits], indent=1))
        return
    for hit in hits:
        out.print(
            f"[bold]{hit.rank:>2}.[/] [cyan]{hit.paper_id}[/] {hit.type} · {hit.locator.describe()} "
            f"[dim]score {hit.score:.4f} · {hit.chunk_id}[/]",
            highlight=False,
        )
        snippet = " ".join(hit.text.split())
        out.print(f"    {snippet[:300]}{'…' if len(snippet) > 300 else ''}", highlight=False, markup=False)
    if not hits:
        out.print("no matching chunks")


def collect_stats(settings: Settings) -> dict[str, Any]:
    """Counts describing the corpus and its current index."""
    from lit3r.index.corpus_index import CorpusIndex
    from lit3r.index.layout import IndexLayout

    with CorpusStore(settings.home) as store:
        parsed = list(store.iter_papers())
        sources = store.sources()
        hashes = store.paper_hashes()
    layout = IndexLayout(settings)
    current = layout.current()
    stats: dict[str, Any] = {
        "home": str(settings.home),
        "papers": len(parsed),
        "sources": sum(1 for s in sources if s.status == "ok"),
        "sources_failed": [{"path": s.path, "error": s.error} for s in sources if s.status != "ok"],
        "references_parsed": sum(len(p.paper.references) for p in parsed),
        "references_resolved": sum(1 for p in parsed for r in p.paper.references if r.resolved_id),
        "blocks": dict(Counter(b.type for p in parsed for b in p.blocks)),
        "index_key": layout.key,
        "index": None,
        "chunks": 0,
        "chunk_types": {},
    }
    if current is not None:
        built = CorpusIndex(current, settings)
        stats["chunks"] = len(built.chunks)
        stats["chunk_types"] = dict(Counter(c.type for c in built.chunks))
        stats["index"] = {
            "path": str(current),
            "papers": len(built.manifest["papers"]),
            "up_to_date": built.manifest["papers"] == hashes,
            "size_bytes": built.size_bytes(),
            "encoder": built.manifest["encoder"],
            "chunker": settings.chunker.kind,
        }
    return stats


@app.command()
def stats(as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False) -> None:
    """Papers, chunks by type, references parsed and resolved, index size."""
    data = collect_stats(state.settings)
    if as_json:
        print(json.dumps(data, indent=1))
        return
    table = Table(title=f"lit3r corpus at {data['home']}", show_header=False)
    for key in ("papers", "sources", "references_parsed", "references_resolved", "chunks"):
        table.add_row(key, str(data[key]))
    table.add_row("chunk_types", ", ".join(f"{k} {v}" for k, v in sorted(data["chunk_types"].items())))
    index_info = data["index"]
    where = f"{index_info['path']} ({index_info['size_bytes'] / 1e6:.1f} MB)" if index_info else "not built"
    table.add_row("index", where)
    out.print(table)
    for failed in data["sources_failed"]:
        err.print(f"[yellow]not ingested[/] {failed['path']}: {failed['error']}", highlight=False)


def demo_papers_dir() -> Path:
    """The demo corpus shipped inside the package."""
    return Path(str(resources.files("lit3r") / "demo" / "papers"))


DEMO_QUESTION = "How much did evidence verification reduce unsupported claims?"


@app.command()
def demo(
    question: Annotated[str, typer.Argument(help="The example question.")] = DEMO_QUESTION,
) -> None:
    """Ingest and index the bundled demo corpus, search it, and answer a question with citations and a trace."""
    from lit3r.cli.agent import ask

    ingest([demo_papers_dir()], force=False, as_json=False)
    index()
    out.rule(f"search: {question}")
    search(question, mode="hybrid", k=3, paper=None, as_json=False)
    out.rule(f"ask: {question}")
    ask(question, option=None, paper=None, planner="fixed", thread=None, as_json=False)
