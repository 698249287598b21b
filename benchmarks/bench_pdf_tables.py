"""Table cells read back from PDFs: cell accuracy on rendered tables whose cells are known.

Tables of known cells (a header row of column names, rows of a method name and numbers, some cells
of two words) are printed by Chromium (Playwright, ``make browser``'s Debian chromium) in two styles:
``ruled`` (a border around every cell) and ``booktabs`` (only a rule above, below the header and
below the table), each on a page with a caption ('Table N: ...') and paragraphs around it. Each PDF is
parsed with lit3r's PDF parser; the table block's rows ('a | b | c' lines after the caption) are the
cells read back. Cell accuracy: the share of known cells whose text (white space folded) is the text
of the cell at the same row and column; row accuracy: rows whose every cell is right. Generated under
``--out`` (default a temporary folder), never committed. Run::

    python benchmarks/bench_pdf_tables.py --tables 20
"""

from __future__ import annotations

import argparse
import html
import json
import os
import random
import tempfile
from pathlib import Path

from lit3r.corpus.parsers.pdf import parse_pdf
from lit3r.corpus.tables import read_table

CHROMIUM = Path(os.environ.get("LIT3R_CHROMIUM", "/usr/bin/chromium"))
METHODS = ["BM25", "Dense retrieval", "SPLADE", "ColBERT v2", "Hybrid RRF", "Cross encoder", "Lit3R", "DPR"]
METRICS = ["Recall@10", "MRR", "nDCG@10", "Latency ms", "Index GB"]
STYLE = {
    "ruled": "table{border-collapse:collapse} td,th{border:0.8px solid #000;padding:2px 6px}",
    "booktabs": "table{border-collapse:collapse;border-top:1.2px solid #000;border-bottom:1.2px solid #000}"
    " th{border-bottom:0.8px solid #000;padding:2px 8px} td{padding:2px 8px}",
}
PARAGRAPH = (
    "We compare the retrieval systems on the same questions and report every figure of the table below; "
    "the differences between the systems are discussed in the text that follows the table."
)


def make_table(rng: random.Random) -> list[list[str]]:
    """A header row and 3 to 6 rows of a method and numbers."""
    columns = ["Method", *rng.sample(METRICS, rng.randint(2, 4))]
    rows = [columns]
    for method in rng.sample(METHODS, rng.randint(3, 6)):
        rows.append([method, *(f"{rng.uniform(0, 100):.1f}" for _ in columns[1:])])
    return rows


def table_html(number: int, cells: list[list[str]], style: str) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cells[0])
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in cells[1:])
    return (
        "<!doctype html><html><head><meta charset='utf-8'><style>"
        "body{font-family:'Liberation Serif',serif;font-size:10pt} p{text-align:justify}"
        f" .cap{{font-size:9pt;margin:4px 0}} {STYLE[style]}</style></head><body>"
        f"<p>{PARAGRAPH}</p><p class='cap'>Table {number}: Results of the systems ({style}).</p>"
        f"<table><tr>{head}</tr>{body}</table><p>{PARAGRAPH}</p></body></html>"
    )


def read_back(path: Path) -> list[list[str]]:
    """Header and body rows of the first table block of the parsed PDF."""
    [parsed] = parse_pdf(path, isolate=False)
    tables = [read_table(b.text) for b in parsed.blocks if b.type == "table"]
    return [tables[0].header, *tables[0].rows] if tables else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=20, help="tables per style")
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="lit3r-tables-")))
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    rng = random.Random(args.seed)
    cases = [(style, n, make_table(rng)) for style in STYLE for n in range(1, args.tables + 1)]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_page()
        for style, number, cells in cases:
            page.set_content(table_html(number, cells, style))
            page.pdf(path=str(args.out / f"{style}-{number}.pdf"), format="Letter")
        browser.close()
    result: dict[str, dict[str, float]] = {}
    for style in STYLE:
        cells_right = cells_total = rows_right = rows_total = found = 0
        for _, number, truth in (c for c in cases if c[0] == style):
            got = read_back(args.out / f"{style}-{number}.pdf")
            found += bool(got)
            for r, row in enumerate(truth):
                read_row = got[r] if r < len(got) else []
                right = [c < len(read_row) and read_row[c] == cell for c, cell in enumerate(row)]
                cells_right, cells_total = cells_right + sum(right), cells_total + len(row)
                rows_right, rows_total = rows_right + all(right) * (len(read_row) == len(row)), rows_total + 1
        result[style] = {
            "tables": args.tables,
            "tables_found": found,
            "cell_accuracy": round(cells_right / cells_total, 4),
            "row_accuracy": round(rows_right / rows_total, 4),
        }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
