"""A yes/no question about something the papers read never mention is answered "No"; any other question naming
something they never mention is not answered.

"Did they use crowdsourcing to annotate the dataset?", "Does their model use MFCC?", "Do they compare against LDA?"
ask whether a paper does a named thing; a paper that did it says so, in the thing's own name. When no chunk of the
papers read uses such a word, the question's answer over those papers is "No" (a closed-world reading: the papers
are the whole of what is known), and the reader's usual rule, which reads the verdict off the sentence that best
matches the question's other words, would say "Yes" to a sentence that is not about the thing at all.

Only words that name a thing count, not words any paper might put otherwise: a word is **technical** when it is
spelt as a coined name ("ColBERT", "fastText", "LoRA": a capital past its first letter), is one of a multi-word name
("Amazon Mechanical Turk": two or more capitalised words in a row, past the question's first), or when general
English uses it less than once per million words (:data:`MAX_ZIPF`, the Zipf scale of ``wordfreq``: 3 is once per
million), so "crowdsourcing" (2.7), "LDA" (2.4), "MFCC" and "pretrained" (unlisted) count and "hurt", "region",
"claim" (above 4) never do: a paper may say "degrades" for "hurt", but not something else for "LDA". A word is
**mentioned** when every stem of it is a term of the papers' chunks, or when its letters (case, hyphens and a plural
"s" aside) or its stem open a word of their text: "pretrained" is mentioned by "pre-trained", "MFCCs" by "MFCC",
"crowdsourcing" by "crowd-sourced"; and a word of six letters or more that is one letter (two from eight letters)
from a word of the text with the same first letter is a typo for it ("consistenly" for "consistently").

Only a question about what the papers' authors did is read so (:data:`OWN_WORK`: "they", "their model", "this
model", "the authors", "the proposed method"): a paper reports its own methods and resources in full, but not
the world's facts, which it may state in other words. "Is halofantrine ototoxic?" over an abstract that says "hearing
loss" is not answered "No" (PubMedQA's questions are of that kind; read so, many turned wrongly "No").

Nothing here reads a question the papers do not hold: the papers' coverage check
(:func:`lit3r.reading.assurance.papers_coverage`) runs first, so an off-topic question still abstains. A negated
question ("Don't they use ...?") and a question with options are left to the readers. The answer quotes what the
best-matching sentence says instead ("No — The dataset was annotated by two trained linguists. [1]");
:attr:`lit3r.models.Answer.unmentioned` names the words its "No" rests on.

Any other question (without options) that names a thing none of the papers read mentions, in their chunks or
titles, is not read (:func:`unnamed`): "Which optimizer was used to train AlphaGo?" over papers that never name
AlphaGo abstains, though they share "optimizer" and "train". Here only words spelt as names count (a capitalised
word inside the question, a coined or versioned name; not an acronym, see :func:`proper_name`), since the question
is not about the authors' own work and a common word may be put otherwise.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from lit3r.answers.question import NO, OPTION_SEPARATOR, answer_form, is_negated
from lit3r.models import Answer, Chunk
from lit3r.reading.assurance import genre_terms
from lit3r.reading.extractive import extractive_answer
from lit3r.reading.scoring import query_terms, terms
from lit3r.reading.spans import FUNCTION_WORDS

MAX_ZIPF = 3.0
"""A question's word names a technical thing when its frequency in general English is below this on the Zipf scale
(``wordfreq.zipf_frequency``: log10 of uses per billion words; 3.0 is once per million words). Chosen as that round
definition, not fitted: on QASPER's yes/no questions 2.5, 3.0 and 3.5 all gain (docs/BENCHMARKS.md)."""

OWN_WORK = re.compile(
    r"\b(?:they|their|them|theirs|themselves|these|this|authors?|proposed)\b|\bthe (?:paper|work|study|article)s?\b",
    re.IGNORECASE,
)
"""A question about what the papers' authors did: "Did they use ...?", "Does their model ...?", "Is this model
...?", "Do the authors ...?", "the proposed method"."""

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-'][A-Za-z0-9]+)*")
_LETTERS = re.compile(r"[a-z]{4,}")
_HYPHENS = re.compile(r"[-\u2010-\u2014']")


@functools.cache
def _zipf(word: str) -> float:
    from wordfreq import zipf_frequency  # its English list loads on first use (a tenth of a second)

    return zipf_frequency(word, "en")


def coined(word: str) -> bool:
    """Whether ``word`` is spelt as a coined name: a capital after its first letter ("ColBERT", "fastText", "LoRA",
    "MFCC", "GPT-4"); general English does not spell its words so, whatever their frequency ("colbert", "marco")."""
    return any(ch.isupper() for ch in word[1:])


def technical(word: str) -> bool:
    """Whether ``word`` names a technical thing: spelt as a coined name (:func:`coined`), or used by general English
    less often than :data:`MAX_ZIPF` (see the module docstring)."""
    return coined(word) or _zipf(word.lower()) < MAX_ZIPF


def name_words(question: str) -> set[str]:
    """The capitalised words of ``question`` in runs of two or more, past its first word: the words of a
    multi-word name ("Amazon Mechanical Turk"), each as technical as the name."""
    words = _WORD.findall(question)[1:]
    capital = [False, *(w[0].isupper() for w in words), False]
    return {w for i, w in enumerate(words, 1) if capital[i] and (capital[i - 1] or capital[i + 1])}


def _folded(text: str) -> str:
    """``text`` lower-cased with hyphens and apostrophes removed ("Pre-trained" -> "pretrained")."""
    return _HYPHENS.sub("", text.lower())


def within_edits(a: str, b: str, limit: int) -> bool:
    """Whether ``a`` becomes ``b`` by at most ``limit`` insertions, deletions or substitutions (Levenshtein)."""
    if abs(len(a) - len(b)) > limit:
        return False
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        if min(current) > limit:
            return False
        previous = current
    return previous[-1] <= limit


def misspelling(word: str, words: set[str]) -> bool:
    """Whether ``word``, at least six letters long, is one letter (two for eight letters or more) away from a word
    of ``words`` with its first letter: a question's typo ("consistenly", "unsuperized") names the paper's word, not a
    thing the paper lacks."""
    letters = word.lower()
    if len(letters) < 6:
        return False
    limit = 2 if len(letters) >= 8 else 1
    return any(w[0] == letters[0] and within_edits(letters, w, limit) for w in words)


class PapersText:
    """What :func:`mentioned` reads of the papers' chunks, each part built once (when first needed) for all the
    question's words."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = list(texts)

    @functools.cached_property
    def stems(self) -> set[str]:
        return set().union(*terms(self.texts))

    @functools.cached_property
    def folded(self) -> str:
        return _folded(" ".join(self.texts))

    @functools.cached_property
    def words(self) -> set[str]:
        return set(_LETTERS.findall(self.folded))


def mentioned(word: str, papers: PapersText) -> bool:
    """Whether ``word`` is mentioned by the papers' text: by its stems, by its letters or stem opening a word, or as
    the word a misspelling of it names."""
    own = set(terms([word])[0])
    if own and own <= papers.stems:
        return True
    letters = _folded(word)
    if len(letters) > 4 and letters.endswith("s"):
        letters = letters[:-1]
    prefixes = {letters} | {stem for stem in own if len(own) == 1 and len(stem) >= 5}
    if any(re.search(rf"(?<![a-z0-9]){re.escape(p)}", papers.folded) for p in prefixes):
        return True
    return misspelling(_folded(word), papers.words)


def unmentioned_words(question: str, chunks: Sequence[Chunk]) -> list[str]:
    """The technical words of a yes/no question that no chunk of ``chunks`` (the papers read, all their chunks)
    mentions, in the question's order; empty for a question not about the authors' own work (:data:`OWN_WORK`), any
    other than yes/no, a negated one, or no chunks."""
    if not chunks or answer_form(question) != "boolean" or is_negated(question) or not OWN_WORK.search(question):
        return []
    asked = query_terms(question) - genre_terms()
    named = name_words(question)
    candidates = [
        w for w in dict.fromkeys(_WORD.findall(question)) if set(terms([w])[0]) & asked and (w in named or technical(w))
    ]
    if not candidates:
        return []
    papers = PapersText([c.text for c in chunks])
    return [w for w in candidates if not mentioned(w, papers)]


_NAME_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-.][A-Za-z0-9]+)*")
_SENTENCE_BREAK = re.compile(r"[:;?!.]|\s[-\u2013\u2014]\s|--|\u2014")
_MODIFIER = re.compile(r"(?:-[a-z]+)+$")
"""Lower-case parts hyphened onto a name ("BERT-based", "c-Kit-dependent", "T1-weighted"): they modify the name."""


def _acronym(word: str) -> bool:
    """Whether every letter of ``word`` is a capital, a plural "s" aside ("LSTM", "SOTA", "GPUs")."""
    letters = [ch for ch in (word[:-1] if word.endswith("s") else word) if ch.isalpha()]
    return bool(letters) and all(ch.isupper() for ch in letters)


def _head(word: str) -> str:
    """``word`` without the lower-case parts hyphened onto it: "c-Kit-dependent" -> "c-Kit"."""
    return _MODIFIER.sub("", word) or word


def proper_name(word: str) -> bool:
    """Whether ``word`` is spelt as the name of one thing: a capital after its first letter that is not an acronym
    ("AlphaGo", "fastText", "ColBERT", "SQuAD", "OpenAI"), or letters with a capital and a number ("GPT-3", "WMT14",
    "COVID-19"; two letters at least, so "F1" and "L2" are measures, not names). An acronym ("LSTM", "NLI", "SOTA")
    is as often a field's common noun as a name, and is left out. Lower-case parts hyphened on are not read:
    "BERT-based" is the acronym "BERT"."""
    word = _head(word)
    letters = sum(ch.isalpha() for ch in word)
    if coined(word) and not _acronym(word):
        return True
    return letters >= 2 and any(ch.isdigit() for ch in word) and any(ch.isupper() for ch in word)


def _words_in_sentences(question: str) -> list[tuple[str, bool]]:
    """The words of ``question``, each with whether it opens a sentence: the first, and the first after a colon,
    semicolon, question mark, full stop or dash ("The Main Gate Syndrome: a new format ...? Improvement of ...")."""
    found, end = [], 0
    for match in _NAME_TOKEN.finditer(question):
        found.append((match.group(), not found or bool(_SENTENCE_BREAK.search(question[end : match.start()]))))
        end = match.end()
    return found


def capitalised_names(question: str) -> list[list[str]]:
    """The runs of capitalised words of ``question`` that do not open a sentence, each a name ("Dubai", "Stable
    Diffusion", "World Cup", "Amazon Mechanical Turk"; a run of acronyms is no name, see :func:`proper_name`),
    function words ending a run; none in a question written in title case (more than half its words of four letters
    or more capitalised), where capitals mark no name."""
    words = _words_in_sentences(question)
    longer = [w for w, opens in words if len(w) >= 4 and not opens]
    if longer and 2 * sum(w[0].isupper() for w in longer) > len(longer):
        return []
    runs: list[list[str]] = []
    run: list[str] = []
    for word, opens in [*words, ("", True)]:
        if not opens and word[:1].isupper() and word.lower() not in FUNCTION_WORDS:
            run.append(word)
            continue
        if run and not all(_acronym(_head(w)) for w in run):
            runs.append(run)
        run = []
    return runs


def unnamed(question: str, chunks: Sequence[Chunk], titles: Sequence[str] = ()) -> list[str]:
    """The names ``question`` asks about that neither a chunk of ``chunks`` (the papers read, all their chunks) nor
    one of their ``titles`` mentions: a capitalised name (:func:`capitalised_names`) one of whose words is not
    mentioned, and each :func:`proper_name`, in the question's order; empty without chunks.

    A question naming a thing ("Which optimizer was used to train AlphaGo?", "What dataset was used to train Stable
    Diffusion?") is answered by a passage that names it: papers that never do say nothing about it, whatever other
    words of the question they share ("optimizer", "dataset", "train"), so no reader reads them (the caller
    abstains). Only names count (English capitalises a name, not a common noun, inside a sentence): a common word
    the papers put otherwise, or an acronym, does not (see :func:`proper_name`); a misspelt name still finds its word
    (:func:`mentioned`)."""
    if not chunks:
        return []
    runs = capitalised_names(question)
    in_runs = {w for run in runs for w in run}
    named = [" ".join(run) for run in runs]
    named += [w for w in dict.fromkeys(_NAME_TOKEN.findall(question)) if proper_name(w) and w not in in_runs]
    if not named:
        return []
    papers = PapersText([*titles, *(c.text for c in chunks)])
    return [name for name in named if not all(mentioned(_head(w), papers) for w in _NAME_TOKEN.findall(name))]


def unmentioned_answer(polar: Answer, words: Sequence[str]) -> Answer:
    """The reader's yes/no answer ``polar`` turned into "No — <the sentence it cites> [n]", resting on ``words``.

    A yes/no answer quotes the stretch of its sentence that decides the verdict; this "No" is decided by what the
    papers leave out, so it quotes the whole sentence its citation holds: what the paper says instead ("No — We
    compare against BM25 and a dense encoder. [1]", not "No — compare against [1]"). It stays a verbatim quote with
    its citation, so the claim check still reads a quote. ``polar`` cites one sentence, as every yes/no answer of
    the offline reader does (:func:`lit3r.reading.forms.polar_answer`)."""
    if len(polar.citations) != 1:
        raise ValueError(f"a yes/no answer cites one sentence, not {len(polar.citations)}")
    citation = polar.citations[0]
    update = {
        "text": f"{NO}{OPTION_SEPARATOR}{citation.quote} [{citation.number}]",
        "option": NO,
        "answers_question": True,
        "unmentioned": list(words),
    }
    return polar.model_copy(update=update)


def closed_world_answer(
    question: str, evidence: Sequence[Chunk], words: Sequence[str], titles: dict[str, str] | None = None
) -> Answer | None:
    """The offline reader's yes/no answer from ``evidence``, turned "No" by the unmentioned ``words``
    (:func:`unmentioned_answer`); ``None`` when it gives no verdict (it abstains, or answers the question in parts)."""
    polar = extractive_answer(question, list(evidence), titles=titles)
    if not polar.sufficient or polar.option is None:
        return None
    return unmentioned_answer(polar, words)
