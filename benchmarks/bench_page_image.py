"""A hostile page image: a PDF of under 1 KB that declares one huge page, drawn as the server draws page images.

Run from the repository root::

    python benchmarks/bench_page_image.py --side-pt 14400 --out bench-out/page-image.json

Each drawing runs in a fresh process (``/usr/bin/time``-style figures from ``resource``): ``bounded`` is
``lit3r.server.pages.render`` (at most ``MAX_IMAGE_SIDE`` pixels on the long side), ``unbounded`` the same page
through pdfplumber at ``server.page_dpi`` without the bound (what the server did before). Wall seconds, peak
resident memory and the image's size in pixels are reported for each.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from report_file import emit

DRAW = r"""
import io, json, resource, sys, time
from pathlib import Path
from PIL import Image
path, mode, dpi = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
started = time.perf_counter()
if mode == "bounded":
    from lit3r.server import pages
    png = pages.render(str(path), pages.file_hash(path), 1, (), dpi)
else:
    import pdfplumber
    with pdfplumber.open(path) as pdf:
        buffer = io.BytesIO()
        pdf.pages[0].to_image(resolution=dpi).save(buffer, format="PNG")
        png = buffer.getvalue()
seconds = time.perf_counter() - started
size = Image.open(io.BytesIO(png)).size
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": round(seconds, 2), "peak_mb": round(peak_mb, 1), "pixels": list(size)}))
"""


def huge_page_pdf(path: Path, side_pt: float) -> Path:
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=(side_pt, side_pt))
    pdf.add_page()
    pdf.set_font("Helvetica", size=400)
    pdf.text(200, 800, "A page of 200 inches")
    pdf.output(str(path))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--side-pt", type=float, default=14_400.0)
    parser.add_argument("--dpi", type=int, default=110)
    parser.add_argument("--skip-unbounded", action="store_true", help="Only the bounded drawing (the other is slow).")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    import json

    with tempfile.TemporaryDirectory(prefix="lit3r-page-") as tmp:
        pdf = huge_page_pdf(Path(tmp) / "huge.pdf", args.side_pt)
        report: dict = {"pdf_bytes": pdf.stat().st_size, "side_pt": args.side_pt, "dpi": args.dpi}
        modes = ["bounded"] if args.skip_unbounded else ["bounded", "unbounded"]
        for mode in modes:
            done = subprocess.run(
                [sys.executable, "-c", DRAW, str(pdf), mode, str(args.dpi)],
                capture_output=True, text=True, check=True, timeout=1800,
            )  # fmt: skip
            report[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    emit(report, args.out)


if __name__ == "__main__":
    main()
