"""What the synthetic corpora copy from the real one: QASPER's words, chunk lengths, paper shapes and vectors.

Everything is read through lit3r itself: the QASPER file is parsed by lit3r's parser and cut by the
default (structural) chunker, so the lengths are those of the chunks lit3r really indexes. Words are
the white-space tokens of the chunk texts as they are (case and punctuation kept), so the synthetic
text goes through the same tokeniser, stop words and stemmer as a real chunk.

The vectors are the real encoder's: a sample of whole QASPER papers' chunks is embedded, and a
two-level Gaussian is fitted to it (paper centres around the mean, chunks around their paper's
centre), which is what :mod:`synth` draws the synthetic vectors from.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lit3r.corpus.chunkers import chunk_paper
from lit3r.corpus.parsers import parser_for
from lit3r.settings import Settings

BODY_TYPES = ("text", "table", "figure", "equation")


@dataclass
class CorpusProfile:
    """The real corpus, reduced to what the generator samples from."""

    vocab: list[str]
    """Every distinct white-space word of the real chunks."""
    paper_words: list[np.ndarray]
    """Per real paper, the word ids of all its chunks (its topic's unigram distribution)."""
    all_words: np.ndarray
    """Word ids of every chunk, concatenated: drawing from it uniformly is drawing from the unigram distribution."""
    lengths: dict[str, np.ndarray]
    """Per chunk type, the word counts of the real chunks of that type."""
    shapes: np.ndarray
    """Per real paper, its number of body chunks of each of BODY_TYPES (shape (papers, 4))."""
    heaps_k: float
    heaps_beta: float
    """Heaps' law of the real text, distinct words = K x tokens^beta (fitted on the real chunk stream)."""
    chunks: int
    papers: int
    chunk_chars: dict[str, float]
    """Mean characters per chunk by type (to compare with the synthetic chunks)."""

    @property
    def chunks_per_paper(self) -> float:
        return self.chunks / self.papers

    def summary(self) -> dict:
        return {
            "papers": self.papers,
            "chunks": self.chunks,
            "chunks_per_paper": round(self.chunks_per_paper, 2),
            "vocabulary": len(self.vocab),
            "tokens": int(len(self.all_words)),
            "heaps_k": round(self.heaps_k, 3),
            "heaps_beta": round(self.heaps_beta, 4),
            "median_words": {t: int(np.median(v)) for t, v in self.lengths.items() if len(v)},
            "mean_chars": {t: round(v, 1) for t, v in self.chunk_chars.items()},
        }


def real_chunks(qasper: Path, settings: Settings):
    """The QASPER file's papers and chunks, parsed and chunked by lit3r."""
    parser = parser_for(qasper)
    if parser is None:
        raise SystemExit(f"{qasper}: not a file lit3r can read")
    parsed = parser(qasper)
    return parsed, [chunk_paper(p, settings.chunker) for p in parsed]


def build_profile(qasper: Path, settings: Settings) -> CorpusProfile:
    """Profile the real corpus (no model involved)."""
    parsed, chunked = real_chunks(qasper, settings)
    index: dict[str, int] = {}
    paper_words, lengths, shapes, chars = [], {t: [] for t in ("title_abstract", *BODY_TYPES)}, [], {}
    for chunks in chunked:
        ids: list[int] = []
        counts = Counter(c.type for c in chunks)
        shapes.append([counts.get(t, 0) for t in BODY_TYPES])
        for chunk in chunks:
            words = chunk.text.split()
            lengths[chunk.type].append(len(words))
            ids.extend(index.setdefault(w, len(index)) for w in words)
            chars.setdefault(chunk.type, []).append(len(chunk.text))
        paper_words.append(np.array(ids, dtype=np.int32))
    all_words = np.concatenate(paper_words)
    k, beta = _fit_heaps(all_words)
    return CorpusProfile(
        vocab=list(index),
        paper_words=paper_words,
        all_words=all_words,
        lengths={t: np.array(v, dtype=np.int32) for t, v in lengths.items()},
        shapes=np.array(shapes, dtype=np.int32),
        heaps_k=k,
        heaps_beta=beta,
        chunks=sum(len(c) for c in chunked),
        papers=len(parsed),
        chunk_chars={t: float(np.mean(v)) for t, v in chars.items()},
    )


def _fit_heaps(tokens: np.ndarray) -> tuple[float, float]:
    """Least-squares fit of log(distinct words) = log K + beta log(tokens) over the stream's second half."""
    seen = np.zeros(int(tokens.max()) + 1, dtype=bool)
    points, distinct = [], 0
    marks = set(np.unique(np.geomspace(1000, len(tokens), 40).astype(np.int64)).tolist())
    for position, token in enumerate(tokens.tolist(), start=1):
        if not seen[token]:
            seen[token] = True
            distinct += 1
        if position in marks:
            points.append((position, distinct))
    x, y = np.log([p[0] for p in points]), np.log([p[1] for p in points])
    half = len(x) // 2
    beta, log_k = np.polyfit(x[half:], y[half:], 1)
    return float(np.exp(log_k)), float(beta)


@dataclass
class VectorModel:
    """A two-level Gaussian fitted to real chunk vectors: paper centres, and chunks around their centre."""

    mean: np.ndarray
    between: np.ndarray
    """Rows whose combinations give the paper centres' spread: centre = mean + z @ between, z ~ N(0, I)."""
    within: np.ndarray
    """A (dim, dim) factor of the chunks' covariance around their paper's centre: chunk = centre + z @ within."""
    encoder: str
    dim: int
    sample_chunks: int
    sample_papers: int
    embed_s: float

    @property
    def chunks_per_s(self) -> float:
        return self.sample_chunks / self.embed_s

    def summary(self) -> dict:
        return {
            "encoder": self.encoder,
            "dim": self.dim,
            "sample_chunks": self.sample_chunks,
            "sample_papers": self.sample_papers,
            "embed_s": round(self.embed_s, 1),
            "chunks_per_s": round(self.chunks_per_s, 1),
            "between_paper_share_of_variance": round(
                float((self.between**2).sum() / ((self.between**2).sum() + (self.within**2).sum())), 3
            ),
        }


def fit_vectors(qasper: Path, settings: Settings, sample: int, cache: Path) -> VectorModel:
    """Embed whole papers' chunks (at most ``sample``, papers drawn with seed 0) and fit the Gaussian.

    The sample's vectors are kept in ``cache`` (keyed by encoder and sample) so reruns skip the embedding.
    """
    from lit3r.index.encoders import load_encoder

    _, chunked = real_chunks(qasper, settings)
    order = np.random.default_rng(0).permutation(len(chunked))
    texts, paper_of = [], []
    for paper in order:
        if len(texts) + len(chunked[paper]) > sample:
            break
        texts.extend(c.text for c in chunked[paper])
        paper_of.extend([int(paper)] * len(chunked[paper]))
    key = f"{settings.embedder.model}-{settings.embedder.max_length}-{len(texts)}".replace("/", "_")
    vectors_path, meta_path = cache / f"sample-{key}.npy", cache / f"sample-{key}.json"
    if vectors_path.exists() and meta_path.exists():
        vectors = np.load(vectors_path)
        meta = json.loads(meta_path.read_text())
    else:
        encoder = load_encoder(settings.embedder)
        start = time.perf_counter()
        vectors = encoder.encode_documents(texts)
        meta = {"encoder": encoder.name, "embed_s": time.perf_counter() - start}
        cache.mkdir(parents=True, exist_ok=True)
        np.save(vectors_path, vectors)
        meta_path.write_text(json.dumps(meta))
    papers = np.array(paper_of)
    centres = {p: vectors[papers == p].mean(axis=0) for p in np.unique(papers)}
    residuals = vectors - np.stack([centres[p] for p in papers])
    centre_matrix = np.stack(list(centres.values()))
    mean = centre_matrix.mean(axis=0)
    covariance = residuals.T.astype(np.float64) @ residuals / (len(residuals) - len(centres))
    values, axes = np.linalg.eigh(covariance)
    within = (axes * np.sqrt(np.clip(values, 0, None))).T  # z @ within has covariance `covariance`
    return VectorModel(
        mean=mean.astype(np.float32),
        between=((centre_matrix - mean) / np.sqrt(len(centres) - 1)).astype(np.float32),
        within=within.astype(np.float32),
        encoder=meta["encoder"],
        dim=int(vectors.shape[1]),
        sample_chunks=len(texts),
        sample_papers=len(centres),
        embed_s=float(meta["embed_s"]),
    )
