"""Verify an answer claim by claim: judge each sentence against the full text of the chunks it cites.

:func:`verify_answer` splits the answer (:func:`lit3r.grounding.claims.split_claims`); every claim first passes
the model-free guards (:mod:`lit3r.grounding.guards`: its quotes stand in its chunks, its numbers and most of its
content words come from them); the claims that pass are judged in one :meth:`Judge.judge_many` call (premise: the
cited chunks' texts with instruction-like sentences left out, joined by blank lines; a claim citing nothing, or
only unknown chunks, is unsupported without a judge call), then

* ``"remove"``: drops each unsupported sentence with its markers, and the citations no kept sentence uses;
  the other citations keep their numbers (gaps are allowed). When no sentence is left the answer becomes
  the insufficient-evidence answer (``sufficient=False``);
* ``"mark"``: keeps every sentence and puts :data:`UNSUPPORTED_MARK` after each unsupported one.

Either way the answer gets ``supported_fraction`` (supported claims / claims; None when there are no
claims) and one :class:`~lit3r.models.ClaimCheck` per claim, and the caller gets one verdict dict per claim
for the trace.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from lit3r.answers import insufficient_answer
from lit3r.answers.validate import marker_numbers
from lit3r.grounding.claims import Claim, split_claims
from lit3r.grounding.guards import guard
from lit3r.grounding.judge import Judge, Judgement
from lit3r.models import Answer, Citation, ClaimCheck
from lit3r.prompts.safety import defuse

UnsupportedAction = Literal["remove", "mark"]
ChunkText = Callable[[str], str | None]
"""Chunk id -> the chunk's text, or None when the id is unknown."""

UNSUPPORTED_MARK = "[unsupported]"
"""Put after an unsupported sentence in ``"mark"`` mode (no digits, so it is never read as a citation)."""

NO_CITATION = Judgement(False, 0.0, "cites no chunk")
UNKNOWN_CHUNKS = Judgement(False, 0.0, "its cited chunks are not in the corpus")


def _premise(claim: Claim, citation_of: dict[int, Citation], texts: dict[str, str]) -> tuple[list[str], str]:
    """The chunk ids a claim cites and their defused texts joined by blank lines."""
    ids = list(dict.fromkeys(citation_of[n].chunk_id for n in claim.citations if n in citation_of))
    return ids, "\n\n".join(defuse(texts[i]) for i in ids if i in texts)


def judge_claims(
    claims: list[Claim], answer: Answer, chunk_text_of: ChunkText, judge: Judge, min_overlap: float = 0.5
) -> list[tuple[list[str], Judgement]]:
    """Each claim's cited chunk ids and verdict: the guards' failure, or else the judge's (only claims with some
    cited text that pass the guards reach the judge)."""
    citation_of = {c.number: c for c in answer.citations}
    texts = {c.chunk_id: t for c in answer.citations if (t := chunk_text_of(c.chunk_id)) is not None}
    premises = [_premise(claim, citation_of, texts) for claim in claims]
    verdicts: dict[int, Judgement] = {}
    for i, (claim, (_ids, premise)) in enumerate(zip(claims, premises, strict=True)):
        if not premise:
            continue
        cited = [citation_of[n] for n in claim.citations if n in citation_of]
        failed = guard(claim.text, cited, texts, premise, min_overlap)
        if failed is not None:
            verdicts[i] = failed
    asked = [i for i, (_ids, premise) in enumerate(premises) if premise and i not in verdicts]
    found = judge.judge_many([(premises[i][1], claims[i].text) for i in asked]) if asked else []
    verdicts.update(zip(asked, found, strict=True))
    out = []
    for i, (claim, (ids, _premise_text)) in enumerate(zip(claims, premises, strict=True)):
        default = NO_CITATION if not claim.citations else UNKNOWN_CHUNKS
        out.append((ids, verdicts.get(i, default)))
    return out


def _tidy(text: str) -> str:
    """Runs of spaces left by a removal collapsed, ends stripped."""
    return re.sub(r"[ \t]{2,}", " ", text).strip()


def _rewrite(text: str, claims: list[Claim], unsupported: list[bool], action: UnsupportedAction) -> str:
    """``text`` with each unsupported claim's span removed, or followed by the mark."""
    pieces, cursor = [], 0
    for claim, bad in zip(claims, unsupported, strict=True):
        if not bad:
            continue
        pieces.append(text[cursor : claim.start] if action == "remove" else text[cursor : claim.end])
        if action == "mark":
            pieces.append(f" {UNSUPPORTED_MARK}")
        cursor = claim.end
    pieces.append(text[cursor:])
    return _tidy("".join(pieces))


def verify_answer(
    answer: Answer,
    chunk_text_of: ChunkText,
    judge: Judge,
    unsupported: UnsupportedAction = "remove",
    min_overlap: float = 0.5,
) -> tuple[Answer, list[dict[str, Any]]]:
    """The answer with unsupported claims removed or marked, and one verdict dict per claim.

    Each verdict dict holds the claim, its citation numbers and chunk ids, ``supported``, ``score``,
    ``reason`` and ``action`` ('kept', 'removed' or 'marked').
    """
    if unsupported not in ("remove", "mark"):
        raise ValueError(f"unsupported must be 'remove' or 'mark', not {unsupported!r}")
    claims = split_claims(answer)
    if not claims:
        return answer, []
    judged = judge_claims(claims, answer, chunk_text_of, judge, min_overlap)
    bad = [not j.supported for _ids, j in judged]
    verb = "removed" if unsupported == "remove" else "marked"
    checks = [
        ClaimCheck(
            text=claim.text,
            chunk_ids=ids,
            supported=j.supported,
            score=float(j.score),
            reason=j.reason,
            action=verb if not j.supported else "kept",
        )
        for claim, (ids, j) in zip(claims, judged, strict=True)
    ]
    verdicts = [
        {"claim": c.text, "citations": list(claim.citations), **c.model_dump(exclude={"text"})}
        for claim, c in zip(claims, checks, strict=True)
    ]
    fraction = sum(c.supported for c in checks) / len(checks)
    update: dict[str, Any] = {"supported_fraction": fraction, "claims": checks}
    if not any(bad):
        return answer.model_copy(update=update), verdicts
    text = _rewrite(answer.text, claims, bad, unsupported)
    if unsupported == "remove":
        if all(bad):
            keep = {
                "candidate_papers": answer.candidate_papers,
                "rounds": answer.rounds,
                "trace_path": answer.trace_path,
            }
            return insufficient_answer(answer.question, **keep, **update), verdicts
        used = set(marker_numbers(text))
        update["citations"] = [c for c in answer.citations if c.number in used]
    return answer.model_copy(update={**update, "text": text}), verdicts
