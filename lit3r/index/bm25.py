"""Sparse BM25 index over bm25s, keyed by string ids.

Tokenisation (lower-casing, bm25s' word pattern, bm25s' built-in stop words,
PyStemmer stemming) is one function, :func:`tokenize`, used for documents and
queries alike. The tokenised corpus is kept on disk next to the bm25s arrays so
:meth:`BM25Index.extend` can re-index old + new documents (BM25 statistics are
global) without the caller passing the old texts again.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

from lit3r.settings import BM25Settings

META_FILE = "lit3r_bm25.json"
TOKENS_FILE = "tokens.npy"
OFFSETS_FILE = "offsets.npy"
FORMAT_VERSION = 1

Hit = tuple[str, float]
POSITIVE_IDF = frozenset({"lucene", "bm25l", "bm25+"})
"""The bm25s methods whose idf is positive for every term, so that their score matrix holds every document a token is
in (Robertson's idf is 0 for a term in half the documents, ATIRE's for one in all: such pairs are left out)."""
_NO_TOKEN = " "  # never produced by the tokeniser (tokens are runs of word characters)


def idf(df: int, n: int) -> float:
    """BM25's idf (Lucene's, always positive) of a term that ``df`` of ``n`` documents hold; highest for ``df`` 0.
    The one formula for every weighting of terms by their rarity (readers, claim check, offline reranker)."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


@lru_cache(maxsize=8)
def _stemmer(language: str) -> Stemmer.Stemmer:
    """One PyStemmer instance per language."""
    return Stemmer.Stemmer(language)


def tokenize(texts: list[str], settings: BM25Settings) -> list[list[str]]:
    """Lower-case, split into words, drop stop words and stem: the one tokeniser for documents and queries."""
    stemmer = _stemmer(settings.stemmer) if settings.stemmer else None
    return bm25s.tokenize(
        list(texts), stopwords=settings.stopwords, stemmer=stemmer, return_ids=False, show_progress=False
    )


def stem_word(word: str, settings: BM25Settings) -> str:
    """One lower-cased word as :func:`tokenize` stems it (stop words too: the caller decides what to keep)."""
    word = word.lower()
    return _stemmer(settings.stemmer).stemWord(word) if settings.stemmer else word


class BM25Index:
    """A BM25 index over documents with string ids; use :meth:`build` or :meth:`load` to make one."""

    def __init__(
        self,
        retriever: bm25s.BM25,
        ids: list[str],
        settings: BM25Settings,
        tokens: np.ndarray,
        offsets: np.ndarray,
    ) -> None:
        self._retriever = retriever
        self.ids = ids
        self.settings = settings
        self._tokens = tokens  # flat token ids (in the retriever's vocabulary) of every document
        self._offsets = offsets  # document i's tokens are _tokens[_offsets[i]:_offsets[i + 1]]
        self._row = {doc_id: row for row, doc_id in enumerate(ids)}

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def build(cls, ids: list[str], texts: list[str], settings: BM25Settings) -> BM25Index:
        """Tokenise ``texts`` and index them under ``ids`` (unique, aligned with ``texts``)."""
        if len(ids) != len(texts):
            raise ValueError(f"{len(ids)} ids for {len(texts)} texts")
        return cls._from_tokens(list(ids), tokenize(texts, settings), settings)

    @classmethod
    def _from_tokens(cls, ids: list[str], corpus_tokens: list[list[str]], settings: BM25Settings) -> BM25Index:
        """Index already tokenised documents."""
        if not ids:
            raise ValueError("cannot build a BM25 index over no documents")
        _check_unique(ids)
        retriever = bm25s.BM25(k1=settings.k1, b=settings.b, method=settings.method)
        # bm25s cannot index a corpus without a single token; a placeholder no query can contain stands in.
        retriever.index(corpus_tokens if any(corpus_tokens) else [[_NO_TOKEN]] * len(ids), show_progress=False)
        vocab = retriever.vocab_dict
        lengths = np.fromiter((len(doc) for doc in corpus_tokens), dtype=np.int64, count=len(corpus_tokens))
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        flat = np.fromiter((vocab[t] for doc in corpus_tokens for t in doc), dtype=np.int32, count=int(offsets[-1]))
        return cls(retriever, ids, settings, flat, offsets)

    def corpus_tokens(self) -> list[list[str]]:
        """The tokenised documents, in index order (what :meth:`extend` re-indexes)."""
        words = np.empty(len(self._retriever.vocab_dict), dtype=object)
        for token, token_id in self._retriever.vocab_dict.items():
            words[token_id] = token
        tokens = np.asarray(self._tokens)
        return [words[tokens[self._offsets[i] : self._offsets[i + 1]]].tolist() for i in range(len(self.ids))]

    def holding(self, token: str) -> np.ndarray:
        """The rows (index order) of the documents holding ``token``, a token as :func:`tokenize` makes it."""
        token_id = self._retriever.vocab_dict.get(token)
        if token_id is None:
            return np.zeros(0, dtype=np.int64)
        if self.settings.method in POSITIVE_IDF:  # every (document, token) pair is in the score matrix: O(df)
            scores = self._retriever.scores
            start, end = scores["indptr"][token_id], scores["indptr"][token_id + 1]
            return np.sort(np.asarray(scores["indices"][start:end], dtype=np.int64))
        positions = np.flatnonzero(np.asarray(self._tokens) == token_id)
        return np.unique(np.searchsorted(self._offsets, positions, side="right") - 1)

    def held(self, tokens: list[str], ids: set[str]) -> list[tuple[int, bool]]:
        """For each token: how many documents hold it, and whether one of the documents ``ids`` does."""
        wanted = self.rows(ids)
        return [(len(rows), bool(np.isin(rows, wanted).any())) for rows in map(self.holding, tokens)]

    def extend(self, ids: list[str], texts: list[str]) -> BM25Index:
        """A new index over this index's documents plus ``texts``; this one is left unchanged."""
        if len(ids) != len(texts):
            raise ValueError(f"{len(ids)} ids for {len(texts)} texts")
        old = self.corpus_tokens()
        return self._from_tokens(self.ids + list(ids), old + tokenize(texts, self.settings), self.settings)

    def _scores(self, query_tokens: list[str]) -> np.ndarray | None:
        """BM25 score of every document for one tokenised query, minus the score of a non-matching document.

        ``None`` when no query token is in the vocabulary. Subtracting the baseline (non-zero only for
        BM25L and BM25+, which give every document a floor score) makes "score > 0" mean "matches".
        """
        token_ids = self._retriever.get_tokens_ids([t for t in query_tokens if t])
        if not token_ids:
            return None
        scores = self._retriever.get_scores_from_ids(token_ids)
        nonoccurrence = self._retriever.nonoccurrence_array
        if nonoccurrence is not None:
            scores = scores - nonoccurrence[token_ids].sum()
        return scores

    def raw_scores(self, query: str) -> np.ndarray:
        """The full bm25s score of every document for ``query`` (index order, no baseline removed)."""
        token_ids = self._retriever.get_tokens_ids(tokenize([query], self.settings)[0])
        if not token_ids:
            return np.zeros(len(self.ids), dtype=np.float32)
        return self._retriever.get_scores_from_ids(token_ids)

    def rows(self, allowed: set[str]) -> np.ndarray:
        """Row numbers (index order) of the ``allowed`` ids present in the index."""
        return np.fromiter((self._row[i] for i in allowed if i in self._row), dtype=np.int64)

    def _rank(self, query_tokens: list[str], k: int, rows: np.ndarray | None) -> list[Hit]:
        """Top ``k`` matching documents, restricted to ``rows`` when given; equal scores in row order.

        Documents tied with the ``k``-th score are kept until the sort, so the cut too is decided by row
        order (not by where a partition happened to leave them): an index split into shards by row then
        gives the same top ``k`` as the whole.
        """
        scores = self._scores(query_tokens)
        if scores is None or k <= 0:
            return []
        if rows is None:
            rows = np.flatnonzero(scores > 0)
        rows = rows[scores[rows] > 0]
        if len(rows) > k:
            kth = np.partition(scores[rows], len(rows) - k)[len(rows) - k]
            rows = rows[scores[rows] >= kth]
        order = sorted(rows.tolist(), key=lambda r: (-float(scores[r]), r))[:k]
        return [(self.ids[r], float(scores[r])) for r in order]

    def search(self, query: str, k: int, allowed: set[str] | None = None) -> list[Hit]:
        """Ranked ``(id, score)`` of the best ``k`` documents matching ``query``, best first.

        Only documents sharing a term with the query are returned (for BM25L/BM25+, the score reported
        is above the floor every document gets). ``allowed`` restricts the search to those ids.
        """
        rows = None if allowed is None else self.rows(allowed)
        return self._rank(tokenize([query], self.settings)[0], k, rows)

    def search_many(self, queries: list[str], k: int, allowed: set[str] | None = None) -> list[list[Hit]]:
        """:meth:`search` for several queries (tokenised together)."""
        rows = None if allowed is None else self.rows(allowed)
        return [self._rank(tokens, k, rows) for tokens in tokenize(queries, self.settings)]

    def save(self, folder: Path) -> None:
        """Write the index to ``folder`` (bm25s arrays, tokenised corpus, ids and settings).

        Files are written to a temporary folder and moved into place one by one, so an index still
        memory-mapped from ``folder`` keeps reading its old files.
        """
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".bm25-", dir=folder))
        try:
            self._retriever.save(tmp, show_progress=False)
            np.save(tmp / TOKENS_FILE, np.asarray(self._tokens))
            np.save(tmp / OFFSETS_FILE, np.asarray(self._offsets))
            meta = {"format": FORMAT_VERSION, "settings": self.settings.model_dump(), "ids": self.ids}
            (tmp / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
            for path in tmp.iterdir():
                os.replace(path, folder / path.name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @classmethod
    def load(cls, folder: Path, mmap: bool = False) -> BM25Index:
        """Read an index written by :meth:`save`; ``mmap`` memory-maps bm25s' score arrays instead of reading them.

        The tokenised corpus is always memory-mapped: only :meth:`extend` reads it, and reading it into
        memory cost about a quarter of a chunk index's resident size (docs/BENCHMARKS.md, "Scale").
        """
        folder = Path(folder)
        meta_path = folder / META_FILE
        if not meta_path.exists():
            raise FileNotFoundError(f"{folder}: no BM25 index ({META_FILE} missing)")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT_VERSION:
            raise ValueError(f"{folder}: BM25 index format {meta.get('format')}, expected {FORMAT_VERSION}")
        retriever = bm25s.BM25.load(folder, mmap=mmap, show_progress=False)
        tokens = np.load(folder / TOKENS_FILE, mmap_mode="r")
        offsets = np.load(folder / OFFSETS_FILE, mmap_mode="r")
        return cls(retriever, meta["ids"], BM25Settings(**meta["settings"]), tokens, offsets)


def _check_unique(ids: list[str]) -> None:
    """Raise when an id occurs twice."""
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        dupes = sorted({i for i in ids if i in seen or seen.add(i)})
        raise ValueError(f"duplicate ids: {dupes[:5]}")
