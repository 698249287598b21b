"""Labelled claims for the stance verdict: SciFact (ScholarQABench's file) and PubMedQA PQA-L.

* SciFact ``scifact_test.jsonl``: ``{"input": claim, "gold_ctx": [{"title", "text"}], "answer": "true"|"false"}``
  per line; the gold abstract supports a true claim and refutes a false one.
* PubMedQA PQA-L ``ori_pqal.json(.gz)``: ``{pmid: {QUESTION, CONTEXTS, LONG_ANSWER, final_decision}}``; only the
  questions outside the official test ids (``test_ground_truth.json``) and answered yes or no are taken: the
  question (without its auxiliary verb and question mark) is the claim, the abstract with its conclusion the paper.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class LabelledClaim:
    """A claim, the paper that decides it, and whether that paper supports it."""

    claim: str
    paper_id: str
    title: str
    text: str
    supports: bool


def paper_id_of(title: str, text: str) -> str:
    """A stable id for an abstract given only by its title and text."""
    return "scifact-" + hashlib.sha1(f"{title}\n{text}".encode()).hexdigest()[:10]


def load_scifact(path: Path) -> list[LabelledClaim]:
    """The claims of a ScholarQABench SciFact file; ``ValueError`` names the line and field of a bad one."""
    claims = []
    with Path(path).open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                claim, gold, answer = row["input"], row["gold_ctx"][0], str(row["answer"]).lower()
                title, text = gold["title"], gold["text"]
            except (json.JSONDecodeError, KeyError, IndexError, TypeError) as exc:
                problem = f"not a SciFact row (input, gold_ctx[0].title/text, answer): {exc}"
                raise ValueError(f"{path}:{number}: {problem}") from exc
            if answer not in ("true", "false"):
                raise ValueError(f"{path}:{number}: answer must be 'true' or 'false', not {row['answer']!r}")
            claims.append(LabelledClaim(claim, paper_id_of(title, text), title, text, answer == "true"))
    if not claims:
        raise ValueError(f"{path}: no SciFact claim in the file")
    return claims


_AUXILIARY = re.compile(r"^(?:is|are|was|were|do|does|did|can|could|should|will|would|has|have|had|may)\s+", re.I)


def question_claim(question: str) -> str:
    """A PubMedQA question as a claim: its last question (after a colon), auxiliary verb and '?' dropped."""
    question = question.split(":")[-1] if question.count("?") == 1 and ":" in question else question
    return _AUXILIARY.sub("", question.strip()).rstrip("?").strip()


def load_pubmedqa(path: Path, test_ids: Path) -> list[LabelledClaim]:
    """PQA-L's yes/no questions outside the official test set, as labelled claims."""
    opener = gzip.open if Path(path).suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        data = json.load(handle)
    withheld = set(json.loads(Path(test_ids).read_text(encoding="utf-8")))
    claims = []
    for pmid, row in sorted(data.items()):
        if pmid in withheld or row.get("final_decision") not in ("yes", "no"):
            continue
        text = " ".join([*row["CONTEXTS"], row["LONG_ANSWER"]])
        claims.append(
            LabelledClaim(question_claim(row["QUESTION"]), f"pubmed-{pmid}", "", text, row["final_decision"] == "yes")
        )
    return claims
