"""HTML snapshots (Zotero saves a web page as ``storage/<key>/<name>.html``), read with lxml.

Scripts, styles, navigation, headers, footers and forms are dropped; headings set the
section of what follows; paragraphs, list items and block quotes become text blocks,
tables pipe rows, figure captions figure blocks; a References/Bibliography section goes
to the paper's reference list. Like Markdown, a web page has no pages (``page=None``).
"""

from __future__ import annotations

import re
from pathlib import Path

import lxml.etree
import lxml.html

from lit3r.corpus.parsers import ParseError
from lit3r.corpus.references import parse_reference
from lit3r.corpus.textutil import clean_text, slugify
from lit3r.models import Block, Paper, ParsedPaper

DROPPED = ("script", "style", "noscript", "nav", "header", "footer", "form", "aside", "template", "svg", "button")
HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
TEXT_TAGS = {"p", "li", "blockquote", "dd", "pre"}
REFERENCES = re.compile(r"^(?:\d+\.?\s+)?(references|bibliography|works cited)$", re.IGNORECASE)
TABLE_ID = re.compile(r"^(Table|Figure|Fig\.)\s*(\d+)", re.IGNORECASE)


def parse_snapshot(path: Path) -> list[ParsedPaper]:
    """The paper in an HTML file; :class:`ParseError` when it cannot be read or holds no text."""
    try:
        root = lxml.html.fromstring(path.read_bytes())
    except OSError as exc:
        raise ParseError(path, f"cannot read the file ({exc.strerror or exc})") from exc
    except (lxml.etree.ParserError, ValueError) as exc:
        raise ParseError(path, f"not a readable HTML page ({exc})") from exc
    for element in root.iter(*DROPPED):
        element.drop_tree()
    title = _text(root.find(".//title")) or _text(root.find(".//h1")) or path.stem
    blocks: list[Block] = []
    references: list[str] = []
    section: str | None = None
    in_references = False
    for element in root.iter("h1", "h2", "h3", "h4", "h5", "h6", "table", "figcaption", *TEXT_TAGS):
        if _inside(element, ("table", "figcaption", *TEXT_TAGS) if element.tag != "table" else ("table",)):
            continue  # its text is part of an enclosing block
        text = _text(element)
        if not text:
            continue
        if element.tag in HEADINGS:
            section = text
            in_references = bool(REFERENCES.match(text))
        elif in_references and element.tag in ("li", "p", "dd"):
            references.append(text)
        elif element.tag == "table":
            blocks.append(Block(type="table", text=_table(element), section=section, object_id=_caption_id(element)))
        elif element.tag == "figcaption":
            match = TABLE_ID.match(text)
            blocks.append(Block(type="figure", text=text, section=section,
                                object_id=f"{match.group(1).title()} {match.group(2)}" if match else None))  # fmt: skip
        else:
            blocks.append(Block(type="text", text=text, section=section))
    abstract = ""
    if blocks and blocks[0].section and blocks[0].section.lower() == "abstract":
        abstract = blocks.pop(0).text
    if not blocks and not abstract:
        raise ParseError(path, "the HTML page holds no text")
    paper = Paper(
        id=slugify(path.stem),
        title=title,
        abstract=abstract,
        references=[parse_reference(r) for r in references],
        source=str(path),
        source_format="html",
    )
    return [ParsedPaper(paper=paper, blocks=blocks).with_spans()]


def _inside(element: lxml.html.HtmlElement, tags: tuple[str, ...]) -> bool:
    return any(parent.tag in tags for parent in element.iterancestors())


def _text(element: lxml.html.HtmlElement | None) -> str:
    return clean_text(" ".join(element.text_content().split())) if element is not None else ""


def _table(table: lxml.html.HtmlElement) -> str:
    rows = []
    for row in table.iter("tr"):
        cells = [" ".join(cell.text_content().split()).replace("|", "/") for cell in row if cell.tag in ("td", "th")]
        if cells:
            rows.append("| " + " | ".join(cells) + " |")
    caption = table.find("caption")
    return "\n".join(([_text(caption)] if caption is not None else []) + rows)


def _caption_id(table: lxml.html.HtmlElement) -> str | None:
    caption = table.find("caption")
    match = TABLE_ID.match(_text(caption)) if caption is not None else None
    return f"{match.group(1).title()} {match.group(2)}" if match else None
