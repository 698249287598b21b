"""Writing a benchmark's JSON report: to ``--out`` (folders made as needed) when given, and to stdout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def emit(document: Any, out: Path | None) -> None:
    """Print ``document`` as indented JSON and, when ``out`` is given, write the same text there."""
    text = json.dumps(document, indent=1)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    print(text)
