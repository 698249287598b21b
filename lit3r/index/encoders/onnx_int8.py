"""A sentence-transformers model run as an int8 (dynamically quantised) ONNX Runtime graph.

The graph is made here, from the model's own packaged weights: ``torch.onnx.export`` of the
transformer, then ``onnxruntime.quantization.quantize_dynamic`` (int8 weights per output channel,
activations quantised at run time). It is cached under :func:`model_cache_root`, keyed by a hash of
the weights and of this recipe, so it is made once per machine (a few seconds). Pooling (mean or
CLS) and the query/document prompts come from the model's sentence-transformers configuration.

Dynamic quantisation takes one activation scale per tensor, so in a batch a text's vector would
depend on the texts beside it (cosine 0.985 to its vector alone, measured on QASPER chunks). The
int8 graph therefore runs one text at a time: a vector is a function of its text alone (what the
embedding cache assumes), no token is padding, and a text of a few hundred tokens still makes
matrix products large enough for the CPU (benchmarks/bench_fast_index.py measures it). Texts run
in parallel, one single-threaded run per core (``EmbedderSettings.threads`` runs, default one per
core the process may use): on two cores this beat one run with two intra-op threads, and more so
when other processes share the cores, since no thread waits at a barrier for a busy sibling.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import uuid
import warnings
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

import numpy as np

from lit3r.index.model_files import (
    empty_vectors,
    file_digest,
    model_cache_root,
    model_pooling,
    model_prompts,
    resolve_model_path,
    transformer_folder,
    unit_rows,
)
from lit3r.settings import EmbedderSettings

log = logging.getLogger(__name__)

RECIPE = "torch.onnx.export opset 17 + quantize_dynamic QInt8 per-channel, v1"
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def export_onnx(model_dir: Path, *, quantized: bool = True, cache_root: Path | None = None) -> Path:
    """The ONNX file (int8 unless ``quantized`` is false) of the transformer in ``model_dir``, cached."""
    import onnxruntime

    weights = [model_dir / name for name in WEIGHT_FILES if (model_dir / name).exists()]
    if not weights:
        raise ValueError(f"{model_dir}: no {' or '.join(WEIGHT_FILES)} to export to ONNX")
    variant = "int8" if quantized else "fp32"
    recipe = f"{file_digest([*weights, model_dir / 'config.json'])} {RECIPE} onnxruntime {onnxruntime.__version__}"
    key = hashlib.sha256(recipe.encode()).hexdigest()[:16]
    target = (cache_root or model_cache_root()) / f"onnx-{variant}-{model_dir.name or 'model'}-{key}"
    final = target / f"model-{variant}.onnx"
    if final.exists():
        return final
    scratch = target.parent / f"tmp-{uuid.uuid4().hex[:8]}"
    scratch.mkdir(parents=True)
    try:
        _export(model_dir, scratch / "model-fp32.onnx")
        if quantized:
            _quantize(scratch / "model-fp32.onnx", scratch / "model-int8.onnx")
            (scratch / "model-fp32.onnx").unlink()
        (scratch / "recipe.json").write_text(json.dumps({"source": str(model_dir), "recipe": recipe}), "utf-8")
        try:
            os.replace(scratch, target)
        except OSError:  # another process published the same export first
            if not final.exists():
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return final


def _export(model_dir: Path, path: Path) -> None:
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    names = [n for n in INPUTS if n != "token_type_ids" or model.config.type_vocab_size > 0]
    example = tuple((torch.zeros if n == "token_type_ids" else torch.ones)((1, 8), dtype=torch.long) for n in names)
    axes = {n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]}
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation and tracer notices
        torch.onnx.export(
            model,
            example,
            str(path),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )


def _quantize(source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantiser logs a pre-processing hint on the root logger
    try:
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True)
    finally:
        root.setLevel(level)


@lru_cache(maxsize=4)
def _session(path: str):
    """A single-threaded session; parallelism comes from running several texts at once (see ``workers``)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


class OnnxInt8Encoder:
    """A sentence-transformers model (mean or CLS pooling) through an int8 ONNX Runtime session."""

    paper_separator = ". "

    def __init__(self, settings: EmbedderSettings, *, quantized: bool = True, batch_size: int | None = None) -> None:
        """``batch_size`` defaults to 1 for the int8 graph (see the module) and to ``settings.batch_size`` for fp32;
        ``quantized=False`` and other batch sizes exist to measure what each step buys."""
        from transformers import AutoConfig, AutoTokenizer

        path = resolve_model_path(settings.model)
        self.pooling = settings.pooling if settings.pooling != "auto" else model_pooling(path)
        if self.pooling not in ("mean", "cls"):
            found = "no sentence-transformers pooling module" if self.pooling is None else f"pooling {self.pooling!r}"
            raise ValueError(f"model {settings.model!r}: {found}; backend 'onnx-int8' supports mean and cls pooling")
        folder = transformer_folder(path)
        config = AutoConfig.from_pretrained(str(folder), local_files_only=True)
        self.max_length = min(settings.max_length, int(getattr(config, "max_position_embeddings", settings.max_length)))
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True).backend_tokenizer
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_length)
        self.session = _session(str(export_onnx(folder, quantized=quantized)))
        self.batch_size = batch_size or (1 if quantized else settings.batch_size)
        self.workers = settings.threads or len(os.sched_getaffinity(0))
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.dim = int(config.hidden_size)
        self.name = f"{settings.model}:onnx-{'int8' if quantized else 'fp32'}"
        self.prompts = model_prompts(path)
        self.settings = settings

    def _encode(self, texts: list[str], prompt: str) -> np.ndarray:
        if not texts:
            return empty_vectors(self.dim)
        encodings = self.tokenizer.encode_batch([prompt + t for t in texts])
        lengths = np.array([len(e.ids) for e in encodings])
        order = np.argsort(-lengths, kind="stable")  # texts of similar length share a batch
        batches = [order[i : i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        out = np.empty((len(texts), self.dim), dtype=np.float32)

        def run(rows: np.ndarray) -> None:
            width = int(lengths[rows].max())
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for row, index in enumerate(rows):
                ids[row, : lengths[index]] = encodings[index].ids
                mask[row, : lengths[index]] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self.session.run(None, {name: feed[name] for name in self.inputs})[0]
            if self.pooling == "cls":
                out[rows] = hidden[:, 0]
            else:
                weights = mask[..., None].astype(np.float32)
                out[rows] = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)

        if self.workers == 1 or len(batches) == 1:
            for rows in batches:
                run(rows)
        else:  # ONNX Runtime releases the GIL while it runs: one single-threaded run per core
            with ThreadPoolExecutor(self.workers) as pool:
                list(pool.map(run, batches))
        return unit_rows(out)

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Passage vectors (with the model's document prompt, if it declares one)."""
        return self._encode(list(texts), self.prompts.get("document", ""))

    def encode_queries(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Query vectors, with the query instruction (or the model's own query prompt) prefixed."""
        return self._encode(list(texts), self.settings.query_instruction or self.prompts.get("query", ""))
