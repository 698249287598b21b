"""``lit3r eval scifact``: the claim check on SciFact (ScholarQABench's 208 claims, 182 abstracts).

Two settings:

* gold: each claim against its gold abstract. The offline verdict is judged by models trained without that
  abstract (folds by paper, :func:`lit3r.evals.stance_training.paper_fold`): a claim counts as predicted true when
  the verdict is "supports" (or, for "mixed" / "not addressed", when P(supports) >= 0.5). Reported: accuracy, the
  verdicts, and the share of claims whose deciding sentence was quoted (from the gold abstract, the only passage).
  The packaged model's in-sample accuracy is printed beside, marked so.
* open: all 182 abstracts are the corpus; each claim is checked with :func:`lit3r.app.check.check_claim`
  (retrieval, then a verdict per paper). Reported: the share of claims whose gold abstract is among the papers
  with a verdict, the share whose first paper is the gold one, and the accuracy of the gold paper's verdict.

Published figures on this set (accuracy, from the task that asked for this evaluation): majority class 65.9,
OpenScholar-8B 76.4.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lit3r.evals.stance_data import LabelledClaim, load_scifact
from lit3r.evals.stance_training import Examples, paper_fold
from lit3r.grounding.stance import OfflineStance, PaperVerdict, Passage

PUBLISHED = {"majority class": 65.9, "OpenScholar-8B": 76.4}
PUBLISHED_SOURCE = "ScholarQABench SciFact accuracy as quoted in lit3r's claim-check task"


def predicted_true(verdict: PaperVerdict | str, support: float = 0.5) -> bool:
    """A verdict as SciFact's true/false."""
    label = verdict if isinstance(verdict, str) else verdict.verdict
    if label in ("supports", "contradicts"):
        return label == "supports"
    return (verdict.support if isinstance(verdict, PaperVerdict) else support) >= 0.5


def held_out_judges(claims: Sequence[LabelledClaim], folds: int = 5) -> dict[str, OfflineStance]:
    """For each claim's paper, the offline verdict fitted without that paper's fold: the fallback an LLM verdict
    is scored with, so that a claim the LLM leaves undecided is not judged by a model trained on it (the
    packaged model was trained on every claim of the file)."""
    examples = Examples(claims, [])
    fold_of = np.array([paper_fold(c.paper_id, folds) for c in claims])
    rel_fold = np.array([paper_fold(c.paper_id, folds) for c in examples.rel_claims])
    judges = {k: OfflineStance(examples.fit(fold_of != k, rel_fold != k)) for k in range(folds)}
    return {c.paper_id: judges[paper_fold(c.paper_id, folds)] for c in claims}


def gold_setting(
    claims: Sequence[LabelledClaim], folds: int = 5, judges: Mapping[str, OfflineStance] | None = None
) -> dict:
    """Held-out accuracy of the offline verdict against each claim's gold abstract (see the module docstring);
    ``judges``: the held-out judges by paper (:func:`held_out_judges`), when the caller has them already."""
    judges = judges if judges is not None else held_out_judges(claims, folds)
    verdicts = [judges[c.paper_id].judge(c.claim, [Passage(c.paper_id, c.text)]) for c in claims]
    shipped = OfflineStance()
    in_sample = [shipped.judge(c.claim, [Passage(c.paper_id, c.text)]) for c in claims]
    right = [predicted_true(v) == c.supports for v, c in zip(verdicts, claims, strict=True)]
    return {
        "claims": len(claims),
        "folds": folds,
        "right": right,
        "accuracy": round(float(np.mean(right)), 4),
        "verdicts": dict(Counter(v.verdict for v in verdicts)),
        "deciding_sentence_in_gold": round(float(np.mean([bool(v.quotes) for v in verdicts])), 4),
        "majority_accuracy": round(
            max(np.mean([c.supports for c in claims]), 1 - np.mean([c.supports for c in claims])), 4
        ),
        "packaged_model_in_sample_accuracy": round(
            float(np.mean([predicted_true(v) == c.supports for v, c in zip(in_sample, claims, strict=True)])), 4
        ),
    }


def gold_setting_with(
    make_judge: Callable[[LabelledClaim], Any],
    claims: Sequence[LabelledClaim],
    progress: Callable[[], None] | None = None,
) -> dict:
    """Accuracy of a judge built by ``make_judge`` for each claim (e.g. the LLM verdict with its own budget and a
    held-out fallback, :func:`held_out_judges`) on each claim against its gold abstract; nothing is trained here,
    so there are no folds. ``by_llm`` counts the verdicts the judge decided itself and how many were right (the
    rest fell back to the offline verdict)."""
    verdicts, seconds = [], []
    for claim in claims:
        started = time.perf_counter()
        verdicts.append(make_judge(claim).judge(claim.claim, [Passage(claim.paper_id, claim.text)]))
        seconds.append(time.perf_counter() - started)
        if progress:
            progress()
    right = [predicted_true(v) == c.supports for v, c in zip(verdicts, claims, strict=True)]
    return {
        "claims": len(claims),
        "accuracy": round(float(np.mean(right)), 4) if right else None,
        "verdicts": dict(Counter(v.verdict for v in verdicts)),
        "deciding_sentence_in_gold": round(float(np.mean([bool(v.quotes) for v in verdicts])), 4) if right else None,
        "seconds_median": round(float(np.median(seconds)), 2) if seconds else None,
        "by_llm": {
            "claims": sum(v.by == "llm" for v in verdicts),
            "right": sum(r for v, r in zip(verdicts, right, strict=True) if v.by == "llm"),
        },
        "rows": [
            {
                "claim": c.claim,
                "paper_id": c.paper_id,
                "gold": c.supports,
                "verdict": v.verdict,
                "right": r,
                "confidence": round(float(v.confidence), 4),
                "support": round(float(v.support), 4),
                "by": v.by,
                "reason": v.reason,
            }  # fmt: skip
            for c, v, r in zip(claims, verdicts, right, strict=True)
        ],
    }


def beside_offline(gold: dict, judged: dict, every: int, offset: int = 0) -> dict:
    """The held-out offline verdict (``gold``, :func:`gold_setting` over all claims) on the claims the LLM judged
    (``judged``, every ``every``-th claim from the ``offset``-th): its accuracy there, and on how many claims both,
    only one, or neither is right (what an ensemble of the two could gain)."""
    offline = gold["right"][offset::every]
    llm = [row["right"] for row in judged["rows"]]
    if len(offline) != len(llm):
        raise ValueError(f"the LLM judged {len(llm)} claims; one in {every} of the offline run is {len(offline)}")
    pairs = list(zip(offline, llm, strict=True))
    return {
        "accuracy": round(float(np.mean(offline)), 4) if offline else None,
        "both_right": sum(o and m for o, m in pairs),
        "only_llm_right": sum(m and not o for o, m in pairs),
        "only_offline_right": sum(o and not m for o, m in pairs),
        "neither": sum(not o and not m for o, m in pairs),
    }


def corpus_records(claims: Sequence[LabelledClaim], path: Path) -> Path:
    """The distinct gold abstracts as a JSON-lines file of paper records (what ``lit3r ingest`` reads)."""
    papers = {c.paper_id: c for c in claims}
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for pid, c in sorted(papers.items()):
            out.write(json.dumps({"id": pid, "title": c.title, "abstract": c.text}, ensure_ascii=False) + "\n")
    return path


def open_setting(session, claims: Sequence[LabelledClaim], progress: Callable[[], None] | None = None) -> dict:
    """Each claim checked over the whole corpus of abstracts (``session`` is opened over it)."""
    from lit3r.app.check import check_claim

    found, first, right, rows = [], [], [], []
    for claim in claims:
        result = check_claim(session, claim.claim)
        with_verdict = [p for p in result.papers if p.verdict != "not_addressed"]
        gold = next((p for p in with_verdict if p.paper_id == claim.paper_id), None)
        found.append(gold is not None)
        first.append(bool(with_verdict) and with_verdict[0].paper_id == claim.paper_id)
        if gold is not None:
            right.append((gold.verdict == "supports") == claim.supports)
        rows.append({"claim": claim.claim, "gold": claim.paper_id, "papers_with_verdict": len(with_verdict),
                     "gold_verdict": gold.verdict if gold else None, "trace": result.trace_path})  # fmt: skip
        if progress:
            progress()
    return {
        "claims": len(claims),
        "gold_among_papers_with_verdict": round(float(np.mean(found)), 4),
        "gold_first": round(float(np.mean(first)), 4),
        "accuracy_of_gold_verdict_when_found": round(float(np.mean(right)), 4) if right else None,
        "accuracy_open": round(float(np.sum(right) / len(claims)), 4),
        "mean_papers_with_verdict": round(float(np.mean([r["papers_with_verdict"] for r in rows])), 2),
        "rows": rows,
    }


def report_lines(report: dict) -> list[str]:
    """The report as text, the published figures beside."""
    lines = []
    if gold := report.get("gold"):
        lines.append(
            f"gold abstract ({gold['claims']} claims, offline, {gold['folds']}-fold by paper): accuracy "
            f"{gold['accuracy']:.3f}; verdicts {gold['verdicts']}; deciding sentence quoted from the gold abstract "
            f"{gold['deciding_sentence_in_gold']:.3f}; packaged model in-sample "
            f"{gold['packaged_model_in_sample_accuracy']:.3f}"
        )
    if judged := report.get("gold_llm"):
        lines.append(
            f"gold abstract, LLM verdict ({judged['claims']} claims, every {judged.get('every', 1)} from claim "
            f"{judged.get('offset', 0)}): accuracy "
            f"{judged['accuracy']}; verdicts {judged['verdicts']}; median {judged['seconds_median']} s a claim"
        )
        if mine := judged.get("by_llm"):
            lines.append(
                f"  decided by the LLM: {mine['claims']} (right {mine['right']}); the rest fell back to the offline "
                "verdict fitted without the claim's paper"
            )
        if beside := judged.get("offline_on_these"):
            lines.append(
                f"  the offline verdict on the same claims: accuracy {beside['accuracy']}; both right "
                f"{beside['both_right']}, only the LLM {beside['only_llm_right']}, only offline "
                f"{beside['only_offline_right']}, neither {beside['neither']}"
            )
    if opened := report.get("open"):
        lines.append(
            f"open ({opened['claims']} claims over the {report.get('papers', '?')} abstracts): gold among papers "
            "with a "
            f"verdict {opened['gold_among_papers_with_verdict']:.3f}, gold first {opened['gold_first']:.3f}, "
            f"accuracy of the gold verdict {opened['accuracy_of_gold_verdict_when_found']}, papers with a verdict "
            f"per claim {opened['mean_papers_with_verdict']}"
        )
    published = ", ".join(f"{k} {v}" for k, v in PUBLISHED.items())
    lines.append(f"published accuracy on this set: {published} ({PUBLISHED_SOURCE})")
    return lines


def load(path: Path) -> list[LabelledClaim]:
    return load_scifact(path)
