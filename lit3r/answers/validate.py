"""Check any reader's answer against the corpus, and repair it deterministically.

:func:`validate_answer` lists what is wrong with an :class:`~lit3r.models.Answer`; each problem
is one string starting with a stable kind followed by ``": "``:

* ``unknown-chunk``: a citation's chunk id is not in the index;
* ``paper-mismatch``: its paper id is not the chunk's paper;
* ``locator-mismatch``: its locator is not the chunk's locator;
* ``quote-not-found``: its quote is empty or not in the chunk text (white space normalised);
* ``duplicate-number``: two citations share a number;
* ``dangling-marker``: a marker ``[n]`` in the text has no citation;
* ``unused-citation``: a citation is never referenced by a marker;
* ``invalid-option``: the chosen option is not among the options (or an option was chosen
  without any being offered, unless the question is a yes/no question answered "Yes" or "No",
  or none was chosen when some were);
* ``empty-answer``: an answer marked sufficient has no text besides markers;
* ``uncited-answer``: an answer marked sufficient cites nothing.

:func:`repair_citations` is the deterministic fallback after a repair prompt: it keeps the
citations whose chunk exists and whose quote is found there (taking paper id, locator and the
exact quote text from the chunk), drops the others and the text segments that carried them,
renumbers markers 1..n by first use, and returns the insufficient-evidence answer when no valid
citation is left.

Markers are ``[n]`` or groups such as ``[1, 3]``; ``[1][3]`` is two markers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from lit3r.answers.question import implicit_options
from lit3r.models import ABSTENTION, Answer, Chunk, Citation
from lit3r.textutil import fold_space

ChunkLookup = Callable[[str], Chunk | None]
"""Chunk id -> chunk, or ``None`` when the id is not in the corpus (e.g. ``index.chunk_by_id.get``)."""

MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
"""An inline citation marker or marker group: ``[2]``, ``[1, 3]``."""

_MARKER_RUN = re.compile(rf"{MARKER.pattern}(?:[ \t]*{MARKER.pattern})*")
_AFTER_MARKER = re.compile(r"[.,;:!?]*")


def insufficient_answer(question: str, **keep: object) -> Answer:
    """The abstaining answer: :data:`lit3r.models.ABSTENTION`, no citations, no option, not answering."""
    return Answer(
        question=question, text=ABSTENTION, citations=[], sufficient=False, **{"answers_question": False, **keep}
    )


def marker_numbers(text: str) -> list[int]:
    """Every number referenced by a marker in ``text``, in order of occurrence (repeats kept)."""
    return [int(n) for match in MARKER.finditer(text) for n in match.group(1).split(",")]


def find_quote(quote: str, text: str) -> str | None:
    """The exact slice of ``text`` that equals ``quote`` up to white space, or ``None``."""
    words = quote.split()
    if not words:
        return None
    match = re.search(r"\s+".join(map(re.escape, words)), text)
    return match.group(0) if match else None


def citation_problems(citation: Citation, index_lookup: ChunkLookup) -> list[str]:
    """What is wrong with one citation (empty when it resolves and its quote is in the chunk)."""
    where = f"citation [{citation.number}]"
    chunk = index_lookup(citation.chunk_id)
    if chunk is None:
        return [f"unknown-chunk: {where} cites chunk {citation.chunk_id!r}, which does not exist"]
    problems = []
    if citation.paper_id != chunk.paper_id:
        problems.append(f"paper-mismatch: {where} has paper {citation.paper_id!r}; the chunk is in {chunk.paper_id!r}")
    if citation.locator != chunk.locator:
        problems.append(f"locator-mismatch: {where} locator {citation.locator.describe()!r} is not the chunk's")
    if find_quote(citation.quote, chunk.text) is None:
        problems.append(f"quote-not-found: {where} quote {citation.quote[:80]!r} is not in chunk {chunk.id!r}")
    return problems


def marker_problems(answer: Answer) -> list[str]:
    """Markers without citations, citations without markers, and reused citation numbers."""
    used = set(marker_numbers(answer.text))
    numbers = [c.number for c in answer.citations]
    problems = [f"duplicate-number: citation number [{n}] is used twice" for n in sorted(_repeated(numbers))]
    problems += [f"dangling-marker: marker [{n}] has no citation" for n in sorted(used - set(numbers))]
    problems += [f"unused-citation: citation [{n}] is never referenced" for n in sorted(set(numbers) - used)]
    return problems


def option_problems(answer: Answer, options: Sequence[str] | None) -> list[str]:
    """A chosen option that was not offered, or a sufficient multiple-choice answer without one.

    Without options, a yes/no question offers its implicit two ("Yes", "No";
    :func:`lit3r.answers.question.implicit_options`); any other question offers none.
    """
    if not options and answer.option is not None:
        options = implicit_options(answer.question)
        if answer.option not in options:
            return [f"invalid-option: {answer.option!r} is not one of the options {list(options)!r}"]
        return []
    if answer.option is not None and (not options or answer.option not in options):
        return [f"invalid-option: {answer.option!r} is not one of the options {list(options or [])!r}"]
    if options and answer.option is None and answer.sufficient:
        return ["invalid-option: the answer chose none of the options"]
    return []


def content_problems(answer: Answer) -> list[str]:
    """A sufficient answer with no text (besides markers) or no citation."""
    if not answer.sufficient:
        return []
    problems = []
    if not fold_space(MARKER.sub(" ", answer.text)):
        problems.append("empty-answer: the answer is marked sufficient but has no text")
    if not answer.citations:
        problems.append("uncited-answer: the answer is marked sufficient but cites nothing")
    return problems


def validate_answer(answer: Answer, index_lookup: ChunkLookup, options: Sequence[str] | None = None) -> list[str]:
    """Every problem of ``answer`` (see the module docstring for the kinds); empty when it is valid."""
    problems = [p for c in answer.citations for p in citation_problems(c, index_lookup)]
    return problems + marker_problems(answer) + option_problems(answer, options) + content_problems(answer)


def repair_citations(answer: Answer, index_lookup: ChunkLookup) -> Answer:
    """Drop invalid citations and the text they carried, renumber, or abstain when nothing valid is left.

    An answer without citation, marker or content problems is returned unchanged (options are
    not checked here: the caller knows them). A citation is kept when its chunk exists and its
    quote is found in the chunk; its paper id, locator and quote are then taken from the chunk.
    Text segments run up to and including a marker group (and the punctuation right after it);
    a segment whose markers are all invalid is dropped, invalid numbers are removed from groups.
    """
    problems = [p for c in answer.citations for p in citation_problems(c, index_lookup)]
    if not problems + marker_problems(answer) + content_problems(answer):
        return answer
    keep = {"candidate_papers": answer.candidate_papers, "rounds": answer.rounds, "trace_path": answer.trace_path}
    if not answer.sufficient:
        return insufficient_answer(answer.question, **keep)
    valid = _valid_citations(answer.citations, index_lookup)
    text, order = _rewrite_markers(answer.text, set(valid))
    if not order or not fold_space(MARKER.sub(" ", text)):
        return insufficient_answer(answer.question, **keep)
    citations = [valid[old].model_copy(update={"number": new}) for new, old in enumerate(order, start=1)]
    return answer.model_copy(update={"text": text, "citations": citations})


def _repeated(numbers: list[int]) -> set[int]:
    """Numbers that occur more than once."""
    seen: set[int] = set()
    return {n for n in numbers if n in seen or seen.add(n)}


def _valid_citations(citations: list[Citation], index_lookup: ChunkLookup) -> dict[int, Citation]:
    """Old number -> citation corrected from its chunk, for the first resolvable citation of each number."""
    valid: dict[int, Citation] = {}
    for citation in citations:
        chunk = index_lookup(citation.chunk_id)
        quote = find_quote(citation.quote, chunk.text) if chunk is not None else None
        if chunk is None or quote is None or citation.number in valid:
            continue
        fixed = {"paper_id": chunk.paper_id, "locator": chunk.locator, "quote": quote}
        valid[citation.number] = citation.model_copy(update=fixed)
    return valid


def _segments(text: str) -> list[tuple[str, list[int], str]]:
    """The text cut after each run of markers: ``(text before, numbers of the run, punctuation after)``.

    Adjacent markers (``[1][3]``, ``[1] [3]``) form one run; text after the last run comes with no numbers.
    """
    out: list[tuple[str, list[int], str]] = []
    cursor = 0
    for run in _MARKER_RUN.finditer(text):
        punctuation = _AFTER_MARKER.match(text, run.end()).group(0)
        out.append((text[cursor : run.start()], marker_numbers(run.group(0)), punctuation))
        cursor = run.end() + len(punctuation)
    if cursor < len(text):
        out.append((text[cursor:], [], ""))
    return out


def _rewrite_markers(text: str, valid: set[int]) -> tuple[str, list[int]]:
    """Text with segments of only-invalid markers dropped and markers renumbered; old numbers in new order."""
    order: list[int] = []
    pieces: list[str] = []
    for before, numbers, punctuation in _segments(text):
        kept = list(dict.fromkeys(n for n in numbers if n in valid))
        if numbers and not kept:
            continue
        order += [n for n in kept if n not in order]
        markers = "".join(f"[{order.index(n) + 1}]" for n in kept)
        pieces.append(f"{before.rstrip()} {markers}{punctuation}" if kept else before)
    return _tidy("".join(pieces)), order


def _tidy(text: str) -> str:
    """Collapse runs of spaces left by dropped segments and strip the ends."""
    return re.sub(r"[ \t]{2,}", " ", text).strip()
