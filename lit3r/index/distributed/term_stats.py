"""Corpus-wide BM25 statistics, and a shard's BM25 index scored with them.

BM25 scores a term in a document with the corpus' document count, average
document length and the term's document frequency. A shard that computed
those over its own documents would score differently from the one-machine
index, so each shard reports its partial statistics (:meth:`TermStats.of`),
the sums are the corpus' (``TermStats.__add__``), and every shard's score
matrix is built with the sums (:func:`build_shard_bm25`). The result gives
every document exactly the score the one-machine index gives it.

bm25s precomputes ``idf x tf-component`` per (document, term) when it indexes;
its documented extension point for building that matrix differently is
:meth:`bm25s.BM25.build_index_from_ids`, which :class:`_CorpusWideBM25`
overrides to take the three statistics from the corpus instead of the shard.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import bm25s
import numpy as np
from bm25s.scoring import (
    _build_idf_array,
    _build_nonoccurrence_array,
    _build_scores_and_indices_for_matrix,
    _calculate_doc_freqs,
    _select_idf_scorer,
    _select_tfc_scorer,
)

from lit3r.index.bm25 import BM25Index
from lit3r.settings import BM25Settings

_NO_TOKEN = " "  # the placeholder BM25Index indexes for a corpus without a single token


@dataclass
class TermStats:
    """What BM25 needs from a whole corpus: document count, total length and document frequencies."""

    documents: int = 0
    tokens: int = 0
    df: Counter[str] = field(default_factory=Counter)

    @classmethod
    def of(cls, corpus_tokens: list[list[str]]) -> TermStats:
        """The statistics of tokenised documents (a shard's part of the corpus' statistics)."""
        df: Counter[str] = Counter()
        for doc in corpus_tokens:
            df.update(set(doc))
        return cls(len(corpus_tokens), sum(len(doc) for doc in corpus_tokens), df)

    def __add__(self, other: TermStats) -> TermStats:
        return TermStats(self.documents + other.documents, self.tokens + other.tokens, self.df + other.df)

    @property
    def average_length(self) -> np.float64:
        """Mean document length, as bm25s computes it (a float64 numpy scalar: the dtype decides the rounding)."""
        return np.float64(self.tokens / self.documents) if self.documents else np.float64(0.0)

    def to_json(self) -> dict[str, Any]:
        return {"documents": self.documents, "tokens": self.tokens, "df": dict(self.df)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TermStats:
        return cls(int(data["documents"]), int(data["tokens"]), Counter({k: int(v) for k, v in data["df"].items()}))


def corpus_stats(parts: list[TermStats]) -> TermStats:
    """The sum of the shards' statistics."""
    total = TermStats()
    for part in parts:
        total = total + part
    return total


class _CorpusWideBM25(bm25s.BM25):
    """A bm25s index over some documents of a corpus whose score matrix uses the whole corpus' statistics."""

    def __init__(self, stats: TermStats, vocab: dict[str, int], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._stats = stats
        self._vocab = vocab

    def build_index_from_ids(self, unique_token_ids, corpus_token_ids, show_progress=True, leave_progress=False):
        """bm25s' matrix build with ``n_docs``, ``avg_doc_len`` and document frequencies of the whole corpus."""
        corpus_docs, avg_doc_len = self._stats.documents, self._stats.average_length
        local_df = _calculate_doc_freqs(corpus_token_ids, unique_token_ids, show_progress=False)
        corpus_df = {tid: self._stats.df.get(token, 0) for token, tid in self._vocab.items()}
        missing = [token for token, tid in self._vocab.items() if local_df.get(tid) and not corpus_df[tid]]
        if missing:
            raise ValueError(f"corpus statistics lack terms of this shard: {missing[:5]}")
        idf_fn = _select_idf_scorer(self.idf_method)
        if self.method in self.methods_requiring_nonoccurrence:
            self.nonoccurrence_array = _build_nonoccurrence_array(
                doc_frequencies=corpus_df,
                n_docs=corpus_docs,
                compute_idf_fn=idf_fn,
                calculate_tfc_fn=_select_tfc_scorer(self.method),
                l_d=avg_doc_len,
                l_avg=avg_doc_len,
                k1=self.k1,
                b=self.b,
                delta=self.delta,
                dtype=self.dtype,
            )
        else:
            self.nonoccurrence_array = None
        idf = _build_idf_array(doc_frequencies=corpus_df, n_docs=corpus_docs, compute_idf_fn=idf_fn, dtype=self.dtype)
        scores, doc_idx, vocab_idx = _build_scores_and_indices_for_matrix(
            corpus_token_ids=corpus_token_ids,
            idf_array=idf,
            avg_doc_len=avg_doc_len,
            doc_frequencies=local_df,  # sizes the (document, term) arrays: this shard's pairs
            k1=self.k1,
            b=self.b,
            delta=self.delta,
            nonoccurrence_array=self.nonoccurrence_array,
            method=self.method,
            dtype=self.dtype,
            int_dtype=self.int_dtype,
            show_progress=False,
        )
        data, indices, indptr = self._np_csc(
            data=scores, rows=doc_idx, cols=vocab_idx, shape=(len(corpus_token_ids), len(unique_token_ids))
        )
        n_docs = len(corpus_token_ids)
        return {"data": data.astype(self.dtype), "indices": indices, "indptr": indptr, "num_docs": n_docs}


def build_shard_bm25(
    ids: list[str], corpus_tokens: list[list[str]], settings: BM25Settings, stats: TermStats
) -> BM25Index:
    """A :class:`BM25Index` over ``ids`` (tokenised as ``corpus_tokens``) scored with the corpus' ``stats``.

    Searching it gives each of its documents the score a :class:`BM25Index` built over the whole
    corpus gives that document.
    """
    if len(ids) != len(corpus_tokens):
        raise ValueError(f"{len(ids)} ids for {len(corpus_tokens)} tokenised documents")
    if not ids:
        raise ValueError("cannot build a BM25 shard over no documents")
    indexed = corpus_tokens if any(corpus_tokens) else [[_NO_TOKEN]] * len(ids)
    vocab: dict[str, int] = {}
    for doc in indexed:
        for token in doc:
            vocab.setdefault(token, len(vocab))
    token_ids = [[vocab[t] for t in doc] for doc in indexed]
    shard_stats = stats if any(corpus_tokens) else TermStats(stats.documents, stats.tokens, Counter({_NO_TOKEN: 1}))
    retriever = _CorpusWideBM25(shard_stats, vocab, k1=settings.k1, b=settings.b, method=settings.method)
    retriever.index((token_ids, dict(vocab)), show_progress=False)
    lengths = np.fromiter((len(doc) for doc in corpus_tokens), dtype=np.int64, count=len(corpus_tokens))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    flat = np.fromiter((vocab[t] for doc in corpus_tokens for t in doc), dtype=np.int32, count=int(offsets[-1]))
    return BM25Index(retriever, list(ids), settings, flat, offsets)
