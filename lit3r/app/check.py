"""Check a claim against the library: which papers support it, which contradict it, with the sentences that say so.

:func:`check_claim` retrieves the claim like a question (:meth:`Session.retrieve`: the one retrieval path,
restricted to the named papers when given), groups the pool's chunks by paper (the final papers first, at most
:data:`MAX_PAPERS`, :data:`PASSAGES` chunks each), and asks the stance verdict about each paper: the LLM verdict
(:mod:`lit3r.grounding.stance_llm`) when the session has a chat model, else the offline one
(:mod:`lit3r.grounding.stance`). A paper whose best chunk holds too little of what the claim is about (its subject
words weighted by their rarity in the library, :mod:`lit3r.grounding.subject`) is not judged: it does not address
the claim. Every quote is re-checked against its chunk's text before it is kept. The result
lists the papers with a verdict first (by confidence), then the papers that do not address the claim; the summary
counts them and names the strongest sentence each way, and says so plainly when no paper addresses the claim.

Each check writes a trace like an answer's (``kind: "check"``): the retrieval's events, one ``verify`` event per
paper, and an answer whose text lists the verdicts with a citation per quote, so ``lit3r trace show`` renders it
and ``lit3r trace diff`` compares two checks; :func:`replay_check` runs one again from its recorded model outputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from lit3r.app.session import Session
from lit3r.app.traces import load_trace, new_trace_id, run_settings, trace_path, write_trace
from lit3r.grounding.stance import OfflineStance, PaperVerdict, Passage
from lit3r.grounding.stance_llm import LLMStance
from lit3r.grounding.subject import MIN_SUBJECT, subject_coverage, subject_words
from lit3r.index.bm25 import tokenize
from lit3r.index.protocol import Index
from lit3r.llm.budget import Budget
from lit3r.llm.trace import TraceRecorder
from lit3r.llm.wrapper import LLM, Breaker
from lit3r.models import Answer, Citation, Locator
from lit3r.retrieval.search import rank_chunks
from lit3r.settings import Settings

MAX_PAPERS = 8
PASSAGES = 4
RELATIVE = 0.3
"""A paper whose P(addressed) is under this share of the best paper's only touches the claim: not addressed."""
NOT_ADDRESSED = "The library does not address this claim: no retrieved paper speaks to it."
CHECK_KIND = "check"


class CheckQuote(BaseModel):
    """A deciding sentence, verbatim from its chunk."""

    chunk_id: str
    locator: Locator
    quote: str
    role: Literal["supports", "contradicts"]


class PaperCheck(BaseModel):
    """One paper's verdict on the claim."""

    paper_id: str
    title: str
    verdict: Literal["supports", "contradicts", "mixed", "not_addressed"]
    confidence: float = Field(description="Probability-like confidence in the verdict, 0 to 1.")
    quotes: list[CheckQuote] = Field(default_factory=list)
    reason: str = Field(default="", description="What the verdict rests on (probabilities, or why a fallback).")
    judged_by: str = Field(
        default="offline",
        description="'offline' or 'llm'; 'subject' for a paper not judged: it does not hold what the claim is about.",
    )


class StrongestQuote(CheckQuote):
    paper_id: str
    confidence: float


class CheckSummary(BaseModel):
    """How many papers go each way, and the strongest sentence each way."""

    supports: int
    contradicts: int
    mixed: int
    not_addressed: int = 0
    addressed: bool = Field(description="Whether any paper addresses the claim.")
    message: str = Field(description="The whole in one sentence (the library does not address it, when so).")
    strongest_support: StrongestQuote | None = None
    strongest_contradiction: StrongestQuote | None = None


class CheckResult(BaseModel):
    """The check of one claim (the JSON document of ``lit3r check --json`` and ``POST /v1/check``)."""

    claim: str
    papers: list[PaperCheck]
    summary: CheckSummary
    trace_path: str | None = None


def _passages(session: Session, claim: str, pool: Sequence[tuple[str, float]], papers: Sequence[str]) -> dict:
    """Each paper's best chunks: its pool chunks, then its own best BM25 chunks for the claim, without repeats."""
    index = session.index
    grouped: dict[str, list[str]] = {p: [] for p in papers}
    for chunk_id, _score in pool:
        paper = index.chunk_by_id[chunk_id].paper_id
        if paper in grouped and len(grouped[paper]) < PASSAGES:
            grouped[paper].append(chunk_id)
    for paper, chunks in grouped.items():
        found = [c for c, _s in rank_chunks(index, claim, "bm25", depth=PASSAGES, paper_ids=[paper])]
        chunks.extend(c for c in found if c not in chunks)
    return grouped


def subject_shares(index: Index, claim: str) -> dict[str, float] | None:
    """Each paper's share of the claim's subject (:func:`~lit3r.grounding.subject.subject_coverage`: its best
    chunk's share of the claim's subject words, weighted by their idf over the library's chunks); ``None`` for a
    claim without subject words (nothing to test). Words the BM25 tokeniser makes the same terms count once."""
    kept, seen = [], set()
    for word in subject_words(claim):
        key = tuple(tokenize([word], index.settings.bm25)[0])
        if key and key not in seen:
            seen.add(key)
            kept.append(word)
    if not kept:
        return None
    chunks = index.chunk_by_id
    hits = index.bm25_chunks.search_many(kept, k=len(chunks))
    holders = {w: {c for c, _s in h} for w, h in zip(kept, hits, strict=True)}
    return subject_coverage(holders, lambda chunk_id: chunks[chunk_id].paper_id, len(chunks))


def _quotes(verdict: PaperVerdict, texts: Mapping[str, str], locators: Mapping[str, Locator]) -> list[CheckQuote]:
    """The verdict's quotes that stand verbatim in their chunks (every other one is dropped)."""
    return [
        CheckQuote(chunk_id=q.chunk_id, locator=locators[q.chunk_id], quote=q.quote, role=q.role)
        for q in verdict.quotes
        if q.chunk_id in texts and q.quote and q.quote in texts[q.chunk_id]
    ]


def _strongest(papers: Sequence[PaperCheck], role: str) -> StrongestQuote | None:
    found = [(p, q) for p in papers for q in p.quotes if q.role == role and p.verdict in (role, "mixed")]
    if not found:
        return None
    paper, quote = max(found, key=lambda pq: pq[0].confidence)
    return StrongestQuote(**quote.model_dump(), paper_id=paper.paper_id, confidence=paper.confidence)


def summarize(papers: Sequence[PaperCheck]) -> CheckSummary:
    counts = {v: sum(p.verdict == v for p in papers) for v in ("supports", "contradicts", "mixed", "not_addressed")}
    addressed = counts["supports"] + counts["contradicts"] + counts["mixed"] > 0
    message = (
        f"{counts['supports']} paper(s) support the claim, {counts['contradicts']} contradict it, "
        f"{counts['mixed']} are mixed; {counts['not_addressed']} retrieved paper(s) do not address it."
        if addressed
        else NOT_ADDRESSED
    )
    return CheckSummary(
        **counts, addressed=addressed, message=message,
        strongest_support=_strongest(papers, "supports"), strongest_contradiction=_strongest(papers, "contradicts"),
    )  # fmt: skip


def stance_judge(
    session: Session, recorder: TraceRecorder, fallback: OfflineStance | None = None
) -> OfflineStance | LLMStance:
    """The judge a check of this session uses: the LLM verdict with its chat model (a fresh budget per claim),
    falling back to ``fallback`` (default: the packaged offline verdict), else the offline one."""
    if session.chat_model is None:
        return fallback or OfflineStance()
    budget = Budget.for_question(session.settings.llm)
    llm = LLM(session.chat_model, session.settings.llm, recorder=recorder, budget=budget, breaker=Breaker())
    return LLMStance(llm, fallback)


def _trace_answer(result: CheckResult, candidates: Sequence[str], rounds: int) -> Answer:
    """The check as an answer for its trace: one line per paper with a verdict, a citation per quote."""
    citations, lines = [], []
    for paper in result.papers:
        if paper.verdict == "not_addressed":
            continue
        marks = []
        for quote in paper.quotes:
            number = len(citations) + 1
            citations.append(
                Citation(number=number, chunk_id=quote.chunk_id, paper_id=paper.paper_id, locator=quote.locator,
                         quote=quote.quote)
            )  # fmt: skip
            marks.append(f"[{number}]")
        lines.append(f"{paper.title or paper.paper_id}: {paper.verdict} ({paper.confidence:.2f}) {''.join(marks)}")
    text = "\n".join([result.summary.message, *lines])
    return Answer(
        question=result.claim, text=text, citations=citations, sufficient=result.summary.addressed,
        candidate_papers=list(candidates), rounds=rounds,
    )  # fmt: skip


def check_claim(
    session: Session,
    claim: str,
    *,
    paper_ids: Sequence[str] | None = None,
    allowed_papers: Sequence[str] | None = None,
) -> CheckResult:
    """Check ``claim`` against the session's library; writes the check's trace.

    ``paper_ids``: judge exactly these papers (the ones a user named). ``allowed_papers`` (used when no
    ``paper_ids``): retrieve within these only and judge the best of them as for the whole library (a library
    filter's papers; a collection may hold hundreds). Raises :class:`~lit3r.app.errors.UserError` for an empty claim and
    :class:`~lit3r.app.errors.NotFound` for unknown paper ids (both ``ValueError``s).
    """
    retrieval = session.retrieve(claim, allowed_papers=paper_ids if paper_ids else allowed_papers)
    claim = retrieval.question
    recorder = TraceRecorder()
    recorder.events.extend(retrieval.events)
    ranked = [p for p, _s in retrieval.final_papers]
    for chunk_id, _score in retrieval.pool:
        paper = session.index.chunk_by_id[chunk_id].paper_id
        if paper not in ranked:
            ranked.append(paper)
    papers = list(dict.fromkeys(paper_ids)) if paper_ids else ranked[:MAX_PAPERS]
    grouped = _passages(session, claim, retrieval.pool, papers)
    judge = stance_judge(session, recorder)
    shares = subject_shares(session.index, claim)
    verdicts = {}
    for paper_id in papers:
        chunks = [session.index.chunk_by_id[c] for c in grouped[paper_id]]
        with recorder.step("verify", "check_paper") as data:
            share = shares.get(paper_id, 0.0) if shares is not None else None
            if share is not None and share < MIN_SUBJECT:
                verdict = PaperVerdict(
                    "not_addressed", confidence=round(1.0 - share, 4), relevance=0.0,
                    reason=f"its best passage holds {share:.2f} of what the claim is about (below {MIN_SUBJECT})",
                    by="subject",
                )  # fmt: skip
            else:
                verdict = judge.judge(claim, [Passage(c.id, c.text) for c in chunks])
            data.update(paper_id=paper_id, chunks=[c.id for c in chunks], verdict=verdict.verdict,
                        confidence=verdict.confidence, relevance=verdict.relevance, support=verdict.support,
                        reason=verdict.reason, by=verdict.by)  # fmt: skip
        verdicts[paper_id] = (verdict, chunks)
    best = max((v.relevance for v, _c in verdicts.values() if v.verdict != "not_addressed"), default=0.0)
    checks = []
    for paper_id, (verdict, chunks) in verdicts.items():
        quotes = _quotes(verdict, {c.id: c.text for c in chunks}, {c.id: c.locator for c in chunks})
        label, confidence, reason = verdict.verdict, verdict.confidence, verdict.reason
        if label != "not_addressed" and not quotes:
            label, reason = "not_addressed", f"{reason}; no quote stands in its chunk"
        elif label != "not_addressed" and verdict.by == "offline" and verdict.relevance < RELATIVE * best:
            label, quotes = "not_addressed", []
            confidence, reason = 1.0 - verdict.relevance / best, f"{reason}; touches the claim far less than the best"
        paper = session.index.papers[paper_id]
        checks.append(
            PaperCheck(paper_id=paper_id, title=paper.title, verdict=label, confidence=round(confidence, 4),
                       quotes=quotes, reason=reason, judged_by=verdict.by)
        )  # fmt: skip
    checks.sort(key=lambda p: (p.verdict == "not_addressed", -p.confidence))
    result = CheckResult(claim=claim, papers=checks, summary=summarize(checks))
    trace_id = new_trace_id()
    path = trace_path(session.settings, trace_id)
    answer = _trace_answer(result, ranked, retrieval.rounds).model_copy(update={"trace_path": str(path)})
    result.trace_path = str(path)
    write_trace(
        path, recorder.events, answer, trace_id=trace_id, kind=CHECK_KIND, planner="fixed",
        stop_reason=retrieval.stop_reason, verdicts=[v.model_dump() for v in retrieval.verdicts],
        check=result.model_dump(mode="json"), allowed=list(paper_ids) if paper_ids else None,
        restricted_to=list(allowed_papers) if allowed_papers is not None else None,
        **run_settings(session.settings),
    )  # fmt: skip
    return result


def check(
    claim: str,
    *,
    settings: Settings,
    paper_ids: Sequence[str] | None = None,
    allowed_papers: Sequence[str] | None = None,
    **session: Any,
) -> CheckResult:
    """Check one claim in a session opened for it (``session`` options go to :class:`Session`)."""
    with Session(settings, **session) as opened:
        return check_claim(opened, claim, paper_ids=paper_ids, allowed_papers=allowed_papers)


def replay_check(settings: Settings, trace: Mapping[str, Any] | str, **session: Any):
    """Run a traced check again with its recorded model outputs (none: offline) and compare the two traces."""
    from lit3r.app.replay import ReplayModel, ReplayReport, _recorded_calls
    from lit3r.app.trace_diff import diff_traces

    original = load_trace(trace)
    calls = _recorded_calls(original)
    model = ReplayModel(recorded=calls, model_name=str(calls[0].get("model") or "replay")) if calls else None
    if model is None:
        settings = settings.model_copy(update={"llm": settings.llm.model_copy(update={"provider": "none"})})
    claim = str(original.get("question") or "")
    with Session(settings, chat_model=model, **session) as opened:
        result = check_claim(
            opened, claim, paper_ids=original.get("allowed"), allowed_papers=original.get("restricted_to")
        )
    replayed = load_trace(result.trace_path)
    diff = diff_traces(original, replayed)
    mismatches = list(model.mismatches) if model else []
    unused = model.unused if model else 0
    same_rankings = all(r.same for r in diff.rankings) and diff.pool.same and diff.final_papers.same
    first = f"model call {mismatches[0].position}: {mismatches[0].difference}" if mismatches else None
    return ReplayReport(
        trace_id=original.get("trace_id"), replay_trace_id=replayed.get("trace_id"), question=claim,
        reproduced=diff.identical and not mismatches and not unused,
        same_answer=diff.answer.same and diff.sufficient.same, same_citations=diff.citations.same,
        same_rankings=same_rankings and diff.subqueries.same,
        first_difference=first or diff.first_difference, model_calls_recorded=len(calls),
        model_calls_replayed=model.calls if model else 0, mismatches=mismatches,
        notes=[f"{unused} recorded model calls were not made in the replay"] if unused else [], diff=diff,
    )  # fmt: skip
