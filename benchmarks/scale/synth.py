"""Synthetic corpora of any size, shaped like QASPER as lit3r chunks it (see :mod:`scale.real`).

How a corpus of ``n`` chunks is made (seeded, so a size is the same corpus every run):

* Papers. Each synthetic paper copies the shape of a real QASPER paper drawn at random (its
  number of text, table and figure chunks), and that paper is also its *topic*. Papers are
  added until the corpus holds ``n`` chunks (title-abstract chunks included; the last paper is
  cut short), so chunks per paper is QASPER's (27.4).
* Words. A chunk's length in words is drawn from the real chunks of its type. Each word is,
  with probability ``topic_share`` (0.5), a word drawn from the topic paper's own text, else a
  word drawn from the whole corpus's text (the unigram distribution): terms cluster in papers
  as they do in real text, and their frequencies follow QASPER's. Beyond QASPER's 1.6M words
  the vocabulary would stop growing, unlike real text, so new words (letters-only, unique) are
  mixed in at the rate Heaps' law, fitted on QASPER, predicts. A text longer than the
  structural chunker's 2,000 characters is cut at a word.
* References. Each paper cites Poisson(``refs_mean``) other corpus papers by title, drawn with
  probability proportional to 1/(popularity rank + 10) (a few papers are cited widely, most
  rarely), plus as many titles of works outside the corpus, which stay unresolved.
* Vectors. Paper centre = mean + z @ between; chunk vector = centre + z @ within, L2-normalised
  (z standard normal); the paper vector is one more draw around the centre, like its
  title-abstract chunk. ``between`` and ``within`` come from the real encoder's vectors of
  whole QASPER papers (:func:`scale.real.fit_vectors`).

The papers are written as JSON-lines paper records (one file per 1,000 papers) that ``lit3r
ingest`` reads; every body chunk sits in a section of its own, so the structural chunker cuts
exactly the synthetic chunks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scale.real import BODY_TYPES, CorpusProfile, VectorModel

MAX_CHARS = 2000
PAPERS_PER_FILE = 1000


@dataclass
class Plan:
    """The papers of a synthetic corpus: per paper its topic and the type of each chunk."""

    topics: np.ndarray
    chunk_types: list[list[str]]

    @property
    def chunks(self) -> int:
        return sum(len(t) for t in self.chunk_types)


def plan(profile: CorpusProfile, n: int, rng: np.random.Generator) -> Plan:
    """Draw paper shapes until ``n`` chunks (each paper: one title-abstract chunk, then its body chunks)."""
    topics, chunk_types, total = [], [], 0
    while total < n:
        topic = int(rng.integers(profile.papers))
        types = ["title_abstract"] + [
            t for t, count in zip(BODY_TYPES, profile.shapes[topic], strict=True) for _ in range(count)
        ]
        types = types[: n - total]
        topics.append(topic)
        chunk_types.append(types)
        total += len(types)
    return Plan(np.array(topics), chunk_types)


class WordSource:
    """Draws chunk texts: topic words, corpus words, and new words at Heaps' rate."""

    def __init__(self, profile: CorpusProfile, rng: np.random.Generator, topic_share: float) -> None:
        self.profile, self.rng, self.topic_share = profile, rng, topic_share
        self.words = np.array(profile.vocab, dtype=object)
        self.tokens = 0
        self.new_words = 0
        self.base_tokens = len(profile.all_words)

    def _heaps(self, tokens: int) -> float:
        return self.profile.heaps_k * tokens**self.profile.heaps_beta

    def text(self, topic: int, chunk_type: str) -> str:
        """A chunk of ``chunk_type`` for a paper on ``topic``, its length drawn from the real chunks of that type."""
        lengths = self.profile.lengths[chunk_type]
        return _cut(self.phrase(topic, max(1, int(lengths[self.rng.integers(len(lengths))]))))

    def phrase(self, topic: int, length: int) -> str:
        """``length`` words for a paper on ``topic``."""
        own = self.rng.random(length) < self.topic_share
        ids = np.empty(length, dtype=np.int64)
        topic_words = self.profile.paper_words[topic]
        ids[own] = topic_words[self.rng.integers(len(topic_words), size=int(own.sum()))]
        ids[~own] = self.profile.all_words[self.rng.integers(len(self.profile.all_words), size=int((~own).sum()))]
        words = self.words[ids].tolist()
        before, self.tokens = self.tokens, self.tokens + length
        if self.tokens > self.base_tokens:
            fresh = int(round(self._heaps(self.tokens))) - int(round(self._heaps(max(before, self.base_tokens))))
            for position in self.rng.integers(length, size=max(0, min(fresh, length))):
                words[position] = letters(self.new_words, "x")
                self.new_words += 1
        return " ".join(words)


def letters(number: int, prefix: str) -> str:
    """A unique letters-only word for ``number`` (the stemmer and tokeniser leave it one token)."""
    out = []
    number += 1
    while number:
        number, digit = divmod(number - 1, 26)
        out.append(chr(ord("a") + digit))
    return prefix + "".join(reversed(out)) + "q"


def _cut(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    return text[: text.rfind(" ", 0, MAX_CHARS)]


def paper_id(number: int) -> str:
    return f"syn-{number:07d}"


@dataclass
class SyntheticPaper:
    """One synthetic paper: its chunks (type, text; the title-abstract chunk's text is the abstract) and citations."""

    number: int
    title: str
    chunks: list[tuple[str, str]]
    cited: list[int]
    """Numbers of the corpus papers it cites."""
    outside: list[str]
    """Titles of cited works outside the corpus."""

    @property
    def id(self) -> str:
        return paper_id(self.number)


class SyntheticCorpus:
    """The corpus of ``n`` chunks; iterate it once for its papers, in order."""

    def __init__(self, profile: CorpusProfile, n: int, *, seed: int, topic_share: float, refs_mean: float) -> None:
        self.rng = np.random.default_rng(seed)
        self.layout = plan(profile, n, self.rng)
        self.source = WordSource(profile, self.rng, topic_share)
        self.refs_mean = refs_mean
        self.titles = [f"{self.source.phrase(int(t), 9)} {letters(i, 'p')}" for i, t in enumerate(self.layout.topics)]
        popularity = self.rng.permutation(len(self.titles))
        self.cdf = np.cumsum(1.0 / (popularity + 10.0))
        self.cdf /= self.cdf[-1]  # what rng.choice(p=...) computes on every call, computed once
        self.references = 0

    def __iter__(self) -> Iterator[SyntheticPaper]:
        rng, count = self.rng, len(self.titles)
        for number, (topic, types) in enumerate(zip(self.layout.topics.tolist(), self.layout.chunk_types, strict=True)):
            cited = np.unique(self.cdf.searchsorted(rng.random(min(count, rng.poisson(self.refs_mean))), side="right"))
            cited = cited[cited != number]
            outside = [f"outside work {letters(int(j), 'w')} {number}" for j in range(rng.poisson(self.refs_mean))]
            chunks = [(chunk_type, self.source.text(topic, chunk_type)) for chunk_type in types]
            self.references += len(cited)
            yield SyntheticPaper(number, self.titles[number], chunks, cited.tolist(), outside)

    def summary(self) -> dict:
        return {
            "papers": len(self.titles),
            "chunks": self.layout.chunks,
            "corpus_references": self.references,
            "new_words": self.source.new_words,
            "tokens": self.source.tokens,
        }


def write_records(
    profile: CorpusProfile, n: int, folder: Path, *, seed: int, topic_share: float, refs_mean: float
) -> dict:
    """Write a corpus of ``n`` chunks as paper records under ``folder``; returns what was made."""
    folder.mkdir(parents=True, exist_ok=True)
    corpus = SyntheticCorpus(profile, n, seed=seed, topic_share=topic_share, refs_mean=refs_mean)
    handle = None
    for paper in corpus:
        if paper.number % PAPERS_PER_FILE == 0:
            if handle:
                handle.close()
            handle = (folder / f"papers-{paper.number // PAPERS_PER_FILE:05d}.jsonl").open("w", encoding="utf-8")
        record = _record(paper)
        cited = [{"title": corpus.titles[j]} for j in paper.cited]
        record["references"] = cited + [{"title": t} for t in paper.outside]
        handle.write(json.dumps(record) + "\n")
    if handle:
        handle.close()
    return corpus.summary()


def _record(paper: SyntheticPaper) -> dict:
    """A paper record (lit3r/corpus/parsers/records.py) whose structural chunks are exactly ``paper.chunks``."""
    record: dict = {"id": paper.id, "title": paper.title, "abstract": paper.chunks[0][1], "sections": []}
    tables, figures = [], []
    for ordinal, (chunk_type, text) in enumerate(paper.chunks[1:], start=1):
        if chunk_type == "table":
            tables.append({"id": f"Table {len(tables) + 1}", "caption": text})
        elif chunk_type == "figure":
            figures.append({"id": f"Figure {len(figures) + 1}", "caption": text})
        else:
            record["sections"].append({"heading": f"Section {ordinal}", "paragraphs": [text]})
    record["tables"], record["figures"] = tables, figures
    return record


def paper_vectors(model: VectorModel, papers: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Paper centres and paper vectors (one draw around each centre, normalised)."""
    centres = model.mean + rng.standard_normal((papers, len(model.between)), dtype=np.float32) @ model.between
    vectors = centres + rng.standard_normal((papers, model.dim), dtype=np.float32) @ model.within
    return centres, _unit(vectors)


def chunk_vectors(model: VectorModel, centres: np.ndarray, paper_of_chunk: np.ndarray, seed: int) -> np.ndarray:
    """One normalised vector per chunk, drawn around its paper's centre, in blocks (float32 throughout)."""
    rng = np.random.default_rng(seed)
    out = np.empty((len(paper_of_chunk), model.dim), dtype=np.float32)
    for start in range(0, len(out), 65536):
        rows = paper_of_chunk[start : start + 65536]
        noise = rng.standard_normal((len(rows), model.dim), dtype=np.float32) @ model.within
        out[start : start + len(rows)] = _unit(centres[rows] + noise)
    return out


def _unit(matrix: np.ndarray) -> np.ndarray:
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)
