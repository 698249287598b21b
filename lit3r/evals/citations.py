"""ALCE citation recall and precision (Gao et al., 2023, "Enabling Large Language Models to Generate Text with
Citations", section 2.3), computed with any :class:`~lit3r.grounding.judge.Judge`.

An answer is a list of statements (:class:`CitedClaim`), each with the texts of the passages it cites. With
``C`` a statement's citations and ``judge(premise, claim)`` the entailment verdict:

* **Citation recall** of a statement is 1 when ``C`` is non-empty and the concatenation of ``C`` (joined by new
  lines) entails it, else 0. An answer's recall is the mean over its statements.
* **Citation precision**: a citation ``c`` of a statement is *irrelevant* when ``c`` alone does not entail the
  statement and the concatenation of ``C \\ {c}`` still does. A citation counts as precise when its statement is
  supported (recall 1) and the citation is not irrelevant; every citation of an unsupported statement counts as
  imprecise. An answer's precision is precise citations / all its citations, 0 when it cites nothing.

Both are averaged over answers; an answer with no statement is left out. This follows ALCE's evaluation code
(``eval.py``, ``compute_autoais`` with ``citation=True``) in its details too: only the first
``at_most_citations`` citations of a statement are used (3, the default of ALCE's ``--at_most_citations``); a
statement naming a citation that does not exist is unsupported and its citations are not counted (pass it with no
passages); a statement with a single citation that is supported has that citation precise without another call.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from lit3r.grounding.judge import Judge

AT_MOST_CITATIONS = 3
"""ALCE's default cap on the citations of one statement."""


@dataclass(frozen=True)
class CitedClaim:
    """One statement of an answer, citation markers removed, and the texts of the passages it cites, in order."""

    text: str
    passages: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClaimVerdict:
    """ALCE's verdict on one statement: jointly supported or not, and how many of its citations are precise."""

    supported: bool
    citations: int
    precise: int

    @property
    def irrelevant(self) -> int:
        """Citations of a supported statement that ALCE calls irrelevant (over-citation)."""
        return self.citations - self.precise if self.supported else 0


@dataclass(frozen=True)
class AnswerCitations:
    """ALCE citation recall and precision of one answer, with its statements' verdicts."""

    recall: float
    precision: float
    verdicts: tuple[ClaimVerdict, ...]


def joint_premise(passages: Sequence[str]) -> str:
    """The concatenation ALCE judges a statement against: the passages joined by new lines."""
    return "\n".join(passages)


def _capped(claim: CitedClaim, at_most: int | None) -> CitedClaim:
    return CitedClaim(claim.text, claim.passages[:at_most] if at_most is not None else claim.passages)


def score_claims(
    claims: Sequence[CitedClaim], judge: Judge, at_most_citations: int | None = AT_MOST_CITATIONS
) -> list[ClaimVerdict]:
    """ALCE's verdict on every statement, judged in three batched passes.

    1. Every statement with citations against the concatenation of its citations (recall).
    2. For each supported statement with several citations, each citation alone.
    3. For each citation that fails alone, the concatenation of the statement's other citations: when that
       still entails the statement the citation is irrelevant.
    """
    claims = [_capped(c, at_most_citations) for c in claims]
    cited = [i for i, c in enumerate(claims) if c.passages]
    joint = judge.judge_many([(joint_premise(claims[i].passages), claims[i].text) for i in cited])
    supported = {i for i, verdict in zip(cited, joint, strict=True) if verdict.supported}

    several = [(i, k) for i in sorted(supported) for k in range(len(claims[i].passages)) if len(claims[i].passages) > 1]
    alone = judge.judge_many([(claims[i].passages[k], claims[i].text) for i, k in several])
    failing = [pair for pair, verdict in zip(several, alone, strict=True) if not verdict.supported]
    rest = judge.judge_many(
        [(joint_premise(claims[i].passages[:k] + claims[i].passages[k + 1 :]), claims[i].text) for i, k in failing]
    )
    irrelevant: dict[int, int] = {}
    for (i, _k), verdict in zip(failing, rest, strict=True):
        irrelevant[i] = irrelevant.get(i, 0) + verdict.supported

    verdicts = []
    for i, claim in enumerate(claims):
        n = len(claim.passages)
        precise = n - irrelevant.get(i, 0) if i in supported else 0
        verdicts.append(ClaimVerdict(supported=i in supported, citations=n, precise=precise))
    return verdicts


def answer_citations(verdicts: Sequence[ClaimVerdict]) -> AnswerCitations:
    """One answer's recall (supported statements / statements) and precision (precise / all citations, 0 if none)."""
    if not verdicts:
        raise ValueError("an answer without statements has no citation recall or precision")
    citations = sum(v.citations for v in verdicts)
    recall = sum(v.supported for v in verdicts) / len(verdicts)
    precision = sum(v.precise for v in verdicts) / citations if citations else 0.0
    return AnswerCitations(recall=recall, precision=precision, verdicts=tuple(verdicts))


def citation_metrics(
    answers: Sequence[Sequence[CitedClaim]], judge: Judge, at_most_citations: int | None = AT_MOST_CITATIONS
) -> dict[str, float | int | None]:
    """ALCE citation recall and precision averaged over answers, with counts.

    Answers without statements are skipped (as ALCE skips outputs without sentences). The statements of all
    answers are judged together so a batched judge sees large batches.

    Returns:
        ``citation_recall`` and ``citation_precision`` (None when no answer has a statement), ``answers``
        (scored), ``claims``, ``citations``, ``supported_claims``, ``uncited_claims`` and ``irrelevant_citations``.
    """
    scored = [list(a) for a in answers if a]
    flat = [claim for claims in scored for claim in claims]
    verdicts = score_claims(flat, judge, at_most_citations)
    per_answer, at = [], 0
    for claims in scored:
        per_answer.append(answer_citations(verdicts[at : at + len(claims)]))
        at += len(claims)
    return {
        "citation_recall": statistics.fmean(a.recall for a in per_answer) if per_answer else None,
        "citation_precision": statistics.fmean(a.precision for a in per_answer) if per_answer else None,
        "answers": len(per_answer),
        "claims": len(flat),
        "citations": sum(v.citations for v in verdicts),
        "supported_claims": sum(v.supported for v in verdicts),
        "uncited_claims": sum(not c.passages for c in flat),
        "irrelevant_citations": sum(v.irrelevant for v in verdicts),
    }
