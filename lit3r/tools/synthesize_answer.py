"""``synthesize_answer``: write the answer from the final papers' pooled passages, then verify its claims.

The reader gets the best pooled chunks (``reader_chunks`` of each) of the final papers (at most ``reader_papers``
papers), with the table chunk a chosen chunk names ("Table 1 gives ...") added after it, and every table of
the papers read when the question asks for an extreme
(:func:`lit3r.reading.tables.referenced_tables`), unless the gate says the evidence is insufficient: then it
abstains. Its answer's citations are validated and repaired against the corpus (a ``read`` step), then every
claim is judged against the chunks it cites (a ``verify`` step, when a judge is configured): unsupported
sentences are removed or marked as ``settings.grounding`` says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lit3r.answers import repair_citations, validate_answer
from lit3r.grounding.judge import Judge, JudgeError
from lit3r.grounding.judges.exact import ExactJudge
from lit3r.grounding.verify import verify_answer
from lit3r.models import Answer
from lit3r.reading.counted import counting_chunks
from lit3r.reading.tables import referenced_tables
from lit3r.retrieval import fusion
from lit3r.retrieval.gate import passes
from lit3r.tools.context import ToolContext


def judge_for(tools: ToolContext, answer: Answer) -> Judge | None:
    """The judge of an answer: the exact check for text the extractive reader wrote (itself or as the LLM reader's
    fallback: its promise is verbatim quotes), else the configured judge."""
    if tools.judge is None:
        return None
    extractive = tools.reader.name == "extractive" or any(f.stage == "read" for f in answer.fallback_steps)
    return ExactJudge() if extractive else tools.judge


def verified(tools: ToolContext, answer: Answer) -> Answer:
    """The answer after claim verification (a ``verify`` trace event with every verdict); as is without a judge.

    A judge that fails (its model call) leaves the answer unverified; the error is in the event.
    """
    judge = judge_for(tools, answer)
    if judge is None or not answer.sufficient:
        return answer
    settings = tools.settings.grounding
    chunks = tools.index.chunk_by_id

    def text_of(chunk_id: str) -> str | None:
        return chunks[chunk_id].text if chunk_id in chunks else None

    with tools.recorder.step("verify", "verify_claims") as data:
        data.update(summary="", judge=judge.name, threshold=getattr(judge, "threshold", None))
        data.update(unsupported=settings.unsupported, min_overlap=settings.min_overlap)
        try:
            checked, verdicts = verify_answer(answer, text_of, judge, settings.unsupported, settings.min_overlap)
        except JudgeError as exc:
            data.update(summary="not verified: the judge failed", error=str(exc), claims=[])
            return answer
        supported = sum(v["supported"] for v in verdicts)
        acted = sum(v["action"] != "kept" for v in verdicts)
        verb = "removed" if settings.unsupported == "remove" else "marked"
        data["summary"] = f"{supported}/{len(verdicts)} claims supported; {acted} {verb}"
        data.update(claims=verdicts, supported_fraction=checked.supported_fraction, sufficient=checked.sufficient)
    return checked.model_copy(update={"verified_by": judge.name})


def synthesize_answer(
    tools: ToolContext,
    question: str,
    pool: Mapping[str, float],
    final_papers: Sequence[tuple[str, float]] | None,
    best_score: float | None,
    options: Sequence[str] | None = None,
    rounds: int = 0,
) -> Answer:
    """The verified answer, citing the final papers' pooled chunks (Ranking A's papers without ``final_papers``)."""
    index = tools.index
    paper_of = {c: index.chunk_by_id[c].paper_id for c in pool}
    papers = [p for p, _s in final_papers or fusion.rank_papers_by_max(pool, paper_of)]
    retriever = tools.settings.retriever
    grouped = dict(fusion.top_chunks_per_paper(pool, paper_of, papers=len(pool), per_paper=retriever.reader_chunks))
    read = [p for p in papers if grouped.get(p)][: retriever.reader_papers]
    pooled = [index.chunk_by_id[c] for p in read for c in grouped[p]]
    evidence = counting_chunks(
        referenced_tables(pooled, index.chunks_by_paper, question), index.chunks_by_paper, question
    )
    sufficient = bool(evidence) and passes(best_score, tools.gate)
    with tools.recorder.step("read", tools.reader.name) as data:
        data.update(evidence=[c.id for c in evidence], sufficient=sufficient, best_score=best_score)
        answer = tools.reader(question, evidence, options, sufficient)
        data["problems"] = validate_answer(answer, index.chunk_by_id.get, options)
        answer = repair_citations(answer, index.chunk_by_id.get)
        data["citations"] = [c.chunk_id for c in answer.citations]
    answer = verified(tools, answer)
    return answer.model_copy(update={"candidate_papers": papers, "rounds": rounds})
