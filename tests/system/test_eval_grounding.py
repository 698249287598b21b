"""Grounding metrics of an answer run: claims with their cited passages, the report, and the CLI's --grounding.

The CLI runs use test_eval_answers' small QASPER file (four answerable questions and one unanswerable), the
hashing encoder and the lexical reranker; offline, the judge is the exact one and the RAGAS metrics are skipped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lit3r.app.traces import write_trace
from lit3r.cli import app
from lit3r.evals.grounding import (
    RAGAS_SKIPPED,
    GroundingEvaluation,
    cited_claims,
    grounding_report,
    reference_answer,
)
from lit3r.evals.qasper import QasperQuestion
from lit3r.evals.ragas_metrics import RagasJudge
from lit3r.grounding.judge import JudgeError
from lit3r.llm.wrapper import LLM
from lit3r.models import Answer, Citation, Locator, TraceEvent
from lit3r.retrieval.gate import GateThreshold

from fakes.chat import FakeToolCallingModel
from fakes.encoders import HashingEncoder
from fakes.judges import KeyPhraseJudge
from fakes.qasper import topics_file

PASSAGES = {
    "p1::c0001": "We tune BM25 with k1 and b.",
    "p2::c0001": "A small encoder embeds passages.",
    "p3::c0001": "The dataset has 1,585 papers.",
}
GROUNDING_KEYS = {
    "grounding_judge",
    "citation_recall",
    "citation_precision",
    "citation_counts",
    "supported_fraction",
    "abstention",
    "grounding_seconds",
}
MODE_KEYS = {"threshold", "precision", "recall", "f1"}
P1, P3 = "p1::c0001", "p3::c0001"


def _citation(number: int, chunk_id: str) -> Citation:
    text = PASSAGES.get(chunk_id, "")
    return Citation(number=number, chunk_id=chunk_id, paper_id=chunk_id.split("::")[0], locator=Locator(), quote=text)


def _answer(text: str, chunk_ids: list[str], tmp_path: Path, name: str, best: float | None, **fields) -> Answer:
    """An answer with a trace whose read step saw ``best`` and gave the reader the cited chunks."""
    citations = [_citation(n, c) for n, c in enumerate(chunk_ids, 1)]
    answer = Answer(question="Q?", text=text, citations=citations, sufficient=fields.pop("sufficient", True), **fields)
    event = TraceEvent(type="read", name="reader", started_at="2025-01-01T00:00:00+00:00")
    event.data = {"best_score": best, "sufficient": answer.sufficient, "evidence": chunk_ids}
    path = write_trace(tmp_path / f"{name}.json", [event], answer)
    return answer.model_copy(update={"trace_path": str(path)})


def _question(qid: str, unanswerable: bool = False) -> QasperQuestion:
    annotation = {"unanswerable": unanswerable, "extractive_spans": [] if unanswerable else ["k1 and b"]}
    return QasperQuestion(qid, qid.split("-")[0], "Which BM25 parameters are tuned?", [annotation])


def test_cited_claims_take_the_cited_passages_by_marker() -> None:
    answer = Answer(
        question="Q?",
        text="BM25 is tuned with k1 [1][2]. No citation here. Dangling [3].",
        citations=[_citation(1, "p1::c0001"), _citation(2, "p2::c0001"), _citation(3, "missing::c0009")],
        sufficient=True,
    )
    claims = cited_claims(answer, PASSAGES.get)
    assert [c.text for c in claims] == ["BM25 is tuned with k1.", "No citation here.", "Dangling."]
    assert claims[0].passages == (PASSAGES["p1::c0001"], PASSAGES["p2::c0001"])
    assert claims[1].passages == () and claims[2].passages == ()  # unknown chunk: ALCE's out-of-range citation
    assert cited_claims(answer.model_copy(update={"sufficient": False}), PASSAGES.get) == []


def test_reference_answer_prefers_the_first_annotator_with_an_answer() -> None:
    annotations = [{"unanswerable": True}, {"free_form_answer": "They tune k1."}, {"yes_no": True}]
    assert reference_answer(QasperQuestion("q", "p", "Q?", annotations)) == "They tune k1."
    assert reference_answer(QasperQuestion("q", "p", "Q?", [{"yes_no": False}])) == "No"
    assert reference_answer(_question("p1-none", unanswerable=True)) is None


def test_report_from_answers_and_traces(tmp_path: Path) -> None:
    answered = [
        # two citations, one irrelevant: recall 1, precision 1/2
        (
            _question("p1-a"),
            _answer("We tune BM25 with k1 and b [1][2].", ["p1::c0001", "p3::c0001"], tmp_path, "a", 0.9),
        ),
        # supported with its one citation: recall 1, precision 1
        (_question("p2-b"), _answer("A small encoder embeds passages [1].", ["p2::c0001"], tmp_path, "b", 0.8)),
        # an abstention on an unanswerable question: no claims, a right abstention
        (_question("p3-c", True), _answer("Insufficient.", [], tmp_path, "c", 0.1, sufficient=False)),
    ]
    answered[1] = (answered[1][0], answered[1][1].model_copy(update={"supported_fraction": 0.5}))
    setup = GroundingEvaluation(KeyPhraseJudge(), PASSAGES.get, GateThreshold.fixed(0.5))
    report = grounding_report(answered, setup)
    assert GROUNDING_KEYS <= set(report) and report["grounding_judge"] == "key-phrase"
    assert report["citation_recall"] == 1.0 and report["citation_precision"] == pytest.approx(0.75)
    assert report["citation_counts"]["answers"] == 2 and report["citation_counts"]["irrelevant_citations"] == 1
    assert report["supported_fraction"] == 0.5 and report["supported_fraction_answers"] == 1
    assert report["ragas_skipped"] == RAGAS_SKIPPED and "faithfulness" not in report
    abstention = report["abstention"]
    assert set(abstention) == {"f1", "percentile", "system"}
    assert all(MODE_KEYS <= set(row) for row in abstention.values())
    system = abstention["system"]
    assert (system["threshold"], system["tp"], system["fp"], system["precision"], system["recall"]) == (
        0.5,
        1,
        0,
        1.0,
        1.0,
    )


def test_report_with_a_ragas_judge(tmp_path: Path) -> None:
    answered = [(_question("p2-b"), _answer("A small encoder embeds passages [1].", ["p2::c0001"], tmp_path, "b", 0.8))]
    script = [
        json.dumps({"statements": ["A small encoder embeds passages."]}),
        json.dumps({"verdicts": [{"index": 1, "supported": True}]}),
        json.dumps({"questions": ["Which BM25 parameters are tuned?"], "noncommittal": False}),
        json.dumps({"verdicts": [{"id": "c1", "useful": False}]}),
        json.dumps({"statements": [{"statement": "k1 and b are tuned", "attributed": False}]}),
    ]
    model = FakeToolCallingModel(script=script)
    ragas = RagasJudge(LLM(model, sleep=lambda _s: None), HashingEncoder())
    report = grounding_report(answered, GroundingEvaluation(KeyPhraseJudge(), PASSAGES.get, None, ragas))
    assert report["ragas_judge"] == "fake-tool-calling" and "ragas_skipped" not in report
    assert (report["faithfulness"], report["context_precision"], report["context_recall"]) == (1.0, 0.0, 0.0)
    assert report["answer_relevancy"] == pytest.approx(1.0)
    assert "A small encoder embeds passages." in model.calls[1]["messages"][-1].text  # the reader's chunk


def _run(tmp_path: Path, *args: str) -> tuple[str, dict]:
    report_path = tmp_path / "report.json"
    command = ["--home", str(tmp_path / "home"), "eval", "qasper", str(topics_file(tmp_path, spans=True)), *args]
    result = CliRunner().invoke(app, [*command, "--json", str(report_path)], env={"LIT3R_RERANKER": "lexical"})
    assert result.exit_code == 0, result.output
    return result.output, json.loads(report_path.read_text())


def test_cli_answers_with_grounding(tmp_path: Path, hashing_encoder) -> None:
    output, report = _run(tmp_path, "--answers", "--grounding")
    assert GROUNDING_KEYS <= set(report) and "answer_f1" in report
    assert report["grounding_judge"] == "exact" and report["ragas_skipped"] == RAGAS_SKIPPED
    # the extractive reader quotes its chunks, so the exact judge finds every cited sentence in its citation
    assert report["citation_counts"]["answers"] == 5 - report["abstained"] > 0
    assert report["citation_recall"] == 1.0 and 0 < report["citation_precision"] <= 1.0
    assert report["supported_fraction"] is None or 0 <= report["supported_fraction"] <= 1
    abstention = report["abstention"]
    assert set(abstention) == {"f1", "percentile", "system"}
    for mode, row in abstention.items():
        assert MODE_KEYS <= set(row), mode
        assert row["f1"] is None or 0 <= row["f1"] <= 1, mode
    assert abstention["percentile"]["n"] == abstention["system"]["n"] == 5
    assert abstention["system"]["tp"] + abstention["system"]["fn"] == 1  # the one unanswerable question
    assert "citations (judge exact): recall 1.000" in output and "abstention percentile: threshold" in output


def test_cli_grounding_needs_answers(tmp_path: Path, hashing_encoder) -> None:
    command = [
        "--home",
        str(tmp_path / "home"),
        "eval",
        "qasper",
        str(topics_file(tmp_path, spans=True)),
        "--retrieval",
        "--grounding",
    ]
    result = CliRunner().invoke(app, command, env={"LIT3R_RERANKER": "lexical"})
    assert result.exit_code != 0 and "--grounding measures answers" in result.output


class FailingJudge(KeyPhraseJudge):
    name = "failing"

    def judge(self, premise: str, hypothesis: str):
        raise JudgeError("the LLM judge failed: HTTP 500")


def test_a_failing_judge_leaves_the_citation_metrics_out(tmp_path: Path) -> None:
    answered = [(_question("p2-b"), _answer("A small encoder embeds passages [1].", ["p2::c0001"], tmp_path, "b", 0.8))]
    report = grounding_report(answered, GroundingEvaluation(FailingJudge(), PASSAGES.get))
    assert report["citation_recall"] is None and report["citation_precision"] is None
    assert "HTTP 500" in report["citation_error"] and "abstention" in report
