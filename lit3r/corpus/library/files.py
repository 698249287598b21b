"""Attachment paths as reference managers write them, resolved against the library's folder.

BibTeX ``file`` fields come in three shapes::

    JabRef, Zotero, Mendeley   Description:path/to.pdf:Type;Other:snap.html:text/html   (':' and ';' escaped '\\:')
    Mendeley                   :path/to.pdf:pdf
    Better BibTeX, BibLaTeX    /abs/path/to.pdf;other.pdf   (plain paths)

RIS ``L1`` lines and CSL files give ``file://`` URLs or plain paths.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlparse

READABLE = (".pdf", ".html", ".htm")
"""Attachments lit3r reads: PDFs and HTML snapshots."""
_UNESCAPED = r"(?<!\\)"


def split_file_field(value: str) -> list[str]:
    """The paths of a BibTeX ``file`` field, in order (descriptions and types dropped, escapes undone)."""
    paths = []
    for part in re.split(_UNESCAPED + ";", value.strip()):
        part = part.strip()
        if not part:
            continue
        pieces = re.split(_UNESCAPED + ":", part)
        if len(pieces) >= 3 and not re.fullmatch(r"[A-Za-z]", pieces[0]):  # Description:path:Type
            path = ":".join(pieces[1:-1])
        elif len(pieces) == 2 and re.fullmatch(r"[A-Za-z]", pieces[0]):  # C:\\path (an unescaped drive)
            path = part
        else:
            path = part
        paths.append(_unescape(path))
    return [p for p in paths if p]


def _unescape(text: str) -> str:
    return re.sub(r"\\([\\:;{}])", r"\1", text).strip()


def from_url(value: str) -> str:
    """A ``file://`` URL as a path; anything else as it is."""
    if value.lower().startswith("file://"):
        return unquote(urlparse(value).path)
    return value


def resolve(paths: list[str], base: Path) -> tuple[list[Path], list[str]]:
    """Readable attachments that exist (PDFs first, then snapshots), and those named that do not exist.

    A relative path is taken relative to ``base`` (the folder of the library file). Attachments of
    other kinds (a .docx, a .zip) are passed over: they are not papers lit3r reads.
    """
    found: list[Path] = []
    missing: list[str] = []
    for text in paths:
        path = Path(from_url(text)).expanduser()
        path = path if path.is_absolute() else base / path
        if not path.name.lower().endswith(READABLE):
            continue
        if path.is_file():
            found.append(path)
        else:
            missing.append(str(path))
    found.sort(key=lambda p: not p.name.lower().endswith(".pdf"))
    return found, missing
