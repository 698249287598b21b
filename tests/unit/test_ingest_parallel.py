"""PDFs parsed in parallel worker processes: per-page progress, a bad file named while the others go in,
the page-count bound checked before any page is read, no parser left behind when the parent dies, and the
server job's page progress and elapsed time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest
from fpdf import FPDF

from lit3r.corpus.ingest import ingest
from lit3r.corpus.store import CorpusStore
from lit3r.server.jobs import PAGES_STAGE, Job
from lit3r.settings import LimitsSettings

ROOT = Path(__file__).parents[2]


def _paper(path: Path, pages: int, topic: str) -> Path:
    pdf = FPDF()
    pdf.set_auto_page_break(auto=False)
    for number in range(pages):
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 14)
        if number == 0:
            pdf.cell(0, 10, f"A Study of {topic}", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Times", "", 11)
        for line in range(8):
            pdf.cell(
                0,
                6,
                f"Page {number + 1} line {line}: measurements of {topic} were repeated.",
                new_x="LMARGIN",
                new_y="NEXT",
            )
    pdf.output(str(path))
    return path


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("library")
    for index, topic in enumerate(["glaciers", "moraines", "icefalls", "crevasses"]):
        _paper(folder / f"{topic}.pdf", 2 + index, topic)
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n" + os.urandom(3000) + b"\n%%EOF\n")
    return folder


def test_pdfs_go_in_from_workers_with_page_progress(library: Path, tmp_path: Path) -> None:
    pages: dict[str, list[tuple[int, int]]] = {}
    files: list[str] = []
    with CorpusStore(tmp_path / "home") as store:
        report = ingest(
            [library],
            store,
            limits=LimitsSettings(parse_workers=2),
            on_page=lambda f, done, total: pages.setdefault(Path(f).name, []).append((done, total)),
            on_file=lambda p: files.append(Path(p).name),
        )
        papers = {p.paper.title for p in store.iter_papers()}
    assert sorted(Path(p).name for p in report.added) == [
        "crevasses.pdf",
        "glaciers.pdf",
        "icefalls.pdf",
        "moraines.pdf",
    ]
    assert [Path(p).name for p, _ in report.failed] == ["broken.pdf"]
    assert "A Study of Glaciers".lower() in {t.lower() for t in papers}
    assert pages["glaciers.pdf"] == [(1, 2), (2, 2)] and pages["crevasses.pdf"][-1] == (5, 5)
    assert sorted(files) == sorted(p.name for p in library.iterdir())


def test_a_pdf_over_the_page_bound_is_refused_before_its_pages_are_read(tmp_path: Path) -> None:
    pdf = FPDF()
    pdf.set_font("Times", "", 11)
    for number in range(5000):
        pdf.add_page()
        pdf.text(20, 20, f"page {number}")
    big = tmp_path / "book.pdf"
    pdf.output(str(big))
    pages: list[int] = []
    started = time.monotonic()
    with CorpusStore(tmp_path / "home") as store:
        report = ingest([big], store, limits=LimitsSettings(max_pdf_pages=2000), on_page=lambda *a: pages.append(1))
    assert time.monotonic() - started < 30
    [(name, problem)] = report.failed
    assert name.endswith("book.pdf") and "5,000 pages" in problem and "limits.max_pdf_pages" in problem
    assert pages == [], "no page was read"


def test_no_parser_is_left_behind_when_ingest_is_killed(library: Path, tmp_path: Path) -> None:
    for index in range(6):  # enough work that the workers are still parsing when the parent dies
        _paper(tmp_path / f"slow-{index}.pdf", 60, f"topic {index}")
    script = tmp_path / "run.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            from pathlib import Path
            from lit3r.corpus.ingest import ingest
            from lit3r.corpus.store import CorpusStore
            from lit3r.settings import LimitsSettings
            if __name__ == "__main__":
                with CorpusStore(Path({str(tmp_path / "home")!r})) as store:
                    ingest([Path({str(tmp_path)!r})], store, limits=LimitsSettings(parse_workers=2),
                           on_page=lambda *a: print("page", flush=True))
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None and parent.stdout.readline().startswith("page")
        workers = psutil.Process(parent.pid).children(recursive=True)
        assert workers, "the parse runs in worker processes"
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        _, alive = psutil.wait_procs(workers, timeout=10)
        assert alive == [], f"orphaned parser processes: {[p.pid for p in alive]}"
    finally:
        if parent.poll() is None:
            parent.kill()


def test_job_counts_pages_and_stops_its_clock() -> None:
    job = Job("ingest", {"/tmp/a.pdf": "a.pdf"})
    job.advance("ingest", 0, 1)
    job.advance(PAGES_STAGE, 0, 10)
    job.advance(PAGES_STAGE, 4, 10)
    snapshot = job.snapshot()
    assert snapshot["pages"] == {"done": 4, "total": 10}
    assert snapshot["eta_s"] is not None, "the time left follows the pages read"
    job.finish("done", result={"ok": True})
    elapsed = job.snapshot()["elapsed_s"]
    time.sleep(0.3)
    assert job.snapshot()["elapsed_s"] == elapsed, "elapsed_s stops when the job is done"
