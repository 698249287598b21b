"""Does a paper speak of what a claim is about? The claim's subject words, weighted by how rare they are in the
library, and the share of that weight each paper holds.

The offline stance verdict's relevance model sees one paper at a time, so it cannot tell a word every paper of
the library uses ("second", "constant", "work") from the word the claim is about ("aspirin", "steel"): a paper
sharing one everyday word with an off-topic claim got a low-confidence verdict. This test sees the library:

* the claim's *subject words* (:func:`subject_words`) are its content words less those that carry its stance
  (direction, negation, hedge and absolute words: "lowers", "not", "may", "only"), function words and numbers
  (a number is checked by the verdict, not by relevance);
* each word weighs its BM25 idf over the library's chunks (:func:`idf`): a word no chunk holds weighs most;
* a paper's :func:`subject_coverage` is the share of the claim's weight held by its best chunk among those that
  hold at least two of the words (:data:`MIN_WORDS`).

A paper below :data:`MIN_SUBJECT` does not address the claim. This is the reader's abstention test for questions
(:func:`lit3r.reading.assurance.covered_share`: idf-weighted coverage, an unmentioned term weighing most) at the
level of papers in a library, and like it needs no calibration run in a fresh home.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

from lit3r.grounding.lexicon import ABSOLUTE, DOWN_FORMS, HEDGES, NEGATION, STOP, UP_FORMS, words
from lit3r.index.bm25 import idf

FUNCTION_WORDS = frozenset(
    """when where while what how why if whether but so because though although unless until since than over
    against within through throughout across per via upon up out down off do done however thus hence therefore yet
    still even just""".split()
)
"""Words that join a claim's parts rather than name what it is about (beyond :data:`STOP`)."""
NOT_SUBJECT = STOP | FUNCTION_WORDS | NEGATION | HEDGES | ABSOLUTE | UP_FORMS | DOWN_FORMS

MIN_WORDS = 2
"""A chunk speaks of a claim when it holds at least this many of its subject words (all, for a claim with fewer):
one everyday word in common ("second", "constant", "requires") is not a topic."""
MIN_SUBJECT = 0.2
"""A paper holding less than this share of the claim's subject weight does not address it. With both levels, on
SciFact's open setting (208 claims, the 182 abstracts as the library) the gold abstract keeps a share of at least
0.2 for 201 claims (96.6%); of the 20 off-topic claims written for the demo papers (benchmarks/claims_demo.txt,
set 4) none reaches it on the demo home and one does on the three shared PDFs (docs/BENCHMARKS.md, session 11)."""


def subject_words(claim: str) -> list[str]:
    """The claim's words that say what it is about, lower case, in order, without repeats."""
    return list(dict.fromkeys(w for w in words(claim) if len(w) > 1 and not w[0].isdigit() and w not in NOT_SUBJECT))


def subject_coverage(
    holders: Mapping[str, Collection[str]], paper_of: Callable[[str], str], chunks: int
) -> dict[str, float]:
    """Each paper's share of the claim's subject weight in the one chunk of it that speaks of the claim most.

    Args:
        holders: Each subject word and the ids of the library's chunks that hold it (none for a word the library
            never uses).
        paper_of: The paper of a chunk id.
        chunks: How many chunks the library has (the ``n`` of :func:`idf`).

    Returns:
        The papers with a chunk holding at least :data:`MIN_WORDS` of the subject words (every one, for a claim with
        fewer), each with the largest idf-weighted share of the words such a chunk holds; a claim without subject
        words gives an empty mapping. A chunk, not the whole paper: a long paper holds most everyday words
        somewhere (its reference list); a passage that speaks of the claim holds its words together.
    """
    weight = {word: idf(len(held), chunks) for word, held in holders.items()}
    total = sum(weight.values())
    if not total:
        return {}
    share: dict[str, float] = {}
    count: dict[str, int] = {}
    for word, held in holders.items():
        for chunk in held:
            share[chunk] = share.get(chunk, 0.0) + weight[word] / total
            count[chunk] = count.get(chunk, 0) + 1
    needed = min(MIN_WORDS, len(holders))
    shares: dict[str, float] = {}
    for chunk, value in share.items():
        if count[chunk] >= needed:
            paper = paper_of(chunk)
            shares[paper] = max(shares.get(paper, 0.0), value)
    return shares
