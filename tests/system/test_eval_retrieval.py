"""`lit3r eval qasper --retrieval`: the report contract, on a small QASPER file written by the test."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from lit3r.cli import app
from lit3r.evals.retrieval import CONFIGURATIONS, stage_timings
from lit3r.models import TraceEvent

from fakes.openai_server import OpenAIServer, Scripted, reply
from fakes.qasper import topics_file


def _data(tmp_path: Path) -> Path:
    return topics_file(tmp_path)


def test_report_contract_and_easy_questions(tmp_path: Path, hashing_encoder) -> None:
    report_path = tmp_path / "report.json"
    result = CliRunner().invoke(
        app,
        [
            "--home",
            str(tmp_path / "home"),
            "eval",
            "qasper",
            str(_data(tmp_path)),
            "--retrieval",
            "--json",
            str(report_path),
            "--reranker",
            "lexical",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(report_path.read_text())
    assert report["questions"] == 4
    assert set(report["configurations"]) == set(CONFIGURATIONS)
    keys = {f"{kind}_recall@{k}" for kind in ("paper", "evidence") for k in (1, 5, 10, 20, 50)}
    keys |= {"mrr", "questions", "latency_ms_median"}
    for name, settings in report["configurations"].items():
        assert set(settings) == {"open_domain", "in_paper"}, name
        for metrics in settings.values():
            assert keys <= set(metrics), name
            assert metrics["questions"] == 4
            assert metrics["paper_recall@50"] == 1.0, name  # four papers: every paper is in the top 50
            assert metrics["evidence_recall@50"] == 1.0, name  # and every paper has few chunks
        assert settings["in_paper"]["paper_recall@1"] == 1.0, name
    assert report["configurations"]["bm25"]["open_domain"]["paper_recall@1"] == 1.0
    stages = report["configurations"]["lit3r"]["open_domain"]["stage_latency_ms_median"]
    assert {"decompose", "sweep", "prf", "candidates", "rerank", "verify", "ranking_a", "relate", "fuse"} <= set(stages)
    assert "prf" not in report["configurations"]["lit3r_no_prf"]["in_paper"]["stage_latency_ms_median"]
    assert "stage_latency_ms_median" not in report["configurations"]["hybrid"]["open_domain"]


def test_stage_timings_sum_subqueries_and_rounds() -> None:
    def event(type_: str, name: str, duration: float = 0.0, **timings: float) -> TraceEvent:
        data = {"timings_ms": timings} if timings else {}
        return TraceEvent(
            type=type_, name=name, started_at="2026-01-01T00:00:00+00:00", duration_ms=duration, data=data
        )

    events = [
        event("decompose", "keywords", 1.0),
        event("ranking", "retrieve_subquery", sweep=2.0, rerank=1.0),
        event("ranking", "retrieve_subquery", sweep=3.5),
        event("verdict", "gate", 0.25),
        event("note", "hyde"),
        event("tool", "search_chunks", 9.0),
        event("ranking", "expand_neighbors", ranking_a=0.5, relate=2.0, fuse=0.1),
    ]
    expected = {"decompose": 1.0, "sweep": 5.5, "rerank": 1.0, "verify": 0.25, "ranking_a": 0.5, "relate": 2.0}
    assert stage_timings(events) == {**expected, "fuse": 0.1}


def test_unknown_configuration_is_refused(tmp_path: Path, hashing_encoder) -> None:
    result = CliRunner().invoke(
        app, ["--home", str(tmp_path / "h"), "eval", "qasper", str(_data(tmp_path)), "--retrieval", "--configs", "bm99"]
    )
    assert result.exit_code == 1 and "unknown configuration(s) bm99" in result.output


def test_the_llm_reranker_works_from_the_command_line_with_a_configured_model(
    tmp_path: Path, hashing_encoder, monkeypatch
) -> None:
    """`--reranker llm` with an OpenAI-compatible endpoint: every relevance judgement goes to the model, and the
    passage it calls relevant (the one holding the question's key sentence) ranks first."""
    for variable in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(variable, "127.0.0.1,localhost")

    def judge(body: dict) -> Scripted:
        prompt = body["messages"][-1]["content"]
        question = prompt.split("<question>")[1].split("</question>")[0].split()
        passage = prompt.split("<passage>")[1].split("</passage>")[0]
        relevant = f"{question[2]} {question[3]}" in passage  # "How does <w1> <w2> work?": the key sentence
        return reply(json.dumps({"relevant": "yes" if relevant else "no"}))

    with OpenAIServer(responder=judge) as server:
        env = {"LIT3R_LLM__PROVIDER": "openai", "LIT3R_LLM__BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
        report_path = tmp_path / "report.json"
        command = ["--home", str(tmp_path / "home"), "eval", "qasper", str(_data(tmp_path)), "--retrieval"]
        command += ["--configs", "hybrid_rerank", "--reranker", "llm", "--json", str(report_path)]
        result = CliRunner().invoke(app, command, env=env)
    assert result.exit_code == 0, result.output
    report = json.loads(report_path.read_text())
    assert report["reranker"] == "llm"
    assert report["configurations"]["hybrid_rerank"]["in_paper"]["evidence_recall@1"] == 1.0
    prompts = [r["body"]["messages"][-1]["content"] for r in server.requests]
    assert prompts and all("<passage>" in p for p in prompts)
    assert all(r["body"].get("logprobs") is True for r in server.requests)  # asked for P(yes) by token
