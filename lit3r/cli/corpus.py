"""Corpus commands: ingest, index, search, stats, demo."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from lit3r.cli.agent import AUTHOR_HELP, COLLECTION_HELP, TAG_HELP, YEAR_HELP
from lit3r.cli.app import app, err, existing_home, fail, out, printable, progress_bar, state, writable_home
from lit3r.corpus.store import CorpusStore
from lit3r.settings import Settings


def _warn(label: str, path: str, problem: str) -> None:
    """One warning line on stderr; file names and problems are printed as text, never as markup."""
    err.print(Text.assemble((label, "yellow"), " ", printable(f"{path}: {problem}")), highlight=False)


@app.command()
def ingest(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Files or folders (searched recursively); library files: .bib, .ris, CSL-JSON.", readable=False
        ),  # ingest names each problem
    ] = None,
    force: Annotated[bool, typer.Option(help="Parse files again even when unchanged.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON report.")] = False,
    zotero: Annotated[
        Path | None,
        typer.Option(help="A Zotero data folder (zotero.sqlite and storage/), read without writing to it."),
    ] = None,
    collection: Annotated[
        str | None, typer.Option(help="Only the library entries in this collection (Zotero) or group (BibTeX).")
    ] = None,
) -> None:
    """Parse papers (PDF, QASPER JSON, JSON lines, Markdown, text, HTML snapshots) into the corpus, and the
    researcher's library (Zotero, BibTeX/BibLaTeX, RIS, CSL-JSON) with its metadata."""
    from lit3r.corpus.ingest import discover
    from lit3r.corpus.ingest import ingest as run_ingest

    paths = list(paths or [])
    if not paths and zotero is None:
        fail("nothing to ingest: name files or folders, or a Zotero data folder with --zotero")
    if collection is not None and zotero is None:
        from lit3r.corpus.library.run import is_library_file

        if not any(is_library_file(p) for p in paths):
            fail("--collection picks entries of a library: name a .bib, .ris or CSL-JSON file, or use --zotero")
    files = discover(paths).files + ([zotero] if zotero is not None else [])
    settings = state.settings
    writable_home()
    with CorpusStore(settings.home) as store, progress_bar(quiet=as_json) as bar:
        task = bar.add_task("parse files", total=len(files), unit="files")
        pages = _pdf_pages(files) if bar.live.is_started else 0
        page_task = bar.add_task("read PDF pages", total=pages, unit="pages") if pages else None
        report = run_ingest(
            paths,
            store,
            force=force,
            on_file=lambda _: bar.advance(task),
            limits=settings.limits,
            chunker=settings.chunker,
            on_page=(lambda _file, _done, _total: bar.advance(page_task)) if page_task is not None else None,
            zotero=zotero,
            collection=collection,
        )
        total = store.count_papers()
    if as_json:
        print(json.dumps({**report.__dict__, "papers_in_corpus": total}, indent=1))
    else:
        for path, problem in report.failed:
            _warn("skipped", path, problem)
        for path, problem in report.skipped_records:
            _warn("skipped record", path, problem)
        for old, new in report.renamed:
            _warn("renamed", f"paper id {old} -> {new}", "id already used by another file")
        for where, problem in report.duplicates:
            _warn("duplicate", where, problem)
        for where, paper_id in report.merged:
            _warn("merged", where, f"its metadata went onto paper {paper_id!r}, ingested earlier from a file")
        records = f", {len(report.skipped_records)} record(s) skipped" if report.skipped_records else ""
        out.print(
            printable(
                f"{len(report.added)} file(s) ingested ({report.papers_added} papers), "
                f"{len(report.unchanged)} unchanged, {len(report.failed)} skipped{records}; "
                f"{report.references_resolved} references resolved; {total} papers in {state.settings.home}"
            ),
            highlight=False,
            markup=False,
        )
    if not report.added and not report.unchanged and not report.duplicates:  # a duplicate is known, not lost
        raise typer.Exit(2)


def _pdf_pages(files: list[Path]) -> int:
    """Pages of the PDFs among ``files``, read from their page trees (for the progress bar's total)."""
    from lit3r.corpus.parsers.pdf_backends import BackendError
    from lit3r.corpus.parsers.pdf_pdfium import page_count

    total = 0
    for path in files:
        if path.suffix.lower() == ".pdf":
            try:
                total += page_count(path)
            except (BackendError, OSError):
                continue
    return total


STAGE_UNITS = {"chunk papers": "papers", "embed chunks": "chunks", "embed papers": "papers"}


@app.command()
def index(
    ray: Annotated[
        str | None,
        typer.Option("--ray", metavar="ADDRESS", help="Embed on this Ray cluster (its head's HOST:PORT) and shard."),
    ] = None,
) -> None:
    """Build or update the indexes for the current settings (only new text is embedded)."""
    from lit3r.index.build import EmptyCorpusError, build_index

    existing_home()
    writable_home()
    if ray is not None:
        ray_settings = state.settings.ray.model_copy(update={"address": ray})
        state.settings = state.settings.model_copy(update={"ray": ray_settings})
    if state.settings.ray.address:
        _index_on_ray(state.settings)
        return
    with CorpusStore(state.settings.home, create=False) as store, progress_bar() as bar:
        tasks: dict[str, Any] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total, unit=STAGE_UNITS.get(stage, "steps"))
            bar.advance(tasks[stage], done)

        try:
            report = build_index(state.settings, store, progress=progress)
        except EmptyCorpusError as exc:
            fail(str(exc))
        except OSError as exc:  # a full disk, a quota, a read-only folder: the generation in use is untouched
            fail(f"the index build stopped: {_disk_problem(exc, state.settings.home)}; the index in use is unchanged")
    if report.up_to_date:
        out.print(f"index up to date: {report.papers} papers, {report.chunks} chunks ({report.generation})")
        return
    timing = ", ".join(f"{k} {v:.1f}" for k, v in report.timings.items() if k.endswith("_s"))
    out.print(
        f"indexed {report.papers} papers, {report.chunks} chunks "
        f"({report.chunks_embedded} embedded, {report.chunks_reused} reused) in {report.generation}\n{timing}"
    )


def _disk_problem(exc: OSError, home: Path) -> str:
    """What went wrong writing under ``home``, with the space left on its disk (numpy's short writes carry
    no errno, so the free space is what says the disk is full)."""
    import shutil

    where = f" ({exc.filename})" if exc.filename else ""
    try:
        free = f"; {shutil.disk_usage(home).free / 1e6:,.1f} MB free under {home}"
    except OSError:
        free = ""
    return f"{exc.strerror or exc}{where}{free}"


def _index_on_ray(settings: Settings) -> None:
    """``lit3r index`` on the Ray cluster at ``settings.ray.address``."""
    from lit3r.index.build import EmptyCorpusError
    from lit3r.index.distributed.cluster import ClusterError
    from lit3r.index.distributed.ingest import build_index_on_ray

    with CorpusStore(settings.home, create=False) as store, progress_bar() as bar:
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
    collection: Annotated[list[str] | None, typer.Option(help=COLLECTION_HELP)] = None,
    tag: Annotated[list[str] | None, typer.Option(help=TAG_HELP)] = None,
    year: Annotated[str | None, typer.Option(help=YEAR_HELP)] = None,
    author: Annotated[list[str] | None, typer.Option(help=AUTHOR_HELP)] = None,
) -> None:
    """Rank chunks for a query and show them with their locators."""
    from lit3r.cli.agent import library_filter
    from lit3r.index.corpus_index import IndexNotBuiltError
    from lit3r.index.opening import open_index
    from lit3r.retrieval.search import search_index

    existing_home()
    try:
        index = open_index(state.settings)
    except IndexNotBuiltError as exc:
        fail(str(exc))
    paper = library_filter(paper, collection, tag, year, author, papers=index.papers)  # the open index's papers
    try:
        hits = search_index(index, query, mode=mode, k=k, paper_ids=paper)  # type: ignore[arg-type]
    except (IndexNotBuiltError, ValueError) as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps([h.model_dump(mode="json", exclude={"rank"}) for h in hits], indent=1))
        return
    for hit in hits:
        out.print(
            Text.assemble(
                (f"{hit.rank:>2}.", "bold"),
                " ",
                (printable(hit.paper_id), "cyan"),
                printable(f" {hit.type} · {hit.locator.describe()} "),
                (printable(f"score {hit.score:.4f} · {hit.chunk_id}"), "dim"),
            ),
            highlight=False,
        )
        snippet = printable(" ".join(hit.text.split()))
        out.print(f"    {snippet[:300]}{'…' if len(snippet) > 300 else ''}", highlight=False, markup=False)
    if not hits:
        out.print("no matching chunks")


def collect_stats(settings: Settings) -> dict[str, Any]:
    """Counts describing the corpus and its current index."""
    from lit3r.app.filters import library_facets
    from lit3r.index.corpus_index import CorpusIndex
    from lit3r.index.layout import IndexLayout

    with CorpusStore(settings.home, create=False) as store:
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
        "library": library_facets({p.paper.id: p.paper for p in parsed}),
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
    existing_home()
    data = collect_stats(state.settings)
    if as_json:
        print(json.dumps(data, indent=1))
        return
    table = Table(title=Text(printable(f"lit3r corpus at {data['home']}")), show_header=False)
    for key in ("papers", "sources", "references_parsed", "references_resolved", "chunks"):
        table.add_row(key, str(data[key]))
    table.add_row("chunk_types", ", ".join(f"{k} {v}" for k, v in sorted(data["chunk_types"].items())))
    if data["library"]["collections"]:
        table.add_row("collections", Text(printable(", ".join(data["library"]["collections"]))))
    index_info = data["index"]
    where = f"{index_info['path']} ({index_info['size_bytes'] / 1e6:.1f} MB)" if index_info else "not built"
    table.add_row("index", Text(printable(where)))
    out.print(table)
    for failed in data["sources_failed"]:
        _warn("not ingested", failed["path"], failed["error"])


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

    ingest([demo_papers_dir()], force=False, as_json=False, zotero=None, collection=None)
    index()
    out.rule(f"search: {question}")
    search(question, mode="hybrid", k=3, paper=None, as_json=False, collection=None, tag=None, year=None, author=None)
    out.rule(f"ask: {question}")
    ask(question, option=None, paper=None, planner="fixed", thread=None, as_json=False, steps=False, export=None,
        style="author-year", collection=None, tag=None, year=None, author=None)  # fmt: skip
