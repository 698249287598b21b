"""``synthesize_answer``: write the answer from the final papers' pooled passages, then verify its claims.

The reader gets the best pooled chunks (``reader_chunks`` of each) of the final papers (at most ``reader_papers``
papers), with the table chunk a chosen chunk names ("Table 1 gives ...") added after it, and every table of the papers
read when the question asks for an extreme (:func:`lit3r.reading.tables.referenced_tables`), and for a "how many N"
question whose evidence counts no N the papers' chunks that do (:func:`lit3r.reading.counted.counting_chunks`), and for
a question asking which languages whose evidence names none the papers' chunks that do
(:func:`lit3r.reading.languages.naming_chunks`), and for a question asking which paper says something the papers'
abstracts (:func:`lit3r.reading.abstracts.with_abstracts`), unless the gate says the evidence is insufficient or the
papers read do not hold the question's words (:func:`lit3r.reading.assurance.papers_coverage` below
:data:`~lit3r.reading.assurance.MIN_PAPER_COVERAGE`; not for a question with options, whose verdict the readers choose
from what the papers state, in words the question need not share): then it abstains. A question whether named
papers agree on a value ("Do the sparse retrieval and rank fusion papers agree on ...?") is answered by reading each
named paper on its own instead (:func:`lit3r.reading.agreement.agreement_answer`; a ``read`` step named
``agreement``). A yes/no question naming a technical thing that no paper read mentions ("Does their model use
MFCC?") is answered "No" by the offline reader, quoting what the best-matching sentence says instead, whichever
reader is configured (:func:`lit3r.reading.unmentioned.closed_world_answer`; a ``read`` step named ``unmentioned``
whose ``unmentioned`` lists the words). Any other question without options that names a thing no paper read
mentions ("Which optimizer was used to train AlphaGo?") is not read: it abstains, and the ``read`` step's ``unnamed``
and the answer's ``unmentioned`` list the names (:func:`lit3r.reading.unmentioned.unnamed`). A question asking
for an extreme that a table of the evidence holds ("Which BM25 configuration was best?", the table's header naming
what is asked) is answered by that row, computed from the table's numbers, whichever reader is configured
(:func:`lit3r.reading.extractive.table_answer`; a ``read`` step named ``table``): the 1.5B local model named
another row and quoted a third. Its answer's citations are validated and
repaired against the corpus (a ``read`` step), then every claim is judged against the chunks it cites (a ``verify``
step, when a judge is configured): unsupported sentences are removed or marked as ``settings.grounding`` says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lit3r.answers import repair_citations, validate_answer
from lit3r.grounding.judge import Judge, JudgeError
from lit3r.grounding.judges.exact import ExactJudge
from lit3r.grounding.verify import verify_answer
from lit3r.models import Answer
from lit3r.reading.abstracts import with_abstracts
from lit3r.reading.agreement import agreement_answer
from lit3r.reading.assurance import MIN_PAPER_COVERAGE, papers_coverage
from lit3r.reading.counted import counting_chunks
from lit3r.reading.extractive import table_answer
from lit3r.reading.languages import naming_chunks
from lit3r.reading.tables import referenced_tables
from lit3r.reading.unmentioned import closed_world_answer, unmentioned_words, unnamed
from lit3r.retrieval import fusion
from lit3r.retrieval.gate import passes
from lit3r.tools.context import ToolContext


def judge_for(tools: ToolContext, answer: Answer, quoted: bool = False) -> Judge | None:
    """The judge of an answer: the exact check for text the extractive reader wrote (itself, as the LLM reader's
    fallback, or for the papers compared, ``quoted``: its promise is verbatim quotes), else the configured judge."""
    if tools.judge is None:
        return None
    extractive = quoted or tools.reader.name == "extractive" or any(f.stage == "read" for f in answer.fallback_steps)
    return ExactJudge() if extractive else tools.judge


def verified(tools: ToolContext, answer: Answer, quoted: bool = False) -> Answer:
    """The answer after claim verification (a ``verify`` trace event with every verdict); as is without a judge.

    A judge that fails (its model call) leaves the answer unverified; the error is in the event. ``quoted``: the
    answer is made of verbatim quotes by lit3r itself (:func:`judge_for`).
    """
    judge = judge_for(tools, answer, quoted)
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


def compared_papers(tools: ToolContext, question: str, candidates: Sequence[str]) -> Answer | None:
    """The answer to "Do <papers> agree on <value>?" from each named paper read on its own
    (:func:`lit3r.reading.agreement.agreement_answer`), or None for any other question. The names are looked up
    among the ``candidates`` (the papers retrieval found, within any restriction of the question)."""
    return agreement_answer(question, titles_of(tools, candidates), tools.index.chunks_by_paper)


def unmentioned(tools: ToolContext, question: str, papers: Sequence[str]) -> list[str]:
    """The technical words of a yes/no question that no chunk of ``papers`` mentions
    (:func:`lit3r.reading.unmentioned.unmentioned_words`)."""
    chunks = tools.index.chunks_by_paper
    return unmentioned_words(question, [c for p in papers for c in chunks.get(p, ())])


def unnamed_in(tools: ToolContext, question: str, papers: Sequence[str]) -> list[str]:
    """The names a question asks about that neither a chunk nor the title of ``papers`` mentions
    (:func:`lit3r.reading.unmentioned.unnamed`)."""
    chunks = tools.index.chunks_by_paper
    return unnamed(question, [c for p in papers for c in chunks.get(p, ())], list(titles_of(tools, papers).values()))


def titles_of(tools: ToolContext, papers: Sequence[str]) -> dict[str, str]:
    """The titles of ``papers`` that have one, by paper id."""
    return {p: paper.title for p in papers if (paper := tools.index.papers.get(p)) and paper.title}


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
    evidence = with_abstracts(naming_chunks(evidence, index.chunks_by_paper, question), index.chunks_by_paper, question)
    gate = bool(evidence) and passes(best_score, tools.gate)
    covered = papers_coverage(question, index, read) if evidence else 0.0
    sufficient = gate and (bool(options) or covered >= MIN_PAPER_COVERAGE)  # options: the verdict is asked for
    compared = compared_papers(tools, question, papers) if sufficient and not options else None
    absent = unmentioned(tools, question, read) if sufficient and not options and not compared else []
    closed = closed_world_answer(question, evidence, absent, titles_of(tools, read)) if absent else None
    missing = unnamed_in(tools, question, read) if sufficient and not options and not compared and not closed else []
    sufficient = sufficient and not missing
    computed = (
        table_answer(question, evidence, titles_of(tools, list(dict.fromkeys(c.paper_id for c in evidence))))
        if sufficient and not options and not compared and not closed
        else None
    )
    name = "agreement" if compared else "unmentioned" if closed else "table" if computed else tools.reader.name
    with tools.recorder.step("read", name) as data:
        data.update(evidence=[c.id for c in evidence], sufficient=sufficient, best_score=best_score)
        data.update(gate=gate, papers_coverage=round(covered, 4))
        answer = compared or closed or computed or tools.reader(question, evidence, options, sufficient)
        if compared:
            data["compared"] = [c.paper_id for c in compared.citations]
        if closed:
            data["unmentioned"] = list(absent)
        if missing:
            data["unnamed"] = list(missing)
            answer = answer.model_copy(update={"unmentioned": list(missing)})
        data["problems"] = validate_answer(answer, index.chunk_by_id.get, options)
        answer = repair_citations(answer, index.chunk_by_id.get)
        data["citations"] = [c.chunk_id for c in answer.citations]
    answer = verified(tools, answer, quoted=any(a is not None for a in (compared, closed, computed)))
    return answer.model_copy(update={"candidate_papers": papers, "rounds": rounds})
