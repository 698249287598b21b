"""Render the QASPER papers into two-column paper PDFs, for the benchmark that reads QASPER from PDFs.

Each paper of the QASPER file becomes HTML (title, an author line, the abstract across both columns, then
numbered sections and subsections, paragraphs, and a captioned box for every figure and table after the
paragraph that first mentions it) printed by Chromium (Playwright's ``page.pdf``, the Debian chromium that
``make browser`` installs) on US Letter pages in two CSS columns with a running head (the paper's title)
and a page number in the footer. QASPER's JSON has no author list: the author line is the same neutral
placeholder in every paper. The output is generated, never committed. Run::

    python benchmarks/render_qasper_pdfs.py --out /tmp/qasper-pdfs [--limit N]

A sidecar ``manifest.json`` maps each PDF to its paper id and records the section numbering used.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import time
from pathlib import Path

from lit3r.corpus.parsers.qasper import read_qasper_records

ROOT = Path(__file__).resolve().parents[1]
QASPER = ROOT / ".." / "shared" / "data" / "qasper" / "qasper-test-v0.3.corpus-and-dev-questions.json.gz"
CHROMIUM = Path(os.environ.get("LIT3R_CHROMIUM", "/usr/bin/chromium"))
AUTHORS = "Anonymous Authors · Anonymous Institution"
FLOAT_MENTION = re.compile(r"\b(Figure|Fig\.|Table)\s+(\d+)", re.IGNORECASE)

CSS = """
@page { size: Letter; margin: 0.9in 0.75in 0.8in 0.75in; }
body { font-family: 'Liberation Serif', 'Times New Roman', serif; font-size: 10pt; line-height: 1.25; }
.front { column-span: all; text-align: center; margin-bottom: 12pt; }
h1 { font-size: 16pt; font-weight: bold; margin: 0 0 8pt 0; }
.authors { font-size: 11pt; margin-bottom: 10pt; }
.abstract { column-span: all; margin: 0 0.5in 12pt 0.5in; text-align: justify; }
.abstract h2 { text-align: center; font-size: 11pt; margin: 0 0 4pt 0; }
.columns { column-count: 2; column-gap: 0.3in; text-align: justify; }
h2 { font-size: 12pt; font-weight: bold; margin: 10pt 0 4pt 0; break-after: avoid; }
h3 { font-size: 10.5pt; font-weight: bold; margin: 8pt 0 3pt 0; break-after: avoid; }
p { margin: 0 0 5pt 0; text-indent: 1em; }
.float { break-inside: avoid; border-top: 0.6pt solid #000; border-bottom: 0.6pt solid #000;
         margin: 6pt 0; padding: 18pt 0 4pt 0; }
.float .caption { font-size: 9pt; text-indent: 0; }
"""
HEADER = '<div style="font-size:8px;width:100%;text-align:center;font-family:serif;">{title}</div>'
FOOTER = (
    '<div style="font-size:8px;width:100%;text-align:center;font-family:serif;"><span class="pageNumber"></span></div>'
)


def numbered_sections(full_text: list[dict]) -> list[tuple[str, str, int, list[str]]]:
    """``(number, heading, level, paragraphs)`` per section: 'A ::: B' is subsection B of section A."""
    out = []
    top = sub = 0
    current_top = None
    for section in full_text:
        parts = [p.strip() for p in (section.get("section_name") or "").split(":::") if p.strip()]
        paragraphs = [p for p in section.get("paragraphs") or [] if p.strip()]
        if not parts:
            if out:
                out[-1][3].extend(paragraphs)
            continue
        if len(parts) == 1 or parts[0] != current_top:
            top, sub, current_top = top + 1, 0, parts[0]
            if len(parts) > 1:
                out.append((str(top), parts[0], 1, []))
        if len(parts) == 1:
            out.append((str(top), parts[0], 1, paragraphs))
        else:
            sub += 1
            out.append((f"{top}.{sub}", parts[-1], 2, paragraphs))
    return out


def paper_html(record: dict) -> str:
    """The paper as a two-column HTML page."""
    floats = {}
    for item in record.get("figures_and_tables") or []:
        caption = (item.get("caption") or "").strip()
        match = FLOAT_MENTION.match(caption)
        if match:
            floats.setdefault((match.group(1)[:3].lower(), match.group(2)), caption)
    placed: set[tuple[str, str]] = set()
    body = []
    for number, heading, level, paragraphs in numbered_sections(record.get("full_text") or []):
        tag = "h2" if level == 1 else "h3"
        body.append(f"<{tag}>{number} {html.escape(heading)}</{tag}>")
        for paragraph in paragraphs:
            body.append(f"<p>{html.escape(paragraph)}</p>")
            for kind, index in FLOAT_MENTION.findall(paragraph):
                key = (kind[:3].lower(), index)
                if key in floats and key not in placed:
                    placed.add(key)
                    body.append(f'<div class="float"><p class="caption">{html.escape(floats[key])}</p></div>')
    for key, caption in floats.items():
        if key not in placed:
            body.append(f'<div class="float"><p class="caption">{html.escape(caption)}</p></div>')
    title = html.escape(record.get("title") or "")
    abstract = html.escape(record.get("abstract") or "")
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><style>{CSS}</style></head><body>"
        f"<div class='front'><h1>{title}</h1><div class='authors'>{AUTHORS}</div></div>"
        f"<div class='abstract'><h2>Abstract</h2><p>{abstract}</p></div>"
        f"<div class='columns'>{''.join(body)}</div></body></html>"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qasper", type=Path, default=QASPER)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    if not CHROMIUM.exists():
        raise SystemExit(f"no Chromium at {CHROMIUM}: `make browser` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    records = read_qasper_records(args.qasper)
    ids = list(records)[: args.limit]
    args.out.mkdir(parents=True, exist_ok=True)
    manifest = {}
    started = time.monotonic()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_page()
        for count, paper_id in enumerate(ids, 1):
            record = records[paper_id]
            target = args.out / f"{re.sub(r'[^A-Za-z0-9.]+', '-', paper_id)}.pdf"
            if not target.exists():
                page.set_content(paper_html(record), wait_until="load")
                title = html.escape((record.get("title") or "")[:90])
                page.pdf(
                    path=str(target),
                    format="Letter",
                    display_header_footer=True,
                    header_template=HEADER.format(title=title),
                    footer_template=FOOTER,
                    margin={"top": "0.9in", "bottom": "0.8in", "left": "0.75in", "right": "0.75in"},
                )
            manifest[target.name] = paper_id
            if count % 25 == 0:
                print(f"{count}/{len(ids)} papers, {time.monotonic() - started:.0f} s", flush=True)
        browser.close()
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"{len(ids)} PDFs in {args.out} ({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
