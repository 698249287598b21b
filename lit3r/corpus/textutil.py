"""Small text helpers shared by the parsers and the reference parser."""

from __future__ import annotations

import re
import unicodedata

_NOT_TEXT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ufeff\ud800-\udfff]")
"""Control characters (all but tab and line feed), stray byte-order marks and lone surrogates."""


def clean_text(text: str) -> str:
    """``text`` without characters that are not text: control codes (tab and new line stay; a carriage
    return becomes a new line), byte-order marks inside the text and lone UTF-16 surrogates (which JSON
    escapes can produce and no encoder accepts)."""
    return _NOT_TEXT.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def slugify(text: str) -> str:
    """A paper id from a file stem: lowercase ASCII letters, digits and single hyphens ('paper' if nothing is left)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-") or "paper"


def join_lines(lines: list[str]) -> str:
    """Join wrapped lines into one paragraph, undoing hyphenation at line ends ('retrie-' + 'val')."""
    text = ""
    for line in (ln.strip() for ln in lines):
        if not line:
            continue
        if re.search(r"[^\W\d_]-$", text) and line[:1].islower():  # 'retrie-' + 'val'
            text = text[:-1] + line
        elif re.search(r"[\w.]-$", text) and (line[:1].isupper() or line[:1].isdigit()):  # 'K.-' + 'R.', 'GPT-' + '4o'
            text += line
        else:
            text = f"{text} {line}" if text else line
    return text
