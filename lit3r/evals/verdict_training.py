"""Train the yes / no / maybe verdict model (:mod:`lit3r.reading.verdict`) on PubMedQA's training questions.

Run from the repository root::

    python -m lit3r.evals.verdict_training ../shared/data/pubmedqa --out lit3r/reading/verdict_model.json \\
        --scholarqabench ../shared/data/scholarqabench/pubmed_test.jsonl

The training questions are the 500 PQA-L questions whose ids are not in ``test_ground_truth.json``, in the
reasoning-required setting (the abstract's contexts without the conclusion). ``--scholarqabench`` adds the
questions of ScholarQABench's PubMedQA file that are neither PQA-L test questions nor PQA-L training questions
already (matched by question text and by the abstract's first context); the command prints how many of each it
dropped. The evidence of each question is what the reader is given when the whole agent answers it over its own
paper, as ``lit3r eval pubmedqa --setting own`` asks (``--evidence agent``, the default: the abstracts are
ingested and indexed under ``--home``, each question is asked, and the reader's evidence chunks are read from
its trace); ``--evidence abstract`` uses every context instead, in order (faster, but not what the reader sees).

The model is a multinomial logistic regression (scikit-learn, L2, lbfgs) on the standardised cue features and the
tf-idf bags of words of :mod:`lit3r.reading.verdict_features`; a bag's weight ``w`` scales its columns (its
regularisation is C times w squared). Every configuration of a small grid (C, word weight, class weights) is
cross-validated by paper (every PQA-L question is its own paper; folds by a hash of the id, repeated with
``--repeats`` seeds) and reported with accuracy and macro-F1 beside the majority class and the negation rule of
:func:`lit3r.reading.polarity.yes_or_no`. The configuration with the best mean accuracy is refitted on all the
questions; ``--nested`` also reports nested cross-validation, the estimate of choosing by cross-validation.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import itertools
import json
import re
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from lit3r.evals.pubmedqa import PubMedItem, load_pqal, load_scholarqabench, write_corpus
from lit3r.models import Chunk, Locator, chunk_id
from lit3r.reading.polarity import yes_or_no
from lit3r.reading.quotes import candidates
from lit3r.reading.scoring import lexical_scores
from lit3r.reading.verdict import VERDICTS, VerdictModel, WordPart, evidence_features, feature_names
from lit3r.reading.verdict_features import FIELD_NGRAMS, RESULT_SECTION, TermWeights

MIN_DF = 5
"""A word (or word pair) enters a bag when at least this many training questions have it in that field."""


@dataclass(frozen=True)
class Example:
    """One training question as the model reads it."""

    id: str
    label: str
    row: np.ndarray
    fields: dict[str, str]
    rule: str


@dataclass(frozen=True)
class Config:
    """One point of the grid: C, the bags' weight (0: cues only) and the class weights (none, or the square
    root of the balanced weights, which favours "maybe" without making it as frequent as the others)."""

    c: float
    word_weight: float
    class_weight: str


def item_chunks(item: PubMedItem) -> list[Chunk]:
    """One text chunk per context of the item's abstract, in order, its heading as the section (as ingested)."""
    return [
        Chunk(id=chunk_id(item.id, i + 1), paper_id=item.id, type="text", text=text, locator=Locator(section=heading))
        for i, (heading, text) in enumerate(item.sections)
    ]


def agent_evidence(items: Sequence[PubMedItem], home: Path) -> dict[str, list[Chunk]]:
    """The evidence chunks the reader is given for each item when the agent answers it over its own paper (the
    ``read`` event of its trace); an item the agent answers without reading gets none. The question is asked
    without its options: the fixed planner retrieves the same evidence either way, and the verdict model being
    retrained is not called."""
    from lit3r.app.session import Session
    from lit3r.app.traces import load_trace
    from lit3r.corpus.ingest import ingest
    from lit3r.corpus.store import CorpusStore
    from lit3r.index.build import build_index
    from lit3r.index.opening import open_index
    from lit3r.settings import Settings

    settings = Settings(home=home)
    corpus = write_corpus(items, home / "sources" / "verdict-training.jsonl")
    with CorpusStore(home) as store:
        report = ingest([corpus], store)
        if report.failed:
            raise RuntimeError(f"ingesting {corpus} failed: {report.failed}")
        build_index(settings, store)
    index = open_index(settings)
    evidence: dict[str, list[Chunk]] = {}
    with Session(settings, index=index) as session:
        for item in items:
            answer = session.ask(item.question, allowed_papers=[item.id])
            events = load_trace(answer.trace_path)["events"] if answer.trace_path else []
            reads = [e for e in events if e["type"] == "read"]
            ids = reads[-1]["data"]["evidence"] if reads else []
            evidence[item.id] = [index.chunk_by_id[c] for c in ids if c in index.chunk_by_id]
    return evidence


def examples(items: Sequence[PubMedItem], evidence: dict[str, list[Chunk]]) -> list[Example]:
    """Each item with evidence, read as the offline reader reads it (units, lexical scores, features)."""
    found = []
    for item in items:
        pool = candidates(evidence.get(item.id) or [])
        if not pool:
            continue
        scores = lexical_scores(item.question, [c.scoring_text for c in pool])
        row, fields, best, _ = evidence_features(item.question, pool, scores)
        found.append(Example(item.id, item.label, row, fields, yes_or_no(item.question, pool[best].text).lower()))
    return found


def conclusions(path: Path) -> dict[str, str]:
    """The PQA-L conclusions (``LONG_ANSWER``) by id, from the folder or file :func:`load_pqal` reads."""
    path = Path(path)
    data_path = path / "ori_pqal.json.gz" if path.is_dir() else path
    opener = gzip.open if data_path.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(data_path, "rt", encoding="utf-8") as handle:
        return {str(k): str(row.get("LONG_ANSWER") or "") for k, row in json.load(handle).items()}


def conclusion_examples(
    items: Sequence[PubMedItem], evidence: dict[str, list[Chunk]], said: dict[str, str]
) -> list[Example]:
    """A second, training-only example of each item whose conclusion is known: its evidence with the conclusion
    in place of the result section (the conclusion states in words what the results show in numbers, so the
    model learns the words of a verdict from more text). Only the training items' conclusions are used."""
    found = []
    for item in items:
        chunks = [c for c in evidence.get(item.id) or [] if not RESULT_SECTION.search(c.locator.section or "")]
        if not said.get(item.id) or not evidence.get(item.id):
            continue
        last = max(
            (int(c.id.rpartition("::c")[2]) for c in evidence[item.id] if c.id.rpartition("::c")[2].isdigit()),
            default=0,
        )
        stated = Chunk(id=chunk_id(item.id, last + 1), paper_id=item.id, type="text", text=said[item.id],
                       locator=Locator(section="RESULTS"))  # fmt: skip
        found += examples([item], {item.id: [*chunks, stated]})
    return found


def _normal(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def scholarqabench_keys(item: PubMedItem) -> set[str]:
    """What identifies a PubMedQA question across files: its text and the start of its first context, normalised."""
    return {_normal(item.question), _normal(item.sections[0][1])[:300] if item.sections else ""} - {""}


def scholarqabench_items(path: Path, pqal: Sequence[PubMedItem], test: Sequence[PubMedItem]):
    """ScholarQABench's questions that are not PQA-L questions (by question text or first context), and a count
    of those dropped as PQA-L test questions and as PQA-L training questions already."""
    keys = scholarqabench_keys
    test_keys = set().union(*(keys(i) for i in test))
    train_keys = set().union(*(keys(i) for i in pqal))
    kept, counts = [], Counter()
    for item in load_scholarqabench(path):
        if keys(item) & test_keys:
            counts["in_pqal_test"] += 1
        elif keys(item) & train_keys:
            counts["in_pqal_training"] += 1
        else:
            kept.append(item)
    counts["added"] = len(kept)
    return kept, dict(counts)


def fold_of(paper_id: str, folds: int, seed: int = 0) -> int:
    """The fold of a paper: a hash of its id (all its questions in one fold); ``seed`` gives another split."""
    return hashlib.sha256(f"{seed or ''}{paper_id}".encode()).digest()[0] % folds


def fit(train: Sequence[Example], config: Config) -> VerdictModel:
    """The logistic regression on the standardised cue rows and, with a word weight, the fields' bags."""
    from sklearn.linear_model import LogisticRegression

    x = np.vstack([e.row for e in train])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    blocks, bags = [(x - mean) / scale], {}
    if config.word_weight:
        for name, ngrams in FIELD_NGRAMS.items():
            bags[name] = TermWeights.fit([e.fields[name] for e in train], ngrams, MIN_DF)
            blocks.append(config.word_weight * np.vstack([bags[name].vector(e.fields[name]) for e in train]))
    labels = [e.label for e in train]
    weights = None
    if config.class_weight == "sqrt":
        counts = Counter(labels)
        weights = {k: (len(labels) / (len(counts) * n)) ** 0.5 for k, n in counts.items()}
    model = LogisticRegression(C=config.c, max_iter=5000, class_weight=weights).fit(np.hstack(blocks), labels)
    classes = [str(k) for k in model.classes_]
    order = [classes.index(v) for v in VERDICTS if v in classes]
    coef, at = model.coef_[order], x.shape[1]
    words = {}
    for name, bag in bags.items():
        size = len(bag.vocabulary)
        words[name] = WordPart(bag, config.word_weight * coef[:, at : at + size])
        at += size
    return VerdictModel(
        names=feature_names(), mean=mean, scale=scale, coef=coef[:, : x.shape[1]], intercept=model.intercept_[order],
        classes=[classes[i] for i in order], trained_on={}, words=words,
    )  # fmt: skip


def predict(model: VerdictModel, example: Example) -> str:
    probabilities = model.probabilities(example.row, example.fields)
    return max(probabilities, key=probabilities.get)


def _scores(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, float]:
    from sklearn.metrics import f1_score

    accuracy = sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold)
    macro = f1_score(gold, predicted, labels=list(VERDICTS), average="macro", zero_division=0)
    return {"accuracy": round(accuracy, 4), "macro_f1": round(float(macro), 4)}


def _held_in(extra: Sequence[Example], folds: int, seed: int, k: int) -> list[Example]:
    """The training-only examples of the papers outside fold ``k``."""
    return [e for e in extra if fold_of(e.id, folds, seed) != k]


def out_of_fold(
    data: Sequence[Example], config: Config, folds: int, seed: int, extra: Sequence[Example] = ()
) -> list[str]:
    """Each example's prediction by the model fitted on the other folds (with their ``extra`` examples)."""
    fold = [fold_of(e.id, folds, seed) for e in data]
    predicted = [""] * len(data)
    for k in range(folds):
        train = [e for e, f in zip(data, fold, strict=True) if f != k]
        model = fit([*train, *_held_in(extra, folds, seed, k)], config)
        for i, f in enumerate(fold):
            if f == k:
                predicted[i] = predict(model, data[i])
    return predicted


def cross_validate(
    data: Sequence[Example], config: Config, folds: int, repeats: int, extra: Sequence[Example] = ()
) -> dict:
    """Accuracy and macro-F1 of ``config`` averaged over ``repeats`` splits into ``folds`` folds by paper; only
    ``data`` is scored, ``extra`` (the conclusions' examples) only trains."""
    gold = [e.label for e in data]
    runs = [out_of_fold(data, config, folds, seed, extra) for seed in range(repeats)]
    scored = [_scores(gold, p) for p in runs]
    return {
        **asdict(config),
        "accuracy": round(float(np.mean([s["accuracy"] for s in scored])), 4),
        "macro_f1": round(float(np.mean([s["macro_f1"] for s in scored])), 4),
        "accuracy_by_split": [s["accuracy"] for s in scored],
        "predicted": dict(Counter(runs[0])),
    }


def nested(data: Sequence[Example], configs: Sequence[Config], folds: int, extra: Sequence[Example] = ()) -> dict:
    """Nested cross-validation: in each outer fold the configuration is chosen by an inner cross-validation of
    the other folds, then scored on the held-out one (what choosing by cross-validation is worth)."""
    fold = [fold_of(e.id, folds) for e in data]
    gold, predicted, chosen = [e.label for e in data], [""] * len(data), []
    for k in range(folds):
        train, more = [e for e, f in zip(data, fold, strict=True) if f != k], _held_in(extra, folds, 0, k)
        best = max(configs, key=lambda c: cross_validate(train, c, folds, 1, more)["accuracy"])
        chosen.append(asdict(best))
        model = fit([*train, *more], best)
        for i, f in enumerate(fold):
            if f == k:
                predicted[i] = predict(model, data[i])
    return {"nested": _scores(gold, predicted), "chosen_by_fold": chosen}


GRID = [Config(c, w, cw) for c, w, cw in itertools.product((0.003, 0.01, 0.03), (0.0, 5.0, 10.0), ("none", "sqrt"))]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="The PQA-L folder (ori_pqal.json.gz, test_ground_truth.json).")
    parser.add_argument("--out", type=Path, required=True, help="Where to write the model (JSON).")
    parser.add_argument("--scholarqabench", type=Path, help="ScholarQABench's pubmed_test.jsonl (PQA-L ones dropped).")
    parser.add_argument("--evidence", choices=("agent", "abstract"), default="agent")
    parser.add_argument("--home", type=Path, help="Where the agent's index of the training abstracts is built.")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=4, help="Cross-validation splits (seeds) per configuration.")
    parser.add_argument("--nested", action="store_true", help="Also report nested cross-validation (slow).")
    parser.add_argument("--no-conclusions", action="store_true", help="Do not add the training conclusions' examples.")
    args = parser.parse_args(argv)
    items = load_pqal(args.data, split="train")
    trained_on: dict = {"data": "PubMedQA PQA-L, the 500 questions not in test_ground_truth.json"}
    if args.scholarqabench:
        extra, counts = scholarqabench_items(args.scholarqabench, items, load_pqal(args.data, split="test"))
        print(json.dumps({"scholarqabench": str(args.scholarqabench), **counts}))
        items, trained_on["scholarqabench"] = [*items, *extra], counts
    if args.evidence == "abstract":
        evidence = {item.id: item_chunks(item) for item in items}
    else:
        with tempfile.TemporaryDirectory() as scratch:
            evidence = agent_evidence(items, args.home or Path(scratch))
    data = examples(items, evidence)
    extra = [] if args.no_conclusions else conclusion_examples(items, evidence, conclusions(args.data))
    gold = [e.label for e in data]
    majority = max(set(gold), key=gold.count)
    print(json.dumps({
        "questions": len(items), "with_evidence": len(data), "evidence": args.evidence,
        "conclusion_examples": len(extra), "gold": dict(Counter(gold)),
        "majority": _scores(gold, [majority] * len(gold)), "negation_rule": _scores(gold, [e.rule for e in data]),
    }))  # fmt: skip
    results = [cross_validate(data, config, args.folds, args.repeats, extra) for config in GRID]
    for result in results:
        print(json.dumps(result))
    best = max(results, key=lambda r: (r["accuracy"], r["macro_f1"]))
    config = Config(best["c"], best["word_weight"], best["class_weight"])
    summary = {"folds": args.folds, "repeats": args.repeats, "evidence": args.evidence, "chosen": best}
    summary["conclusion_examples"] = len(extra)
    if args.nested:
        summary["nested"] = nested(data, GRID, args.folds, extra)
        print(json.dumps(summary["nested"]))
    model = fit([*data, *extra], config)
    trained_on |= {"questions": len(data), "cross_validation": summary}
    model = VerdictModel(**{**model.__dict__, "trained_on": trained_on})
    args.out.write_text(json.dumps(model.to_dict(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({config}: cross-validated accuracy {best['accuracy']}, macro-F1 {best['macro_f1']})")


if __name__ == "__main__":
    main()
