"""Late-interaction (ColBERT) reranking: MaxSim over L2-normalised token vectors, written here.

Token vectors come from a transformers ``AutoModel``'s last hidden states, projected by the
checkpoint's ColBERT linear layer when it has one:

* colbert-ir checkpoints (``HF_ColBERT``) keep ``linear.weight`` in the root state dict and mark
  queries / documents with the ``[unused0]`` / ``[unused1]`` tokens after ``[CLS]``;
* PyLate (sentence-transformers layout) checkpoints keep it in a ``Dense`` module folder and name
  their markers in ``config_sentence_transformers.json`` (``query_prefix`` / ``document_prefix``);
* any other encoder (e.g. all-MiniLM-L6-v2) is used as it is, without projection or markers.

For ColBERT checkpoints queries are padded with ``[MASK]`` to ``max_query_tokens`` (query
augmentation: the mask positions are not attended to but their vectors take part in MaxSim), and
``[CLS]``/``[SEP]``/marker vectors take part; for plain encoders they do not, since those models never
trained them for token matching. Padding is always masked out; punctuation is skipped in documents.
"""

from __future__ import annotations

import json
import string
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from lit3r.retrieval.rerankers.cross_encoder import resolve_weights

COLBERT_IR_MARKERS = ("[unused0]", "[unused1]")
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


def maxsim(query_tokens: np.ndarray, doc_tokens: np.ndarray) -> float:
    """Late-interaction score: for each query vector its best dot product over document vectors, summed.

    With L2-normalised rows (as :class:`ColbertReranker` produces) the dot product is the cosine.
    An empty query or document scores 0.0.
    """
    if len(query_tokens) == 0 or len(doc_tokens) == 0:
        return 0.0
    similarities = np.asarray(query_tokens, dtype=np.float64) @ np.asarray(doc_tokens, dtype=np.float64).T
    return float(similarities.max(axis=1).sum())


def _read_tensor(folder: Path, key: str) -> torch.Tensor | None:
    """``key`` from the folder's weights (safetensors, sharded safetensors or a torch pickle), if present."""
    index_file = folder / "model.safetensors.index.json"
    if index_file.exists():
        shard = json.loads(index_file.read_text(encoding="utf-8"))["weight_map"].get(key)
        files = [folder / shard] if shard else []
    else:
        files = [folder / name for name in _WEIGHT_FILES if (folder / name).exists()]
    for file in files:
        if file.suffix == ".safetensors":
            from safetensors import safe_open

            with safe_open(str(file), framework="pt") as handle:
                if key in handle.keys():
                    return handle.get_tensor(key)
        else:
            state = torch.load(file, map_location="cpu", weights_only=True)
            if key in state:
                return state[key]
    return None


def _dense_folders(path: Path) -> list[Path]:
    """Folders of the sentence-transformers ``Dense`` modules a model folder lists in ``modules.json``."""
    modules_file = path / "modules.json"
    if not modules_file.exists():
        return []
    modules = json.loads(modules_file.read_text(encoding="utf-8"))
    return [path / m["path"] for m in modules if m.get("type", "").endswith("Dense") and m.get("path")]


def load_projection(path: Path) -> tuple[torch.Tensor, torch.Tensor | None, str] | None:
    """The ColBERT linear projection (weight, bias, where it was found), or ``None`` when there is none."""
    weight = _read_tensor(path, "linear.weight")
    if weight is not None:
        return weight.float(), None, "colbert-ir"
    for folder in _dense_folders(path):
        weight = _read_tensor(folder, "linear.weight")
        if weight is not None:
            bias = _read_tensor(folder, "linear.bias")
            return weight.float(), None if bias is None else bias.float(), "pylate"
    return None


def _pylate_markers(path: Path) -> tuple[str, str] | None:
    config_file = path / "config_sentence_transformers.json"
    if not config_file.exists():
        return None
    config = json.loads(config_file.read_text(encoding="utf-8"))
    prefixes = (config.get("query_prefix"), config.get("document_prefix"))
    return (prefixes[0].strip(), prefixes[1].strip()) if all(prefixes) else None


def _to(tensor: torch.Tensor | None, device: str) -> torch.Tensor | None:
    return None if tensor is None else tensor.to(device)


@dataclass
class _Model:
    """A loaded token encoder and the ColBERT conventions that apply to it."""

    tokenizer: object
    encoder: torch.nn.Module
    projection: tuple[torch.Tensor, torch.Tensor | None] | None
    markers: tuple[int, int] | None
    expand_queries: bool
    keep_special: bool
    skip_ids: frozenset[int]
    device: str


def _takes_part(m: _Model, token: int, attended: bool, is_query: bool, special: set[int]) -> bool:
    """Whether a position's vector takes part in MaxSim.

    Unattended positions are query-augmentation ``[MASK]`` tokens (they do); special and marker tokens
    do when the model keeps them; punctuation does not in documents.
    """
    if not attended:
        return is_query
    if token in special and not m.keep_special:
        return False
    return is_query or token not in m.skip_ids


class ColbertReranker:
    """MaxSim reranker over a ColBERT checkpoint or any BERT-like encoder, loaded on first use.

    Args:
        model: A local folder or a Hugging Face model name.
        max_query_tokens: Query length in tokens, special tokens and marker included.
        max_doc_tokens: Passage length in tokens; longer passages are truncated.
        batch_size: Passages per forward pass.
        markers: Insert query/document marker tokens after ``[CLS]``; ``None``: when the checkpoint defines them.
        query_expansion: Pad queries with ``[MASK]`` to ``max_query_tokens``; ``None``: for ColBERT checkpoints.
        special_tokens: Let ``[CLS]``/``[SEP]``/marker vectors take part; ``None``: for ColBERT checkpoints.
        skip_punctuation: Leave punctuation tokens out of document vectors.
        name: The name the trace shows; default ``colbert:<model>``.
    """

    def __init__(
        self,
        model: str,
        *,
        max_query_tokens: int = 32,
        max_doc_tokens: int = 256,
        batch_size: int = 16,
        markers: bool | None = None,
        query_expansion: bool | None = None,
        special_tokens: bool | None = None,
        skip_punctuation: bool = True,
        name: str | None = None,
    ) -> None:
        self.model = model
        self.name = name or f"colbert:{model}"
        self.max_query_tokens, self.max_doc_tokens, self.batch_size = max_query_tokens, max_doc_tokens, batch_size
        self.markers, self.query_expansion, self.special_tokens = markers, query_expansion, special_tokens
        self.skip_punctuation = skip_punctuation
        self._loaded: _Model | None = None
        self._lock = threading.Lock()

    def _marker_ids(self, tokenizer, path: Path, is_colbert: bool) -> tuple[int, int] | None:
        wanted = is_colbert if self.markers is None else self.markers
        if not wanted:
            return None
        names = _pylate_markers(path) or COLBERT_IR_MARKERS
        vocab = tokenizer.get_vocab()
        if any(n not in vocab for n in names):
            if self.markers:
                raise ValueError(f"ColBERT model {self.model!r}: marker tokens {names} are not in the vocabulary")
            return None
        return vocab[names[0]], vocab[names[1]]

    def _expands(self, tokenizer, is_colbert: bool) -> bool:
        wanted = is_colbert if self.query_expansion is None else self.query_expansion
        if wanted and tokenizer.mask_token_id is None:
            if self.query_expansion:
                raise ValueError(f"ColBERT model {self.model!r}: query expansion needs a mask token")
            return False
        return wanted

    def _punctuation_ids(self, tokenizer) -> frozenset[int]:
        if not self.skip_punctuation:
            return frozenset()
        ids = (tokenizer.encode(symbol, add_special_tokens=False) for symbol in string.punctuation)
        return frozenset(row[0] for row in ids if len(row) == 1 and row[0] != tokenizer.unk_token_id)

    def _load(self) -> _Model:
        with self._lock:
            if self._loaded is None:
                from transformers import AutoModel, AutoTokenizer

                path = resolve_weights(self.model)
                device = "cuda:0" if torch.cuda.is_available() else "cpu"
                tokenizer = AutoTokenizer.from_pretrained(str(path))
                encoder = AutoModel.from_pretrained(str(path)).to(device).eval()
                found = load_projection(path)
                is_colbert = found is not None
                projection = None if found is None else (found[0].to(device), _to(found[1], device))
                self._loaded = _Model(
                    tokenizer=tokenizer,
                    encoder=encoder,
                    projection=projection,
                    markers=self._marker_ids(tokenizer, path, is_colbert),
                    expand_queries=self._expands(tokenizer, is_colbert),
                    keep_special=is_colbert if self.special_tokens is None else self.special_tokens,
                    skip_ids=self._punctuation_ids(tokenizer),
                    device=device,
                )
            return self._loaded

    def _rows(self, m: _Model, texts: list[str], is_query: bool) -> list[tuple[list[int], list[bool], list[bool]]]:
        """Per text: token ids, which positions are attended to, and which vectors take part in MaxSim."""
        limit = self.max_query_tokens if is_query else self.max_doc_tokens
        ids = m.tokenizer(list(texts), truncation=True, max_length=limit - (m.markers is not None))["input_ids"]
        special = set(m.tokenizer.all_special_ids) | set(m.markers or ())
        rows = []
        for row in ids:
            if m.markers is not None:
                row = row[:1] + [m.markers[0 if is_query else 1]] + row[1:]
            attend = [True] * len(row)
            extra = limit - len(row) if is_query and m.expand_queries else 0
            row, attend = row + [m.tokenizer.mask_token_id] * extra, attend + [False] * extra
            keep = [_takes_part(m, t, a, is_query, special) for t, a in zip(row, attend, strict=True)]
            rows.append((row, attend, keep))
        return rows

    @torch.inference_mode()
    def _encode(self, m: _Model, texts: list[str], is_query: bool) -> list[np.ndarray]:
        """L2-normalised token vectors per text, only the positions that take part in MaxSim."""
        out: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            rows = self._rows(m, texts[start : start + self.batch_size], is_query)
            width = max(len(r[0]) for r in rows)
            pad = m.tokenizer.pad_token_id or 0
            input_ids = torch.tensor([r[0] + [pad] * (width - len(r[0])) for r in rows], device=m.device)
            attention = torch.tensor([r[1] + [False] * (width - len(r[1])) for r in rows], device=m.device)
            hidden = m.encoder(input_ids=input_ids, attention_mask=attention.long()).last_hidden_state.float()
            if m.projection is not None:
                hidden = torch.nn.functional.linear(hidden, m.projection[0], m.projection[1])
            hidden = torch.nn.functional.normalize(hidden, p=2, dim=-1).cpu().numpy()
            out.extend(hidden[i, : len(r[2])][np.asarray(r[2], dtype=bool)] for i, r in enumerate(rows))
        return out

    def token_vectors(self, texts: Sequence[str], *, is_query: bool) -> list[np.ndarray]:
        """The token vectors MaxSim uses for each text (queries or documents)."""
        return self._encode(self._load(), list(texts), is_query)

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """MaxSim of the query's token vectors against each passage's."""
        if not passages:
            return []
        m = self._load()
        query_vectors = self._encode(m, [query], is_query=True)[0]
        return [maxsim(query_vectors, doc) for doc in self._encode(m, list(passages), is_query=False)]
