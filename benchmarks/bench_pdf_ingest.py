"""PDF ingest at library scale: pages per second and peak memory of today's code, this code and the floor.

Copies of the real PDFs (``../shared/data/pdfs``, cycled; or of the PDFs of ``--sources``, e.g. the rendered
QASPER library of ``benchmarks/render_qasper_pdfs.py``) are laid out under ``--root`` (generated, never
committed; hard links, so a thousand papers cost no disk). Three variants run one after another in the
same run, each in its own process tree, on the same files:

* ``baseline``: ``lit3r.corpus.ingest.ingest`` of another checkout (``--baseline-code``, e.g. the main
  branch before this change), on the first ``--baseline-files`` files (it is slow);
* ``ours``: the same call with this checkout's code, on those files and then on all ``--files``;
* ``floor``: the fastest plain-text extraction of the same files (PDFium's text, pypdfium2, in as many
  processes as ``ours`` uses): no layout, no structure, only the characters.

Peak memory is the largest sum of resident memory over the variant's process tree (parent and workers),
sampled every 0.2 s. Run::

    nice -n 10 python benchmarks/bench_pdf_ingest.py --files 1000 --baseline-files 30 \\
        --baseline-code /path/to/main --out /tmp/pdf-ingest.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT / ".." / "shared" / "data" / "pdfs"


def lay_out(root: Path, count: int, source_dir: Path = SHARED) -> list[Path]:
    """``count`` copies of the PDFs of ``source_dir`` (hard links, cycled) in ``root``."""
    sources = sorted(source_dir.glob("*.pdf"))
    if not sources:
        sys.exit(f"no PDFs in {source_dir}")
    root.mkdir(parents=True, exist_ok=True)
    files = []
    for index in range(count):
        source = sources[index % len(sources)]
        target = root / f"{index:05d}-{source.name}"
        if not target.exists():
            try:
                os.link(source, target)
            except OSError:
                target.write_bytes(source.read_bytes())
        files.append(target)
    return files


def page_total(files: list[Path]) -> int:
    import pypdfium2 as pdfium

    total = 0
    for path in files:
        doc = pdfium.PdfDocument(str(path))
        total += len(doc)
        doc.close()
    return total


def measure(variant: str, folder: Path, code: Path, workers: int) -> dict:
    """Run one variant in a child process on ``folder``; wall time and peak resident memory of its tree."""
    env = {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, str(Path(__file__).resolve()), "--child", variant, "--dir", str(folder)]
    command += ["--workers", str(workers)]
    started = time.monotonic()
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
    peak = 0
    parent = psutil.Process(child.pid)
    while child.poll() is None:
        try:
            tree = [parent, *parent.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
        except psutil.Error:
            pass
        time.sleep(0.2)
    seconds = time.monotonic() - started
    output = child.stdout.read() if child.stdout else ""
    if child.returncode != 0:
        raise SystemExit(f"{variant} failed (exit {child.returncode}): {output[-500:]}")
    return {"seconds": round(seconds, 1), "peak_rss_mb": round(peak / 1e6), **json.loads(output.splitlines()[-1])}


def child(variant: str, folder: Path, workers: int) -> None:
    """The measured work, in this (child) process."""
    files = sorted(folder.glob("*.pdf"))
    if variant == "floor":
        from multiprocessing import get_context

        with get_context("spawn").Pool(workers) as pool:
            chars = sum(pool.map(_plain_text_chars, [str(f) for f in files], chunksize=4))
        print(json.dumps({"files": len(files), "chars": chars}))
        return
    from lit3r.corpus.ingest import ingest
    from lit3r.corpus.store import CorpusStore
    from lit3r.settings import LimitsSettings

    limits = LimitsSettings(parse_workers=workers) if "parse_workers" in LimitsSettings.model_fields else None
    with tempfile.TemporaryDirectory(prefix="lit3r-bench-home-") as home, CorpusStore(Path(home)) as store:
        report = ingest([folder], store, limits=limits)
        papers = store.count_papers()
    print(json.dumps({"files": len(files), "added": len(report.added), "failed": len(report.failed), "papers": papers}))


def _plain_text_chars(path: str) -> int:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(path)
    chars = 0
    for page in doc:
        textpage = page.get_textpage()
        chars += len(textpage.get_text_range())
        textpage.close()
        page.close()
    doc.close()
    return chars


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000, help="PDF copies for this code and the floor")
    parser.add_argument("--baseline-files", type=int, default=30, help="the first N copies, for all variants")
    parser.add_argument("--baseline-code", type=Path, default=None, help="checkout of the code to compare with")
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--sources", type=Path, default=SHARED, help="folder of the PDFs to copy (default: shared)")
    parser.add_argument("--root", type=Path, default=Path(tempfile.gettempdir()) / "lit3r-pdf-bench")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--child", choices=("baseline", "ours", "floor"), help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.dir, args.workers)
        return
    small = args.root / f"first-{args.baseline_files}"
    files = lay_out(args.root / f"all-{args.files}", args.files, args.sources)
    lay_out(small, args.baseline_files, args.sources)
    runs = []
    for label, folder, count in (("subset", small, args.baseline_files), ("library", files[0].parent, args.files)):
        pages = page_total(sorted(folder.glob("*.pdf")))
        variants = [("ours", ROOT), ("floor", ROOT)]
        if label == "subset" and args.baseline_code:
            variants.insert(0, ("baseline", args.baseline_code))
        for variant, code in variants:
            result = measure(variant, folder, code, args.workers)
            result.update(set=label, variant=variant, pdfs=count, pages=pages)
            result["pages_per_s"] = round(pages / result["seconds"], 2)
            runs.append(result)
            print(json.dumps(result), flush=True)
    report = {"workers": args.workers, "cpus": os.cpu_count(), "load_avg_1m": os.getloadavg()[0], "runs": runs}
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))
    print(f"{'set':8} {'variant':9} {'pdfs':>5} {'pages':>6} {'seconds':>8} {'pages/s':>8} {'peak MB':>8}")
    for r in runs:
        print(
            f"{r['set']:8} {r['variant']:9} {r['pdfs']:5} {r['pages']:6} {r['seconds']:8} "
            f"{r['pages_per_s']:8} {r['peak_rss_mb']:8}"
        )


if __name__ == "__main__":
    main()
