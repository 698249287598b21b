"""One JSON-lines reader for the evaluation files: blank lines skipped, bad lines named by file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def iter_jsonl(path: Path, error: type[Exception]) -> Iterator[tuple[Any, str]]:
    """``(value, "file:line")`` for every non-blank line; malformed JSON raises ``error`` naming the line."""
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                yield json.loads(line), where
            except json.JSONDecodeError as exc:
                raise error(f"{where}: not valid JSON ({exc.msg})") from exc
