"""What a file holds, judged by its bytes rather than its name, and how its text is decoded.

A name can lie: a PDF saved as ``paper.txt`` must be read as a PDF, not as a
paper titled ``%PDF-1.5``; an image, an archive or random bytes must be refused
by name instead of becoming a paper of mojibake.

:func:`sniff` names the kind of content from the first bytes; :func:`decode_text`
turns the bytes of a text file into ``str``: a byte-order mark decides when
there is one (UTF-8, UTF-16, UTF-32), else strict UTF-8, else UTF-16 without a
mark (recognised by its zero bytes), else Windows-1252 / Latin-1 when the result
is clearly Western European text (accented letters inside mostly ASCII words),
else the guess of charset-normalizer when it finds the text coherent (Cyrillic
code pages, Shift-JIS, GB18030, ...). Anything else is refused with the reason;
nothing is silently decoded to U+FFFD.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

HEAD_BYTES = 4096
"""How many leading bytes :func:`sniff` looks at."""

Kind = Literal["empty", "pdf", "gzip", "text", "binary"]

_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"PK\x03\x04", "a ZIP archive (or a .docx/.epub file)"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "a Microsoft Office (OLE) document"),
    (b"\x7fELF", "an executable (ELF)"),
    (b"BZh", "a bzip2 archive"),
    (b"\xfd7zXZ\x00", "an xz archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"%!PS", "a PostScript file"),
    (b"SQLite format 3\x00", "an SQLite database"),
)
_BOMS: tuple[tuple[bytes, str], ...] = (  # UTF-32 first: its little-endian mark starts like UTF-16's
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\x1a")  # \x1a: the end-of-file mark of old DOS text files
_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
WESTERN_PUNCTUATION = frozenset("\u00a0“”‘’‚„–—…•€£¥§°±×÷«»·©®™¡¿¢¤¦¨ª¬¯²³´µ¶¸¹º¼½¾†‡‰‹›ˆ˜")


@dataclass(frozen=True)
class Sniffed:
    """The kind of a file's content; ``what`` describes a refused binary format ('a PNG image')."""

    kind: Kind
    what: str = ""


class UndecodableText(ValueError):
    """Bytes that are not text in any encoding lit3r recognises; the message says why."""


def sniff(head: bytes) -> Sniffed:
    """The kind of content whose first bytes are ``head`` (at least :data:`HEAD_BYTES` of them when the file has)."""
    if not head:
        return Sniffed("empty")
    if b"%PDF-" in head[:1024]:  # the PDF specification allows junk before the header
        return Sniffed("pdf")
    if head.startswith(b"\x1f\x8b"):
        return Sniffed("gzip")
    for signature, what in _SIGNATURES:
        if head.startswith(signature):
            return Sniffed("binary", what)
    if any(head.startswith(bom) for bom, _ in _BOMS) or _utf16_without_bom(head):
        return Sniffed("text")
    if b"\x00" in head or _control_share(head) > 0.01:
        return Sniffed("binary", "binary data, not text")
    return Sniffed("text")


def decode_text(data: bytes) -> tuple[str, str]:
    """``(text, encoding)`` for the bytes of a text file; raises :class:`UndecodableText` with the reason."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding), encoding
            except UnicodeDecodeError as exc:
                raise UndecodableText(f"it starts with a {encoding} byte-order mark but is not {encoding}") from exc
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as exc:
        utf8_error = exc
    utf16 = _utf16_without_bom(data)
    if utf16:
        try:
            return data.decode(utf16), utf16
        except UnicodeDecodeError:
            pass
    if b"\x00" in data or _control_share(data) > 0.01:
        raise UndecodableText("binary data, not text (zero or control bytes)")
    where = f"invalid byte 0x{data[utf8_error.start]:02x} at offset {utf8_error.start}"
    if _mostly_utf8(data):
        raise UndecodableText(f"UTF-8 mixed with another encoding ({where}); convert the file to UTF-8")
    western = _western(data)
    if western is not None:
        return western, "cp1252"
    guessed = _guess(data)
    if guessed is not None:
        return guessed
    raise UndecodableText(f"not UTF-8 ({where}) and no other text encoding fits; convert the file to UTF-8")


def _control_share(data: bytes) -> float:
    """The share of bytes that are C0 control codes text files do not use."""
    if not data:
        return 0.0
    controls = sum(1 for byte in data if (byte < 0x20 or byte == 0x7F) and byte not in _TEXT_CONTROLS)
    return controls / len(data)


def _mostly_utf8(data: bytes) -> bool:
    """True when valid UTF-8 sequences outnumber the stray high bytes: a UTF-8 file with a few foreign bytes,
    which no single encoding reads right (Latin-1 text almost never holds a valid UTF-8 sequence)."""
    sequences = _UTF8_SEQUENCE.findall(data)
    if not sequences:
        return False
    stray = sum(byte >= 0x80 for byte in data) - sum(len(s) for s in sequences)
    return len(sequences) >= stray


def _utf16_without_bom(data: bytes) -> str | None:
    """'utf-16-le' or 'utf-16-be' when every other byte is zero, as in ASCII-heavy UTF-16 text."""
    sample = data[: HEAD_BYTES - HEAD_BYTES % 2]
    if len(sample) < 8:
        return None
    even, odd = sample[0::2], sample[1::2]
    if odd.count(0) >= 0.7 * len(odd) and even.count(0) <= 0.05 * len(even):
        return "utf-16-le"
    if even.count(0) >= 0.7 * len(even) and odd.count(0) <= 0.05 * len(odd):
        return "utf-16-be"
    return None


def _western(data: bytes) -> str | None:
    """The text as Windows-1252 when that is clearly what it is: accented letters and typographic punctuation
    among mostly ASCII letters. Bytes 1252 leaves undefined read as Latin-1 would, and then disqualify."""
    text = data.decode("cp1252", errors="replace")
    if "\ufffd" in text:
        return None
    letters = ascii_letters = 0
    for char in text:
        if char.isascii():
            ascii_letters += char.isalpha()
            continue
        if unicodedata.category(char).startswith("L"):
            letters += 1
        elif char not in WESTERN_PUNCTUATION:
            return None
    if ascii_letters == 0 or letters > 0.3 * (letters + ascii_letters):
        return None
    return text


def _guess(data: bytes) -> tuple[str, str] | None:
    """charset-normalizer's reading when it finds (almost) no mess in it, e.g. cp1251 Russian or Shift-JIS."""
    from charset_normalizer import from_bytes

    best = from_bytes(data[: 1 << 20]).best()
    if best is None or best.chaos > 0.1:
        return None
    try:
        return data.decode(best.encoding), best.encoding
    except (UnicodeDecodeError, LookupError):
        return None
