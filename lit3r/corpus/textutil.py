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


_WORD = re.compile(r"[^\W\d_][\w\'-]*[^\W_]|[^\W\d_]")
COMPOUND_TAILS = frozenset(
    "based like level wise specific aware free scale oriented driven art trained grained tuned related dependent "
    "independent only shot term time order end world quality source sized size fold step class agnostic guided "
    "enabled friendly style type shaped layer domain task".split()
)
"""Words that, after a hyphen at a line end, make a compound ('Google-based', 'zero-shot') unless the paper
itself writes the two parts as one word."""


class Vocabulary:
    """The words a document writes inside its lines: evidence for undoing or keeping a hyphen at a line end.

    ``hyphenated`` holds compounds written with a hyphen inside a line ('fine-grained'); ``words`` every
    word, and the parts of those compounds, lower-cased.
    """

    def __init__(self, lines: list[str] | None = None) -> None:
        self.words: set[str] = set()
        self.hyphenated: set[str] = set()
        after_hyphen = False
        for line in lines or []:
            after_hyphen = self.add(line, after_hyphen)

    def add(self, line: str, after_hyphen: bool = False) -> bool:
        """Count the words of one line and say whether it ends with a hyphen.

        Neither a word cut by a hyphen at the line's end nor, ``after_hyphen``, the line's first word (maybe
        the rest of a word cut on the line before) is evidence.
        """
        tokens = line.split()
        ends_with_hyphen = bool(tokens) and tokens[-1].endswith("-")
        if ends_with_hyphen:
            tokens = tokens[:-1]
        if after_hyphen:
            tokens = tokens[1:]
        for token in tokens:
            for word in _WORD.findall(token.lower()):
                if "-" in word.strip("-"):
                    self.hyphenated.add(word)
                self.words.update(part for part in word.split("-") if part)
        return ends_with_hyphen

    def keeps_hyphen(self, head: str, tail: str) -> bool:
        """Whether ``head-`` at a line end followed by ``tail`` is a real compound (the hyphen is kept).

        The paper's own spelling decides first: the joined word written elsewhere means a split word, the
        hyphenated one a compound. Otherwise a hyphen stays where both parts are words of the paper (three
        letters or more each), or the tail is a usual second part of a compound (:data:`COMPOUND_TAILS`).
        """
        head_word = (_WORD.findall(head.lower()) or [""])[-1]
        tail_word = (_WORD.findall(tail.lower()) or [""])[0]
        if not head_word or not tail_word:
            return True
        if f"{head_word}-{tail_word}" in self.hyphenated:
            return True
        if head_word + tail_word in self.words:
            return False
        if tail_word in COMPOUND_TAILS:
            return True
        return len(head_word) >= 3 and len(tail_word) >= 3 and {head_word, tail_word} <= self.words


def join_lines(lines: list[str], vocabulary: Vocabulary | None = None) -> str:
    """Join wrapped lines into one paragraph, undoing hyphenation at line ends where a word was split.

    'retrie-' + 'val' becomes 'retrieval', but 'Google-' + 'based' stays 'Google-based' and 'GPT-' + '4o'
    'GPT-4o'. ``vocabulary`` (the whole document's words) tells split words from compounds; without it the
    lines being joined are the evidence.
    """
    stripped = [ln.strip() for ln in lines if ln.strip()]
    if vocabulary is None:
        vocabulary = Vocabulary(stripped)
    text = ""
    for line in stripped:
        if re.search(r"[^\W\d_]-$", text) and line[:1].islower():  # 'retrie-' + 'val' or 'Google-' + 'based'
            head = text[:-1].split()[-1] if text[:-1].split() else ""
            text = text + line if vocabulary.keeps_hyphen(head, line.split()[0]) else text[:-1] + line
        elif re.search(r"[\w.]-$", text) and (line[:1].isupper() or line[:1].isdigit()):  # 'K.-' + 'R.', 'GPT-' + '4o'
            text += line
        else:
            text = f"{text} {line}" if text else line
    return text
