"""Encoders on tiny checkpoints built here: sentence-transformers vs FlagEmbedding pooling, SPECTER2 adapters."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from lit3r.index import encoders
from lit3r.index.encoders import QueryCache, load_encoder, load_paper_encoder, paper_text
from lit3r.index.model_files import model_pooling, resolve_model_path
from lit3r.models import Paper
from lit3r.settings import EmbedderSettings, PaperEmbedderSettings

WORDS = "the of and a to in is retrieval model paper dense sparse vector query document graph citation table".split()
TEXTS = ["dense retrieval model", "a paper of the citation graph", "sparse vector query", "table"]
TORCH = "sentence-transformers"


def _tiny_bert(folder: Path, seed: int = 0) -> Path:
    """A 2-layer, 32-wide random BERT with a WordPiece tokenizer, saved with save_pretrained."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True)
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n", encoding="utf-8")
    torch.manual_seed(seed)
    config = BertConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        vocab_size=len(WORDS) + 5,
        max_position_embeddings=64,
    )
    BertModel(config).save_pretrained(folder)
    BertTokenizerFast(vocab_file=str(vocab)).save_pretrained(folder)
    return folder


def _sentence_transformer(base: Path, folder: Path, pooling: str) -> Path:
    """The tiny BERT wrapped as a sentence-transformers model with the given pooling."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules.transformer import Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling

    transformer = Transformer(str(base), max_seq_length=64)
    SentenceTransformer(modules=[transformer, Pooling(32, pooling_mode=pooling)]).save(str(folder))
    return folder


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    base = _tiny_bert(root / "base")
    return {
        "base": base,
        "mean": _sentence_transformer(base, root / "st-mean", "mean"),
        "cls": _sentence_transformer(base, root / "st-cls", "cls"),
    }


def _check(vectors: np.ndarray, n: int, dim: int = 32) -> None:
    assert vectors.dtype == np.float32 and vectors.shape == (n, dim)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_flagembedding_reads_pooling_from_the_model_and_matches_sentence_transformers(models, pooling):
    common = {"model": str(models[pooling]), "query_instruction": "query: ", "max_length": 64}
    st = load_encoder(EmbedderSettings(backend="sentence-transformers", **common))
    flag = load_encoder(EmbedderSettings(backend="flagembedding", **common))
    assert flag.pooling == pooling and st.dim == flag.dim == 32
    docs_st, docs_flag = st.encode_documents(TEXTS), flag.encode_documents(TEXTS)
    _check(docs_st, len(TEXTS))
    np.testing.assert_allclose(docs_flag, docs_st, atol=1e-5)
    queries_st, queries_flag = st.encode_queries(TEXTS), flag.encode_queries(TEXTS)
    np.testing.assert_allclose(queries_flag, queries_st, atol=1e-5)
    assert not np.allclose(queries_st, docs_st, atol=1e-3)  # the instruction is really prefixed


def test_wrong_pooling_gives_different_vectors(models):
    """The MODELS.md trap: a mean-pooled model read with CLS pooling gives other vectors."""
    settings = EmbedderSettings(model=str(models["mean"]), backend="flagembedding", pooling="cls")
    wrong = load_encoder(settings).encode_documents(TEXTS)
    right = load_encoder(EmbedderSettings(model=str(models["mean"]), backend=TORCH)).encode_documents(TEXTS)
    assert np.all((wrong * right).sum(axis=1) < 0.999)
    overridden = load_encoder(EmbedderSettings(model=str(models["mean"]), backend=TORCH, pooling="cls"))
    overridden = overridden.encode_documents(TEXTS)
    np.testing.assert_allclose(overridden, wrong, atol=1e-5)  # sentence-transformers honours the setting too


def test_model_pooling_reads_new_and_legacy_configs(models, tmp_path):
    assert model_pooling(models["mean"]) == "mean" and model_pooling(models["cls"]) == "cls"
    assert model_pooling(models["base"]) is None
    (tmp_path / "pool").mkdir()
    (tmp_path / "modules.json").write_text(
        json.dumps([{"path": "pool", "type": "sentence_transformers.models.Pooling"}])
    )
    legacy = {"word_embedding_dimension": 8, "pooling_mode_cls_token": False, "pooling_mode_lasttoken": True}
    (tmp_path / "pool" / "config.json").write_text(json.dumps(legacy))
    assert model_pooling(tmp_path) == "last_token"
    (tmp_path / "pool" / "config.json").write_text(json.dumps({"pooling_mode": "max"}))
    assert model_pooling(tmp_path) == "max"
    with pytest.raises(ValueError, match="set embedder.pooling"):
        load_encoder(EmbedderSettings(model=str(tmp_path), backend="flagembedding"))


def test_encoders_are_cached_and_handle_empty_input(models):
    settings = EmbedderSettings(model=str(models["mean"]), backend=TORCH)
    encoder = load_encoder(settings)
    assert load_encoder(EmbedderSettings(model=str(models["mean"]), backend=TORCH)) is encoder
    other_batch = load_encoder(settings.model_copy(update={"batch_size": 2}))
    assert other_batch is not encoder and other_batch.model is encoder.model  # one model in memory
    np.testing.assert_allclose(other_batch.encode_documents(TEXTS), encoder.encode_documents(TEXTS), atol=1e-5)
    assert encoder.encode_documents([]).shape == (0, 32)


def test_missing_model_is_a_clear_error(tmp_path):
    for name in [str(tmp_path / "no-such-model"), "no-such-org/no-such-model"]:
        with pytest.raises(ValueError, match="weights must be available locally") as info:
            load_encoder(EmbedderSettings(model=name))
        assert name in str(info.value)


def test_default_model_resolves_to_the_shipped_weights():
    path = resolve_model_path("all-MiniLM-L6-v2")
    assert (path / "modules.json").exists() and model_pooling(path) == "mean"


@pytest.fixture(scope="module")
def specter(models, tmp_path_factory) -> PaperEmbedderSettings:
    """Tiny SPECTER2: the tiny BERT base plus random proximity and ad-hoc query adapters."""
    from adapters import AutoAdapterModel

    root = tmp_path_factory.mktemp("specter")
    model = AutoAdapterModel.from_pretrained(str(models["base"]))
    torch.manual_seed(1)
    for name in ["proximity", "adhoc_query"]:
        model.add_adapter(name)
    with torch.no_grad():
        for param_name, param in model.named_parameters():
            if "adapters" in param_name:
                param.normal_(0, 0.5)  # fresh adapters start close to the identity
    model.save_adapter(str(root / "proximity"), "proximity")
    model.save_adapter(str(root / "query"), "adhoc_query")
    return PaperEmbedderSettings(
        model=str(models["base"]), proximity_adapter=str(root / "proximity"), query_adapter=str(root / "query")
    )


def test_specter2_uses_the_proximity_adapter_for_papers_and_the_query_adapter_for_queries(models, specter):
    encoder = load_paper_encoder(specter, EmbedderSettings())
    assert load_paper_encoder(specter, EmbedderSettings()) is encoder
    paper = Paper(id="p", title="dense retrieval", abstract="a paper of the citation graph")
    assert paper_text(paper, encoder) == "dense retrieval[SEP]a paper of the citation graph"
    docs, queries = encoder.encode_documents(TEXTS), encoder.encode_queries(TEXTS)
    _check(docs, len(TEXTS))
    _check(queries, len(TEXTS))
    assert np.all((docs * queries).sum(axis=1) < 0.99)
    plain = load_paper_encoder(
        specter.model_copy(update={"proximity_adapter": None, "query_adapter": None}), EmbedderSettings()
    )
    base = plain.encode_documents(TEXTS)
    assert np.all((base * docs).sum(axis=1) < 0.99)  # the adapter changes the vectors
    cls = load_encoder(EmbedderSettings(model=str(models["cls"]), backend=TORCH)).encode_documents(TEXTS)
    np.testing.assert_allclose(base, cls, atol=1e-5)  # no adapter: plain CLS pooling of the base model
    np.testing.assert_allclose(encoder.encode_documents(TEXTS[:1]), docs[:1], atol=1e-5)  # active adapter restored


def test_paper_encoder_falls_back_to_the_chunk_encoder(models):
    chunk = EmbedderSettings(model=str(models["mean"]))
    assert load_paper_encoder(PaperEmbedderSettings(), chunk) is load_encoder(chunk)


@pytest.mark.slow
def test_default_minilm_offline():
    st = load_encoder(EmbedderSettings(backend=TORCH))
    assert st.dim == 384
    vectors = st.encode_documents(
        ["Dense passage retrieval with neural encoders.", "Neural encoders for dense retrieval of passages."]
        + ["The recipe needs two eggs and some flour."]
    )
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3
    flag = load_encoder(EmbedderSettings(backend="flagembedding"))
    assert flag.pooling == "mean"
    cosines = (flag.encode_documents(TEXTS) * st.encode_documents(TEXTS)).sum(axis=1)
    assert np.all(cosines > 0.999)
    assert isinstance(st, encoders.Encoder) and isinstance(flag, encoders.Encoder)


class CountingEncoder:
    name, dim, paper_separator = "counting", 2, " "

    def __init__(self) -> None:
        self.queries: list[list[str]] = []

    def encode_documents(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        return np.ones((len(texts), 2), dtype=np.float32)

    def encode_queries(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        self.queries.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def test_query_cache_encodes_each_text_once_and_evicts_the_oldest() -> None:
    inner = CountingEncoder()
    cache = QueryCache(inner, maxsize=2)
    first = cache.encode_queries(["ab", "abc", "ab"])
    assert inner.queries == [["ab", "abc"]]  # one batch, duplicates encoded once
    assert first.tolist() == [[2, 1], [3, 1], [2, 1]]
    assert cache.encode_queries(["abc"]).tolist() == [[3, 1]] and len(inner.queries) == 1
    cache.encode_queries(["abcd"])  # "ab" is now the least recently used and goes
    cache.encode_queries(["ab"])
    assert inner.queries == [["ab", "abc"], ["abcd"], ["ab"]]
    assert cache.encode_queries([]).shape == (0, 2)
    assert cache.encode_documents(["x"]).shape == (1, 2) and (cache.name, cache.dim) == ("counting", 2)


@pytest.fixture
def model_cache(tmp_path_factory, monkeypatch) -> Path:
    """ONNX exports go to a folder of this test module, never to the user's cache."""
    folder = tmp_path_factory.getbasetemp() / "model-cache"
    monkeypatch.setenv("LIT3R_MODEL_CACHE", str(folder))
    return folder


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_onnx_export_matches_sentence_transformers(models, model_cache, pooling):
    from lit3r.index.encoders.onnx_int8 import OnnxInt8Encoder

    common = {"model": str(models[pooling]), "max_length": 64, "batch_size": 2}
    reference = load_encoder(EmbedderSettings(backend=TORCH, **common))
    fp32 = OnnxInt8Encoder(EmbedderSettings(backend="onnx-int8", **common), quantized=False)
    assert fp32.pooling == pooling and fp32.dim == 32
    np.testing.assert_allclose(fp32.encode_documents(TEXTS), reference.encode_documents(TEXTS), atol=1e-5)
    one_by_one = OnnxInt8Encoder(EmbedderSettings(backend="onnx-int8", **common), quantized=False, batch_size=1)
    np.testing.assert_allclose(one_by_one.encode_documents(TEXTS), fp32.encode_documents(TEXTS), atol=1e-5)
    int8 = load_encoder(EmbedderSettings(backend="onnx-int8", **common))
    assert int8.batch_size == 1  # a text's int8 vector must not depend on the texts batched with it
    _check(int8.encode_documents(TEXTS), len(TEXTS))
    cosines = (int8.encode_documents(TEXTS) * reference.encode_documents(TEXTS)).sum(axis=1)
    assert np.all(cosines > 0.95) and not np.allclose(cosines, 1.0, atol=1e-6)  # quantised, and close
    assert int8.name.endswith(":onnx-int8") and fp32.name.endswith(":onnx-fp32")


def test_onnx_export_is_made_once_and_keyed_by_the_weights(models, model_cache, tmp_path):
    import shutil

    from lit3r.index.encoders.onnx_int8 import export_onnx

    first = export_onnx(models["base"])
    assert first.parent.parent == model_cache and first.name == "model-int8.onnx"
    stamp = first.stat().st_mtime_ns
    assert export_onnx(models["base"]) == first and first.stat().st_mtime_ns == stamp  # reused
    other = _tiny_bert(tmp_path / "base", seed=1)  # same name, other weights
    assert export_onnx(other) != first
    assert not list(model_cache.glob("tmp-*"))  # nothing half-written is left
    shutil.rmtree(other)


def test_onnx_refuses_last_token_pooling_and_folders_without_weights(models, model_cache, tmp_path):
    from lit3r.index.encoders.onnx_int8 import export_onnx

    with pytest.raises(ValueError, match="supports mean and cls pooling"):
        load_encoder(EmbedderSettings(model=str(models["mean"]), backend="onnx-int8", pooling="last_token"))
    with pytest.raises(ValueError, match="no model.safetensors or pytorch_model.bin"):
        export_onnx(tmp_path)


def test_backend_is_in_the_index_key_and_threads_are_not():
    from lit3r.settings import Settings, index_key

    base = Settings()
    assert base.embedder.backend == "onnx-int8"
    torch_backend = Settings(embedder={"backend": TORCH})
    assert index_key(torch_backend) != index_key(base)
    assert index_key(Settings(embedder={"threads": 1})) == index_key(base)
