"""Which unit a free-form answer of the offline reader quotes, when a learned model chooses it.

* :func:`chosen_by_model`: the rule path's choice (the default): the selector's unit model
  (:mod:`lit3r.reading.selector`) ranks the units the rules allow, and its first is quoted when it prefers it to
  the lexical scorer's by :data:`CHOICE_MARGIN`.
* :func:`selected_answer`: the opt-in selector path (``extractive_answer(selector=...)``): the unit model chooses
  and its answerability model decides whether to answer at all.
"""

from __future__ import annotations

from collections.abc import Callable

from lit3r.answers.question import answer_form
from lit3r.answers.validate import insufficient_answer
from lit3r.models import Answer
from lit3r.reading.assurance import MIN_COVERAGE, coverage, kind_supplied
from lit3r.reading.quotes import Candidate, render
from lit3r.reading.scoring import lexical_scores
from lit3r.reading.selector import SelectorModel, kept_units


def selected_answer(
    question: str,
    pool: list[Candidate],
    lexical: list[float],
    selector: SelectorModel,
    min_coverage: float = MIN_COVERAGE,
) -> Answer:
    """The answer the learned selector (:mod:`lit3r.reading.selector`) makes of the evidence units.

    It abstains when the evidence is silent about the question (:func:`coverage` below ``min_coverage``, as the
    rules do) or when the answerability model says the evidence does not answer it; otherwise it
    quotes the unit the unit model ranks first (the most probable to be one of the answering units), then at most
    two more whose probability is within the model's ``keep_ratio`` of it, best first. The answer's confidence is
    the answerability probability.
    """
    rows, predicted = selector.unit_scores(question, pool, lexical)
    answerable = selector.answerability(question, rows, predicted)
    silent = coverage(question, list(zip(pool, lexical, strict=True))) < min_coverage
    if silent or answerable < selector.abstain_below:
        return insufficient_answer(question).model_copy(update={"confidence": round(answerable, 4)})
    keep = kept_units(predicted, selector.keep_ratio)
    answer = render(question, [pool[i] for i in keep])
    passage = " ".join(dict.fromkeys(pool[i].chunk.text for i in keep))
    supplied = kind_supplied(answer_form(question), answer, passage=passage)
    return answer.model_copy(update={"confidence": round(answerable, 4), "answers_question": supplied})


CHOICE_MARGIN = 0.1
"""The selector's unit model overrides the lexical scorer's choice only when it gives another unit a probability
at least this share above the lexical choice's (:func:`chosen_by_model`): where the two nearly agree (the model's
probabilities are flat on a question unlike its training questions), the lexical choice stands. Measured on
QASPER (the reader replayed, each half of the papers read by a model trained on the other) and the demo's questions
(docs/BENCHMARKS.md): 0 leaves one demo question answered by a sentence that does not answer it, 0.1 none, at
0.001 of QASPER's Answer F1; larger margins lose more on QASPER."""


def lexical_based(scorer: Callable[[str, list[str]], list[float]]) -> bool:
    """Whether ``scorer`` is the lexical scorer, or :func:`~lit3r.reading.extractive.holding` of it: the scores the
    unit model was trained on."""
    while scorer is not lexical_scores and hasattr(scorer, "__wrapped__"):
        scorer = scorer.__wrapped__
    return scorer is lexical_scores


def chosen_by_model(
    question: str,
    pool: list[Candidate],
    lexical: list[float],
    eligible: list[tuple[Candidate, float]],
    model: SelectorModel,
    min_score: float,
) -> list[tuple[Candidate, float]] | None:
    """The ``eligible`` units the selector's unit model may choose from, scored by it; ``None``: the lexical
    choice stands.

    The unit model reads every unit of the ``pool`` with its ``lexical`` score (the features it was trained on: a
    unit's score relative to the best, what it adds to the question, its section, ...) and gives the probability
    that the unit is one of the units that answer. It was trained on QASPER, choosing among the prose of one
    paper, and chooses so here: among the units scoring above ``min_score`` of the paper the lexical scorer's best
    unit is from (the rules, the paper's title among them, choose the paper), and never a table row (QASPER's tables
    are captions without cells: when the lexical best is a row, it stands).
    """
    passing = [(c, s) for c, s in eligible if s > min_score]
    if not passing:
        return None
    best = max(passing, key=lambda cs: cs[1])[0]
    if best.unit.context:
        return None
    allowed = [c for c, _ in passing if c.chunk.paper_id == best.chunk.paper_id and not c.unit.context]
    _, predicted = model.unit_scores(question, pool, lexical)
    probability = {id(c): float(p) for c, p in zip(pool, predicted, strict=True)}
    if max(probability[id(c)] for c in allowed) < (1.0 + CHOICE_MARGIN) * probability[id(best)]:
        return None
    return [(c, probability[id(c)]) for c in allowed]
