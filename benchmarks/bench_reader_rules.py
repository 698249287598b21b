"""The offline reader's rules, one at a time, replayed on the evidence an evaluation run gave the reader.

Run from the repository root, after ``lit3r eval qasper DATA --answers [--in-paper]`` has written its traces
(``<home>/evals/<hash>/traces/``; move each run's traces to a folder of its own)::

    python benchmarks/bench_reader_rules.py DATA --traces bench-out/traces-in-paper \
        --run-predictions bench-out/pred-in.jsonl --out bench-out/rules-in.json

Every trace's ``read`` step names the chunks the agent gave the reader and whether the gate let it read.
The traces are matched, in time order, to the run's questions (file order, as ``eval qasper`` answers
them; a question text that differs is an error; a run stopped early gives its first questions). Each
reader variant answers every question from those chunks exactly as the agent does after retrieval
(reader, citation repair, claim verification with the exact judge, which drops an unsupported
sentence), and the predictions are scored with the official QASPER rules. With ``--run-predictions``
the replayed baseline is compared with the run's own predictions (they should all be identical: the
replay is the agent's reader stage, not an approximation of it).

Papers are split into two halves by a hash of their id (``sha256(paper_id)``, first byte even or odd).
Each family in :data:`FAMILIES` varies one rule; for each half the member with the best Answer F1 on
the *other* half is scored on this one, so a choice is never scored on the questions it was chosen on.
Retrieval is not rerun, so the figures isolate the reader. The unit model that chooses the quoted unit
(:mod:`lit3r.reading.selector`) is trained on the same shared questions, so every variant reads each half's
questions with the unit model trained on the other half (:func:`half_choosers`) unless it says otherwise.
``--family NAME`` (repeatable) replays only the named families of :data:`FAMILIES` (e.g. ``--family "count of
what is asked"``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lit3r.answers import insufficient_answer, repair_citations
from lit3r.answers.question import answer_form
from lit3r.corpus.store import CorpusStore
from lit3r.evals import qasper_score, selector_training
from lit3r.evals.answers import CachedPapers, answer_text, evidence_paragraphs, gold_subset
from lit3r.evals.qasper import QasperQuestion, load_questions
from lit3r.grounding.judges import ExactJudge
from lit3r.grounding.verify import verify_answer
from lit3r.index.corpus_index import CorpusIndex
from lit3r.models import Answer, Chunk
from lit3r.reading import extractive_answer, forms, scoring, unmentioned
from lit3r.reading.abstracts import with_abstracts
from lit3r.reading.assurance import MIN_PAPER_COVERAGE, papers_coverage
from lit3r.reading.counted import counting_chunks
from lit3r.reading.extractive import body_first
from lit3r.reading.quotes import candidates
from lit3r.reading.scoring import lexical_scores, query_terms, terms
from lit3r.reading.selector import SelectorModel, load_selector
from lit3r.settings import load_settings


@dataclass(frozen=True)
class Replay:
    """One question as the reader saw it in the run."""

    question: QasperQuestion
    evidence: list[Chunk]
    sufficient: bool
    """The gate's verdict (and evidence found), before the papers' coverage (:data:`Variant.min_paper_coverage`)."""
    completed: list[Chunk]
    """The evidence as the agent now completes it (:func:`lit3r.reading.counted.counting_chunks`,
    :func:`lit3r.reading.abstracts.with_abstracts`)."""
    papers_coverage: float
    """:func:`lit3r.reading.assurance.papers_coverage` of the question in the papers of the evidence."""
    papers_chunks: list[Chunk] = field(default_factory=list)
    """Every chunk of the papers of the evidence (where :func:`lit3r.reading.unmentioned.unmentioned_words` looks)."""


@dataclass(frozen=True)
class Variant:
    """A reader configuration: keyword arguments of :func:`extractive_answer`, forms it answers as other forms,
    and the quote of a yes/no answer (:data:`lit3r.reading.forms.POLAR_QUOTE`)."""

    name: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    recast: tuple[tuple[str, str], ...] = ()
    """Forms answered as another form: ``(("quantity", "span"),)`` reads number questions as span questions."""
    polar_quote: str = forms.POLAR_QUOTE
    abstain_below: float = 0.0
    """Abstain when the quoted unit's question-term coverage (:func:`coverage`) is below this (0: never)."""
    count_bonus: float | None = None
    """:data:`lit3r.reading.scoring.COUNT_BONUS` for this variant (``None``: the shipped value)."""
    completed: bool = True
    """Read the evidence as the agent completes it now (``Replay.completed``); ``False``: as the trace has it."""
    abstain_without_quantity: bool = False
    """A quantity question whose quotes state no quantity abstains (the reader's ``quantity_required`` also asks a
    "how many N" answer to count N)."""
    min_paper_coverage: float = MIN_PAPER_COVERAGE
    """The agent abstains when the papers read hold less of the question than this (0: never)."""
    unit_floor_below: float = 2.0
    """The reader's unit floor (``min_coverage``) applies only where the papers' coverage is below this."""
    closed_world: float | None = unmentioned.MAX_ZIPF
    """A yes/no question naming a technical word (rarer than this Zipf frequency) that no chunk of the papers read
    mentions is answered "No" (:func:`lit3r.reading.unmentioned.closed_world_answer`); ``None``: never."""
    chooser: str = "other half"
    """The unit model choosing the quoted unit (the reader's ``chooser``): ``"other half"`` (trained on the other
    half of the papers, from these traces, so no question is read by a model trained on it), ``"packaged"`` (the
    shipped model, trained on every question of the shared file: in-sample there) or ``"lexical"`` (none)."""

    def but(self, name: str, **changes: Any) -> Variant:
        """This variant with some fields changed (``kwargs`` merged)."""
        kwargs = {**self.kwargs, **changes.pop("kwargs", {})}
        return replace(self, name=name, kwargs=kwargs, **changes)


SHIPPED_COUNT_BONUS = scoring.COUNT_BONUS


def half(paper_id: str) -> int:
    """0 or 1: the half of the papers this paper falls in."""
    return hashlib.sha256(paper_id.encode()).digest()[0] % 2


def read_step(trace: Mapping[str, Any]) -> Mapping[str, Any]:
    """The data of the trace's (last) ``read`` step."""
    steps = [e for e in trace.get("events") or [] if e.get("name") == "read" or e.get("type") == "read"]
    if not steps:
        raise ValueError(f"trace {trace.get('id')} has no read step")
    return steps[-1].get("data") or {}


def load_replays(data: Path, traces: Path, index: CorpusIndex) -> list[Replay]:
    """The run's questions with the evidence their traces name (see the module docstring)."""
    questions = [q for q in load_questions(data) if q.paper_id in index.papers and q.annotations]
    documents = [json.loads(p.read_text(encoding="utf-8")) for p in traces.glob("*.json")]
    documents.sort(key=lambda d: min(e["started_at"] for e in d["events"]))
    if len(documents) > len(questions):
        raise SystemExit(f"{traces}: {len(documents)} traces for {len(questions)} questions")
    questions = questions[: len(documents)]  # a run stopped early answered the first questions, in file order
    replays = []
    for question, trace in zip(questions, documents, strict=True):
        if " ".join(question.text.split()) != trace.get("question"):
            raise SystemExit(
                f"{traces}: trace {trace.get('id')} is for {trace.get('question')!r}, not {question.text!r}"
            )
        step = read_step(trace)
        evidence = [index.chunk_by_id[c] for c in step.get("evidence") or []]
        asked = " ".join(question.text.split())
        completed = with_abstracts(
            counting_chunks(evidence, index.chunks_by_paper, asked), index.chunks_by_paper, asked
        )
        papers = list(dict.fromkeys(c.paper_id for c in evidence))
        gate = bool(step.get("gate", step.get("sufficient")))  # a trace before the papers' coverage: sufficient
        chunks = [c for p in papers for c in index.chunks_by_paper.get(p, ())]
        replays.append(Replay(question, evidence, gate, completed, papers_coverage(asked, index, papers), chunks))
    return replays


def answer(
    replay: Replay,
    variant: Variant,
    lookup: Callable[[str], Chunk | None],
    choosers: Mapping[int, SelectorModel] | None = None,
) -> Answer:
    """The reader's answer after citation repair and claim verification, as the agent returns it.

    ``choosers``: the unit model trained on each half's papers (:func:`half_choosers`), for ``"other half"``."""
    question = " ".join(replay.question.text.split())
    kwargs = dict(variant.kwargs)
    if "chooser" not in kwargs and variant.chooser != "packaged":
        if variant.chooser == "other half" and choosers is None:
            raise ValueError(f"{variant.name}: a model trained on the other half is needed (half_choosers)")
        kwargs["chooser"] = None if variant.chooser == "lexical" else choosers[half(replay.question.paper_id)]
    recast = dict(variant.recast).get(answer_form(question))
    if recast and kwargs.get("form", "auto") == "auto":
        kwargs["form"] = recast
    forms.POLAR_QUOTE = variant.polar_quote
    scoring.COUNT_BONUS = SHIPPED_COUNT_BONUS if variant.count_bonus is None else variant.count_bonus
    evidence = replay.completed if variant.completed else replay.evidence
    sufficient = replay.sufficient and replay.papers_coverage >= variant.min_paper_coverage
    if replay.papers_coverage >= variant.unit_floor_below:
        kwargs["min_coverage"] = 0.0
    found = None
    if variant.closed_world is not None and sufficient:
        unmentioned.MAX_ZIPF = variant.closed_world
        absent = unmentioned.unmentioned_words(question, replay.papers_chunks)
        found = unmentioned.closed_world_answer(question, evidence, absent) if absent else None
    found = found or extractive_answer(question, evidence, sufficient=sufficient, **kwargs)
    if variant.abstain_below and found.sufficient and coverage(question, evidence) < variant.abstain_below:
        found = insufficient_answer(question)
    if variant.abstain_without_quantity and found.sufficient and not quotes_state_quantity(question, found):
        found = insufficient_answer(question)
    found = repair_citations(found, lookup)
    verified, _ = verify_answer(found, lambda c: (lookup(c) or Chunk.model_construct(text=None)).text, ExactJudge())
    return verified


def half_choosers(data: Path, traces: Path) -> dict[int, SelectorModel]:
    """For each half of the papers, the selector's unit model trained (as ``lit3r.evals.selector_training``
    trains it) on the questions of the other half, with the evidence these traces name."""
    examples = selector_training.examples([data], 3, traces)
    out = {}
    for h in (0, 1):
        unit = selector_training.fit_unit([e for e in examples if half(e.question.paper_id) != h], alpha=10.0)
        out[h] = SelectorModel(unit, load_selector().answerable, 0.0, 1.01, trained_on=f"papers not in half {h}")
    return out


def quotes_state_quantity(question: str, found: Answer) -> bool:
    """Whether ``found``'s quotes state a quantity, for a quantity question (any other question: ``True``)."""
    return answer_form(question) != "quantity" or scoring.states_quantity(" ".join(c.quote for c in found.citations))


def coverage(question: str, evidence: Sequence[Chunk]) -> float:
    """The share of the question's terms, weighted by BM25 idf over the evidence units, in the best-scoring unit.

    A term the evidence never mentions gets the largest weight (``df = 0``). 1.0 when the question has no terms.
    """
    pool = candidates(evidence)
    query = query_terms(question)
    if not pool or not query:
        return 1.0 if not query else 0.0
    scored = body_first(list(zip(pool, lexical_scores(question, [c.scoring_text for c in pool]), strict=True)), 0.0)
    pool = [c for c, _ in scored]
    unit_terms = terms([c.text for c in pool])
    best = unit_terms[max(range(len(pool)), key=lambda i: (scored[i][1], -i))]
    df = Counter(t for ts in unit_terms for t in set(ts) & query)
    weight = {t: math.log(1.0 + (len(pool) - df[t] + 0.5) / (df[t] + 0.5)) for t in query}
    return sum(w for t, w in weight.items() if t in best) / sum(weight.values())


def score(
    replays: Sequence[Replay], answers: Sequence[Answer], gold: Mapping[str, Any], papers: CachedPapers
) -> dict[str, Any]:
    """Official QASPER scores of the answers, plus abstention on the unanswerable questions
    (:func:`lit3r.evals.qasper_score.abstention_scores`: precision, recall and F1 where some annotator calls a
    question unanswerable, and where every annotator does)."""
    predictions = {
        r.question.id: {"predicted_answer": answer_text(a), "predicted_evidence": evidence_paragraphs(a, papers)}
        for r, a in zip(replays, answers, strict=True)
    }
    subset = gold_subset(gold, predictions)
    scores = qasper_score.score_predictions(subset, predictions)
    abstention = qasper_score.abstention_scores(subset, predictions)
    some, every = abstention["some_annotator"], abstention["every_annotator"]
    return {
        "answer_f1": round(scores["answer_f1"], 4),
        "answer_f1_by_type": {k: round(v, 4) for k, v in scores["answer_f1_by_type"].items()},
        "questions_by_type": scores["questions_by_type"],
        "evidence_f1": round(scores["evidence_f1"], 4),
        "questions": scores["questions"],
        "abstained": some["abstained"],
        "abstention_precision": some["precision"],
        "abstention_recall": some["recall"],
        "abstention_f1": some["f1"],
        "every_annotator_unanswerable": {
            "questions": every["questions"],
            "abstention_precision": every["precision"],
            "abstention_recall": every["recall"],
            "abstention_f1": every["f1"],
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the QASPER file the run evaluated")
    parser.add_argument("--traces", type=Path, required=True, help="the run's trace folder")
    parser.add_argument("--home", type=Path, default=Path(".lit3r"), help="the --home of the run")
    parser.add_argument("--out", type=Path, help="write the JSON report here as well")
    parser.add_argument(
        "--run-predictions", type=Path, help="the run's predictions file: check that the replayed baseline equals it"
    )
    parser.add_argument(
        "--family", action="append", choices=sorted(FAMILIES), help="replay only these families (default: all)"
    )
    args = parser.parse_args(argv)
    from lit3r.cli.evaluate import eval_settings

    settings = eval_settings(load_settings(home=args.home), args.data)
    index = CorpusIndex.open(settings)
    replays = load_replays(args.data, args.traces, index)
    gold = qasper_score.load_gold(args.data)
    lookup = index.chunk_by_id.get
    report: dict[str, Any] = {"data": str(args.data), "traces": str(args.traces), "questions": len(replays)}
    families = {name: FAMILIES[name] for name in args.family or FAMILIES}
    variants = {v.name: v for family in families.values() for v in family}.values()  # each once
    choosers = half_choosers(args.data, args.traces) if any(v.chooser == "other half" for v in variants) else None
    with CorpusStore(settings.home) as store:
        papers = CachedPapers(store.get)
        rows: dict[str, dict[str, Any]] = {}
        for variant in variants:
            answers = [answer(r, variant, lookup, choosers) for r in replays]
            row = {"all": score(replays, answers, gold, papers)}
            for h in (0, 1):
                chosen = [(r, a) for r, a in zip(replays, answers, strict=True) if half(r.question.paper_id) == h]
                row[f"half{h}"] = score([r for r, _ in chosen], [a for _, a in chosen], gold, papers)
            rows[variant.name] = row
            if variant is BASELINE and args.run_predictions:
                report["baseline_replay"] = same_as_run(replays, answers, papers, args.run_predictions)
            print(variant.name, json.dumps(row["all"]), file=sys.stderr)
    report["variants"] = rows
    report["cross_validation"] = {name: cross_validate(family, rows) for name, family in families.items()}
    text = json.dumps(report, indent=2)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


def same_as_run(
    replays: Sequence[Replay], answers: Sequence[Answer], papers: CachedPapers, run_predictions: Path
) -> dict[str, int]:
    """How many replayed baseline predictions equal the run's own, answer and evidence (it should be all)."""
    run = qasper_score.read_predictions(run_predictions)
    same = sum(
        run.get(r.question.id)
        == {"predicted_answer": answer_text(a), "predicted_evidence": evidence_paragraphs(a, papers)}
        for r, a in zip(replays, answers, strict=True)
    )
    return {"identical": same, "questions": len(replays)}


def cross_validate(family: Sequence[Variant], rows: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """For each half: the member with the best Answer F1 on the other half, and its Answer F1 on this half."""
    out: dict[str, Any] = {}
    for h in (0, 1):
        other = f"half{1 - h}"
        pick = max(family, key=lambda v: rows[v.name][other]["answer_f1"])
        out[f"half{h}"] = {
            "chosen_on_other_half": pick.name,
            "answer_f1": rows[pick.name][f"half{h}"]["answer_f1"],
            "members": {v.name: rows[v.name][f"half{h}"]["answer_f1"] for v in family},
        }
    return out


BASELINE = Variant(
    "baseline: 3 whole sentences",
    {"form": "sentence", "max_sentences": 3, "prefer_body": False, "quantity_required": False},
    chooser="lexical",
)
READER = Variant("reader as shipped (form=auto)", {})
"""The reader as shipped: the default arguments of :func:`extractive_answer` (one sentence since session 7)."""

BODY = {"max_sentences": 3, "prefer_body": True}
YES_NO = (("boolean", "boolean"), ("quantity", "sentence"), ("span", "sentence"))
NUMBERS = (("boolean", "boolean"), ("quantity", "quantity"), ("span", "sentence"))
SPANS = (("boolean", "boolean"), ("quantity", "span"), ("span", "span"))
ALL = (("boolean", "boolean"), ("quantity", "quantity"), ("span", "span"))

PAPERS_FLOORS = (
    (0.25, 0.0), (0.25, 0.2), (0.25, 0.1), (0.1, 0.2), (0.15, 0.2), (0.2, 0.2), (0.1, 0.15), (0.1, 0.25), (0.0, 0.2),
    (0.0, 0.3),
)  # fmt: skip
"""(unit floor, papers' floor) pairs of the family "the papers' coverage"."""

FAMILIES: dict[str, list[Variant]] = {
    "cumulative": [
        BASELINE,
        Variant("+ body before abstract", BODY, recast=(("boolean", "sentence"),)),
        Variant("+ body, yes/no", BODY, recast=YES_NO),
        Variant("+ body, yes/no, numbers", BODY, recast=NUMBERS),
        Variant("+ body, yes/no, numbers, spans", BODY, recast=ALL),
        READER,
    ],
    "sentences for other questions": [
        Variant(f"yes/no, {k} sentences", {**BODY, "max_sentences": k}, recast=YES_NO) for k in (1, 2, 3)
    ],
    "yes/no quote": [
        Variant(f"yes/no quoting the {q}", BODY, recast=YES_NO, polar_quote=q) for q in ("window", "clause", "sentence")
    ],
    "yes/no": [
        Variant("+ body, yes/no", BODY, recast=YES_NO),
        Variant("+ body before abstract", BODY, recast=(("boolean", "sentence"),)),
    ],
    "numbers": [
        Variant("+ body, yes/no", BODY, recast=YES_NO),
        Variant("+ body, yes/no, numbers", BODY, recast=NUMBERS),
    ],
    "spans": [
        Variant("+ body, yes/no", BODY, recast=YES_NO),
        Variant("yes/no, spans for what/which/number", BODY, recast=SPANS),
        Variant("+ body, yes/no, numbers, spans", BODY, recast=ALL),
    ],
    "body before abstract": [
        Variant("+ body, yes/no", BODY, recast=YES_NO),
        Variant("yes/no without body first", {**BODY, "prefer_body": False}, recast=YES_NO),
    ],
    "count of what is asked": [
        Variant(f"reader, count bonus {b:g}", {}, count_bonus=b) for b in (0.0, 1.0, 2.0, 3.0, 5.0)
    ],
    "counts beyond the evidence": [
        Variant("reader, the trace's evidence", {}, completed=False),
        Variant("reader, counting chunks added", {}),
    ],
    "a quantity asked and not supplied": [
        Variant("reader, answering without the quantity asked", {"quantity_required": False}),
        Variant("reader, abstaining without a quantity", {"quantity_required": False}, abstain_without_quantity=True),
        READER,
    ],
    "unit choice": [
        Variant("reader, the lexical scorer's best unit", {}, chooser="lexical"),
        Variant("reader, the unit model's (trained on the other half)", {}),
    ],
    "unit choice, in-sample": [
        Variant("reader, the packaged unit model (trained on these questions: in-sample)", {}, chooser="packaged"),
    ],
    "the papers' coverage": [
        Variant(f"reader, unit floor {u:g}, papers' floor {p:g}", {"min_coverage": u}, min_paper_coverage=p)
        for u, p in PAPERS_FLOORS
    ],
    "the unit floor where the papers hold little": [
        Variant(f"reader, papers' floor 0.2, unit floor 0.25 below papers' {b:g}", {}, unit_floor_below=b)
        for b in (0.5, 0.6, 0.7, 0.8, 0.9)
    ],
    "technical words no paper mentions": [
        Variant("reader, yes/no read off the best sentence only", {}, closed_world=None),
        *(
            Variant(f"reader, 'No' where no paper mentions a word below Zipf {z:g}", {}, closed_world=z)
            for z in (2.5, 3.0, 3.5)
        ),
    ],
    "coverage floor": [
        Variant(f"reader, coverage floor {t:g}", {"min_coverage": t}) for t in (0.0, 0.15, 0.25, 0.35, 0.45)
    ],
    "abstain on low coverage": [
        Variant("+ body, yes/no", BODY, recast=YES_NO),
        *(
            Variant(f"yes/no, abstaining below coverage {t}", BODY, recast=YES_NO, abstain_below=t)
            for t in (0.25, 0.5, 0.75)
        ),
    ],
}
"""Each family varies one rule; the cross-validation picks its member on one half and scores it on the other."""


if __name__ == "__main__":
    raise SystemExit(main())
