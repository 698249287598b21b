"""Markdown papers: YAML front matter, headed sections, pipe tables, display math, figures, references.

The format (the demo corpus is written in it)::

    ---
    id: demo-sparse-retrieval        # optional; else the slug of the file stem
    title: Sparse Retrieval Revisited
    authors: [Ada Lovelace, Alan Turing]
    venue: ACL
    year: 2024
    ---
    # Sparse Retrieval Revisited       <- used as the title when the front matter has none

    ## Abstract
    One or more paragraphs.

    ## 1 Introduction                  <- any heading sets the section of what follows ('1 Introduction')
    Paragraphs are separated by blank lines; ### sub-headings are allowed.

    Table 1: Caption text.             <- a 'Table N:' line right before (or after) a pipe table is its caption
    | Model | F1 |
    |---|---|
    | A | 0.5 |

    $$
    s(q,d) = \\sum_t w_t                <- $$ ... $$ is an equation block
    $$

    ![Figure 1: Caption text.](fig1.png)   <- an image is a figure block; so is a paragraph 'Figure 1: ...'

    ## References                      <- the list goes to Paper.references, not to the body
    - Lovelace, A. and Turing, A. 2023. Dense Passage Retrieval for Papers. In Proceedings of ACL.

Fenced code and plain paragraphs become text blocks. Markdown has no pages (``page=None``).
Front matter may also carry ``abstract`` and ``references`` (a list of strings).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lit3r.corpus.parsers import ParseError, read_text
from lit3r.corpus.references import parse_reference, split_reference_list
from lit3r.corpus.textutil import clean_text, slugify
from lit3r.models import Block, Paper, ParsedPaper

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
IMAGE = re.compile(r"^\s*!\[(?P<alt>[^\]]*)\]\([^)]*\)\s*$")
TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
SEPARATOR_CELL = re.compile(r"^:?-{3,}:?$")
CAPTION = re.compile(r"^(?P<kind>Table|Figure|Fig\.)\s*(?P<num>\d+|[IVX]+)\s*[:.]", re.IGNORECASE)
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
REFERENCES = re.compile(r"^(?:\d+\.?\s+)?(references|bibliography)$", re.IGNORECASE)


@dataclass
class Item:
    """A piece of the Markdown body before sections are applied."""

    kind: str  # heading, text, table, equation, figure
    text: str
    level: int = 0
    object_id: str | None = None


def parse_markdown(path: Path) -> list[ParsedPaper]:
    """Parse one Markdown paper (see the module docstring for the format)."""
    path = Path(path)
    return parse_markdown_text(read_text(path), path)


def parse_markdown_text(text: str, path: Path) -> list[ParsedPaper]:
    """Parse the decoded text of a Markdown paper; ``path`` names its source (and gives its id)."""
    text = clean_text(text)
    if not text.strip():
        raise ParseError(path, "the file is empty")
    meta, body = split_front_matter(text, path)
    items = attach_captions(read_items(body.split("\n")))
    title = str(meta.get("title") or "").strip()
    if not title:
        first_h1 = next((i for i in items if i.kind == "heading" and i.level == 1), None)
        title = first_h1.text if first_h1 else ""
    if items and items[0].kind == "heading" and items[0].level == 1 and items[0].text == title:
        items = items[1:]
    blocks, abstract, references = sectioned(items)
    raw_refs = [str(r) for r in meta.get("references") or []] + references
    paper = Paper(
        id=str(meta.get("id") or slugify(path.stem)).strip(),
        title=title or path.stem,
        abstract=str(meta.get("abstract") or "").strip() or abstract,
        venue=str(meta["venue"]).strip() if meta.get("venue") else None,
        year=_year(meta.get("year")),
        authors=_authors(meta.get("authors")),
        references=[parse_reference(raw) for raw in raw_refs],
        source=str(path),
        source_format="markdown",
    )
    parsed = ParsedPaper(paper=paper, blocks=blocks)
    if parsed.is_empty:
        raise ParseError(path, "no text besides the title")
    return [parsed.with_spans()]


def split_front_matter(text: str, path: Path) -> tuple[dict[str, Any], str]:
    """The YAML front matter as a mapping (empty without one) and the body after it."""
    match = re.match(r"^\s*---[ \t]*\n(.*?)\n---[ \t]*(?:\n|$)", text, re.DOTALL)
    if not match:
        return {}, text
    try:
        meta = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        raise ParseError(path, f"the front matter is not valid YAML ({exc})") from exc
    if not isinstance(meta, dict):
        raise ParseError(path, "the front matter must be a YAML mapping of fields")
    return meta, text[match.end() :]


def read_items(lines: list[str]) -> list[Item]:
    """Headings, paragraphs, code, tables, equations and figures in document order."""
    items: list[Item] = []
    paragraph: list[str] = []
    index = 0

    def flush() -> None:
        if paragraph:
            items.append(_paragraph_item(paragraph))
            paragraph.clear()

    while index < len(lines):
        line = lines[index]
        heading = HEADING.match(line)
        starts_block = FENCE.match(line) or line.strip().startswith("$$") or IMAGE.match(line) or TABLE_ROW.match(line)
        if heading or starts_block or not line.strip():
            flush()
        if heading:
            items.append(Item("heading", heading.group(2), level=len(heading.group(1))))
        elif FENCE.match(line):
            end = next((j for j in range(index + 1, len(lines)) if FENCE.match(lines[j])), len(lines))
            code = "\n".join(lines[index + 1 : end]).strip("\n")
            if code.strip():
                items.append(Item("text", code))
            index = end
        elif line.strip().startswith("$$"):
            end, math = _display_math(lines, index)
            if math:
                items.append(Item("equation", math))
            index = end
        elif IMAGE.match(line):
            alt = IMAGE.match(line)["alt"].strip()
            if alt:
                caption = CAPTION.match(alt)
                items.append(Item("figure", alt, object_id=f"Figure {caption['num']}" if caption else None))
        elif TABLE_ROW.match(line):
            end = next((j for j in range(index, len(lines)) if not TABLE_ROW.match(lines[j])), len(lines))
            items.append(Item("table", "\n".join(_table_rows(lines[index:end]))))
            index = end - 1
        elif line.strip() and not line.strip().startswith("<!--"):
            paragraph.append(line.strip())
        index += 1
    flush()
    return items


def _paragraph_item(lines: list[str]) -> Item:
    text = " ".join(lines) if not any(LIST_ITEM.match(line) for line in lines) else "\n".join(lines)
    caption = CAPTION.match(text)
    if caption and not caption["kind"].lower().startswith("tab"):
        return Item("figure", text, object_id=f"Figure {caption['num']}")
    return Item("text", text)


def _display_math(lines: list[str], start: int) -> tuple[int, str]:
    """The index of the closing '$$' line and the math between the delimiters."""
    first = lines[start].strip()[2:]
    if first.rstrip().endswith("$$"):  # $$ ... $$ on one line
        return start, first.rstrip()[:-2].strip()
    body = [first]
    for end in range(start + 1, len(lines)):
        if lines[end].rstrip().endswith("$$"):
            body.append(lines[end].rstrip()[:-2])
            return end, "\n".join(part for part in body if part.strip()).strip()
        body.append(lines[end])
    return len(lines), "\n".join(body).strip()


def _table_rows(lines: list[str]) -> list[str]:
    """Pipe rows without the outer pipes and the '|---|' separator."""
    rows = []
    for line in lines:
        cells = [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if cells and all(SEPARATOR_CELL.match(cell) for cell in cells if cell):
            continue
        rows.append(" | ".join(cells))
    return rows


def attach_captions(items: list[Item]) -> list[Item]:
    """Merge a 'Table N: ...' paragraph directly before (preferred) or after a table into that table."""
    result: list[Item] = []
    for item in items:
        previous = result[-1] if result else None
        if item.kind == "table" and _is_table_caption(previous):
            result[-1] = _captioned(item, previous)
        elif _is_table_caption(item) and previous is not None and previous.kind == "table" and not previous.object_id:
            result[-1] = _captioned(previous, item)
        else:
            result.append(item)
    return result


def _is_table_caption(item: Item | None) -> bool:
    match = CAPTION.match(item.text) if item is not None and item.kind == "text" else None
    return bool(match) and match["kind"].lower() == "table"


def _captioned(table: Item, caption: Item) -> Item:
    number = CAPTION.match(caption.text)["num"]
    return Item("table", f"{caption.text}\n{table.text}", object_id=f"Table {number}")


def sectioned(items: list[Item]) -> tuple[list[Block], str, list[str]]:
    """Blocks with their sections, the abstract text and the raw reference entries."""
    blocks: list[Block] = []
    abstract: list[str] = []
    reference_lines: list[str] = []
    section: str | None = None
    mode = "body"
    for item in items:
        if item.kind == "heading":
            if REFERENCES.match(item.text):
                mode = "references"
            elif item.text.lower().rstrip(":") == "abstract":
                mode = "abstract"
            else:
                mode, section = "body", item.text
        elif mode == "references":
            reference_lines.append(item.text)
        elif mode == "abstract" and item.kind == "text":
            abstract.append(item.text)
        else:
            blocks.append(Block(type=item.kind, text=item.text, section=section, object_id=item.object_id))
    return blocks, "\n\n".join(abstract), _reference_entries(reference_lines)


def _reference_entries(paragraphs: list[str]) -> list[str]:
    """One string per reference: list items when the section is a list, else the generic splitter."""
    text = "\n".join(paragraphs)
    if any(LIST_ITEM.match(line) for line in text.split("\n")):
        entries: list[str] = []
        for line in text.split("\n"):
            if LIST_ITEM.match(line):
                entries.append(LIST_ITEM.sub("", line, count=1).strip())
            elif entries and line.strip():
                entries[-1] += " " + line.strip()
        return [entry for entry in entries if entry]
    return split_reference_list("\n\n".join(paragraphs))


def _year(value: Any) -> int | None:
    match = re.search(r"\d{4}", str(value)) if value is not None else None
    return int(match.group()) if match else None


def _authors(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(name).strip() for name in value if str(name).strip()]
    if isinstance(value, str):
        return [name.strip() for name in re.split(r",|;|\band\b", value) if name.strip()]
    return []
