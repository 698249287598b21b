"""BM25 index: scores against rank_bm25, tokenisation, masking, persistence and extension."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rank_bm25 import BM25Okapi, BM25Plus

from lit3r.index.bm25 import BM25Index, tokenize
from lit3r.settings import BM25Settings

IDS = [f"d{i}" for i in range(8)]
TEXTS = [
    "Dense retrieval models encode queries and passages into vectors.",
    "Sparse retrieval with BM25 remains a strong baseline for retrieving passages.",
    "We retrieve evidence from scientific papers and cite the retrieved paragraphs.",
    "Citation graphs connect papers; a paper cites earlier papers.",
    "Table 2 reports F1 on QASPER for every model and every baseline model.",
    "The figure shows the attention weights of the transformer encoder.",
    "Question answering over long documents needs retrieval of the relevant evidence evidence evidence.",
    "Stemming maps retrieving, retrieved and retrieval to one stem.",
]
QUERIES = [
    "retrieval of evidence",
    "BM25 baseline baseline",
    "citation graph of papers",
    "transformer attention figure",
    "model",
    "unknown zzzz words",
]


class _BM25LByHand:
    """BM25L as Kamphuis et al. (2020) and bm25s define it, in numpy.

    rank_bm25's BM25L multiplies the term-frequency part by tf once more, so it is not a reference here.
    """

    def __init__(self, corpus: list[list[str]], k1: float, b: float, delta: float) -> None:
        self.corpus, self.k1, self.b, self.delta = corpus, k1, b, delta
        self.lengths = np.array([len(doc) for doc in corpus], dtype=float)

    def get_scores(self, query: list[str]) -> np.ndarray:
        n, scores = len(self.corpus), np.zeros(len(self.corpus))
        for term in query:
            tf = np.array([doc.count(term) for doc in self.corpus], dtype=float)
            df = np.count_nonzero(tf)
            if df == 0:
                continue
            c = tf / (1 - self.b + self.b * self.lengths / self.lengths.mean())
            idf = math.log((n + 1) / (df + 0.5))
            scores += idf * (self.k1 + 1) * (c + self.delta) / (self.k1 + c + self.delta)
        return scores


def _reference(method: str, corpus: list[list[str]], k1: float, b: float):
    """rank_bm25 scorer with the same formula as the bm25s ``method``, and the factor to rescale its scores.

    rank_bm25's BM25Okapi uses the ATIRE term-frequency part, (k1 + 1) tf / (tf + k1 (1 - b + b dl / avgdl));
    Robertson and Lucene in bm25s drop the (k1 + 1) factor. Only the IDF differs between the three.
    """
    idf_functions = {
        "lucene": lambda df, n: math.log(1 + (n - df + 0.5) / (df + 0.5)),
        "robertson": lambda df, n: max(0.0, math.log((n - df + 0.5) / (df + 0.5))),
        "atire": lambda df, n: math.log(n / df),
    }
    if method == "bm25l":
        return _BM25LByHand(corpus, k1=k1, b=b, delta=0.5), 1.0
    if method == "bm25+":
        return BM25Plus(corpus, k1=k1, b=b, delta=0.5), 1.0
    idf = idf_functions[method]

    class Reference(BM25Okapi):
        def _calc_idf(self, nd):
            self.idf = {word: idf(df, self.corpus_size) for word, df in nd.items()}

    return Reference(corpus, k1=k1, b=b), 1.0 if method == "atire" else 1.0 / (k1 + 1)


@pytest.mark.parametrize("method", ["lucene", "robertson", "atire", "bm25l", "bm25+"])
def test_scores_match_rank_bm25_for_every_query_and_document(method):
    settings = BM25Settings(method=method, k1=1.2, b=0.7)
    index = BM25Index.build(IDS, TEXTS, settings)
    reference, scale = _reference(method, tokenize(TEXTS, settings), settings.k1, settings.b)
    for query, query_tokens in zip(QUERIES, tokenize(QUERIES, settings), strict=True):
        expected = np.asarray(reference.get_scores(query_tokens)) * scale
        np.testing.assert_allclose(index.raw_scores(query), expected, rtol=1e-5, atol=1e-5, err_msg=query)


def test_search_ranks_positive_hits_with_their_scores():
    index = BM25Index.build(IDS, TEXTS, BM25Settings())
    hits = index.search("retrieval of evidence", k=10)
    raw = dict(zip(IDS, index.raw_scores("retrieval of evidence").tolist(), strict=True))
    assert [doc for doc, _ in hits] == sorted((d for d in IDS if raw[d] > 0), key=lambda d: -raw[d])
    assert all(score == pytest.approx(raw[doc]) for doc, score in hits)
    assert hits[0][0] == "d6"  # 'evidence' three times and 'retrieval'
    assert index.search("retrieval of evidence", k=2) == hits[:2]
    assert index.search("unknown zzzz", k=5) == []


def test_bm25l_search_reports_only_matching_documents():
    index = BM25Index.build(IDS, TEXTS, BM25Settings(method="bm25l"))
    assert np.all(index.raw_scores("transformer") > 0)  # BM25L gives every document a floor
    assert [doc for doc, _ in index.search("transformer", k=10)] == ["d5"]


def test_stemming_matches_word_forms_and_can_be_disabled():
    assert tokenize(["retrieval retrieve retrieving retrieved"], BM25Settings()) == [["retriev"] * 4]
    index = BM25Index.build(IDS, TEXTS, BM25Settings())
    found = {doc for doc, _ in index.search("retrieval", k=10)}
    assert {"d0", "d1", "d2", "d6", "d7"} == found  # retrieval, retrieving, retrieve/retrieved
    unstemmed = BM25Index.build(IDS, TEXTS, BM25Settings(stemmer=None))
    assert {doc for doc, _ in unstemmed.search("retrieval", k=10)} == {"d0", "d1", "d6", "d7"}


def test_stop_words_are_dropped_unless_disabled():
    assert tokenize(["the of and with a"], BM25Settings()) == [[]]
    index = BM25Index.build(IDS, TEXTS, BM25Settings())
    assert index.search("the and of", k=5) == []
    kept = BM25Index.build(IDS, TEXTS, BM25Settings(stopwords=None))
    assert {doc for doc, _ in kept.search("the", k=10)} == {"d2", "d5", "d6"}


def test_allowed_restricts_to_subset():
    index = BM25Index.build(IDS, TEXTS, BM25Settings())
    full = dict(index.search("retrieval of evidence", k=10))
    hits = index.search("retrieval of evidence", k=10, allowed={"d0", "d2", "d3", "missing"})
    assert [doc for doc, _ in hits] == sorted({"d0", "d2"}, key=lambda d: -full[d])
    assert all(score == pytest.approx(full[doc]) for doc, score in hits)
    assert index.search("retrieval", k=10, allowed=set()) == []
    top = index.search("retrieval", k=1, allowed={"d0", "d1"})
    both = dict(index.search("retrieval", k=10, allowed={"d0", "d1"}))
    assert len(both) == 2 and top == [max(both.items(), key=lambda item: item[1])]


def test_search_many_equals_single_searches():
    index = BM25Index.build(IDS, TEXTS, BM25Settings())
    assert index.search_many(QUERIES, k=3) == [index.search(q, k=3) for q in QUERIES]
    subset = {"d1", "d4"}
    assert index.search_many(QUERIES, 3, subset) == [index.search(q, 3, subset) for q in QUERIES]


@pytest.mark.parametrize("mmap", [False, True])
def test_save_load_round_trip(tmp_path, mmap):
    settings = BM25Settings(method="bm25+", k1=1.1, stemmer=None)
    index = BM25Index.build(IDS, TEXTS, settings)
    index.save(tmp_path / "bm25")
    loaded = BM25Index.load(tmp_path / "bm25", mmap=mmap)
    assert loaded.ids == IDS and loaded.settings == settings
    for query in QUERIES:
        assert loaded.search(query, k=5) == index.search(query, k=5)
        np.testing.assert_array_equal(loaded.raw_scores(query), index.raw_scores(query))
    assert loaded.corpus_tokens() == tokenize(TEXTS, settings)
    assert isinstance(loaded._tokens, np.memmap)  # only extend reads the tokens: mapped, never loaded


def test_extend_gives_the_scores_of_a_rebuild(tmp_path):
    settings = BM25Settings()
    BM25Index.build(IDS[:5], TEXTS[:5], settings).save(tmp_path / "old")
    old = BM25Index.load(tmp_path / "old", mmap=True)
    extended = old.extend(IDS[5:], TEXTS[5:])
    rebuilt = BM25Index.build(IDS, TEXTS, settings)
    assert extended.ids == IDS and len(old) == 5
    for query in QUERIES:
        np.testing.assert_allclose(extended.raw_scores(query), rebuilt.raw_scores(query), rtol=1e-6, atol=1e-7)
        assert [d for d, _ in extended.search(query, 8)] == [d for d, _ in rebuilt.search(query, 8)]
    extended.save(tmp_path / "old")  # overwrite the folder the old index is memory-mapped from
    assert BM25Index.load(tmp_path / "old").ids == IDS
    assert old.search("BM25", k=3)[0][0] == "d1"


def test_invalid_input_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="duplicate"):
        BM25Index.build(["a", "a"], ["x y", "z w"], BM25Settings())
    with pytest.raises(ValueError, match="2 ids for 1 texts"):
        BM25Index.build(["a", "b"], ["x y"], BM25Settings())
    index = BM25Index.build(["a"], ["retrieval"], BM25Settings())
    with pytest.raises(ValueError, match="duplicate"):
        index.extend(["a"], ["more text"])
    with pytest.raises(FileNotFoundError):
        BM25Index.load(tmp_path)


def test_documents_without_tokens_are_indexed_and_never_match():
    empty = BM25Index.build(["a", "b"], ["the", ""], BM25Settings())
    assert empty.search("the retrieval", k=5) == [] and empty.corpus_tokens() == [[], []]
    extended = empty.extend(["c"], ["retrieval models"])
    rebuilt = BM25Index.build(["a", "b", "c"], ["the", "", "retrieval models"], BM25Settings())
    np.testing.assert_array_equal(extended.raw_scores("retrieval"), rebuilt.raw_scores("retrieval"))
    assert [doc for doc, _ in extended.search("retrieval", k=5)] == ["c"]
