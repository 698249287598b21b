"""The lexical reranker remembers passage tokens: the same scores as tokenising afresh, and a bounded memory."""

from __future__ import annotations

from lit3r.index.bm25 import tokenize
from lit3r.retrieval.rerankers import offline
from lit3r.retrieval.rerankers.offline import LexicalReranker, lexical_scores

PASSAGES = ["Okapi BM25 saturates term frequency.", "Dense encoders embed passages.", "Term saturation in BM25."]


def test_cached_tokens_give_the_scores_of_fresh_tokens(monkeypatch) -> None:
    reranker = LexicalReranker()
    first = reranker.score("bm25 saturation", PASSAGES)
    fresh = tokenize(["bm25 saturation", *PASSAGES], reranker.settings)
    assert first == lexical_scores(fresh[0], fresh[1:])
    monkeypatch.setattr(offline, "PASSAGE_CACHE", 2)
    again = LexicalReranker()
    assert again.score("bm25 saturation", PASSAGES) == first
    assert len(again._passage_tokens) == 2  # bounded: the least recently used passage was dropped
    assert list(again._passage_tokens) == PASSAGES[1:]
    assert again.score("dense", PASSAGES[2:] + PASSAGES[:1]) == reranker.score("dense", PASSAGES[2:] + PASSAGES[:1])
