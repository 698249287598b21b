"""The claim check over the demo corpus: supported, negated, renumbered and unaddressed claims; quotes that stand
in their chunks; the JSON document; the trace (shown, replayed, diffed); the CLI and the MCP tool."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp import Client
from typer.testing import CliRunner

from lit3r.app.check import NOT_ADDRESSED, check_claim
from lit3r.app.replay import replay_trace
from lit3r.app.session import Session
from lit3r.app.traces import load_trace, render_timeline, trace_path
from lit3r.cli import app
from lit3r.mcp import build_server
from lit3r.settings import Settings

SUPPORTED = "The tuned sparse system is competitive with a fine-tuned small dense encoder on single-paper questions."
NEGATED = "The tuned sparse system is not competitive with a fine-tuned small dense encoder on single-paper questions."
RENUMBERED = "A handful of plain decisions move recall at 10 from 0.39 to 0.61."
UNADDRESSED = "Penguins migrate north in winter to breed on sea ice."
PAPER = "demo-sparse-retrieval"


@pytest.fixture(scope="module")
def session(demo_home: Path):
    with Session(Settings(home=demo_home)) as opened:
        yield opened


@pytest.fixture(scope="module")
def results(session):
    return {claim: check_claim(session, claim) for claim in (SUPPORTED, NEGATED, RENUMBERED, UNADDRESSED)}


def verdict_of(result, paper_id: str = PAPER):
    return next(p for p in result.papers if p.paper_id == paper_id)


def test_supported_negated_and_renumbered_claims_get_their_verdicts(results) -> None:
    assert verdict_of(results[SUPPORTED]).verdict == "supports"
    assert verdict_of(results[NEGATED]).verdict == "contradicts"
    assert verdict_of(results[RENUMBERED]).verdict == "contradicts"
    assert results[SUPPORTED].summary.supports >= 1 and results[NEGATED].summary.contradicts >= 1
    strongest = results[NEGATED].summary.strongest_contradiction
    assert strongest is not None and strongest.paper_id == PAPER and "competitive" in strongest.quote


def test_every_quote_stands_verbatim_in_its_chunk_and_papers_with_a_verdict_come_first(session, results) -> None:
    for result in results.values():
        seen_quiet = False
        for paper in result.papers:
            seen_quiet = seen_quiet or paper.verdict == "not_addressed"
            assert not (seen_quiet and paper.verdict != "not_addressed"), "a paper with a verdict after a quiet one"
            assert 0.0 <= paper.confidence <= 1.0
            for quote in paper.quotes:
                chunk = session.index.chunk_by_id[quote.chunk_id]
                assert chunk.paper_id == paper.paper_id and quote.quote in chunk.text
                assert quote.role in ("supports", "contradicts") and quote.locator == chunk.locator
            assert bool(paper.quotes) == (paper.verdict != "not_addressed")


def test_an_unaddressed_claim_says_so(results) -> None:
    result = results[UNADDRESSED]
    assert all(p.verdict == "not_addressed" for p in result.papers)
    assert not result.summary.addressed and result.summary.message == NOT_ADDRESSED
    assert (result.summary.supports, result.summary.contradicts, result.summary.mixed) == (0, 0, 0)


@pytest.mark.parametrize(
    "claim",
    [
        "Photosynthesis requires chlorophyll.",  # "requires": "Requiring two shared references ..."
        "Steel expands when heated.",  # "expands": "We expand a retrieved paper list ..."
        "Aspirin lowers the risk of a second heart attack.",  # "second", "attack"
        "The speed of light in a vacuum is constant.",  # "The constant k damps ..."
    ],
)
def test_a_claim_sharing_one_everyday_word_with_a_paper_is_not_addressed(session, claim) -> None:
    # Each of these got a verdict from a paper before the library's subject test (one word in common).
    result = check_claim(session, claim)
    assert not result.summary.addressed and result.summary.message == NOT_ADDRESSED
    by_subject = [p for p in result.papers if p.judged_by == "subject"]
    assert by_subject and all(p.verdict == "not_addressed" and not p.quotes for p in by_subject)
    assert all("of what the claim is about" in p.reason for p in by_subject)


def test_the_document_has_the_documented_keys(results) -> None:
    document = results[NEGATED].model_dump(mode="json")
    assert {"claim", "papers", "summary", "trace_path"} <= set(document)
    assert {"paper_id", "title", "verdict", "confidence", "quotes"} <= set(document["papers"][0])
    assert {"chunk_id", "locator", "quote", "role"} <= set(document["papers"][0]["quotes"][0])
    assert {"supports", "contradicts", "mixed"} <= set(document["summary"])


def test_each_check_writes_a_trace_that_shows_replays_and_diffs(session, results, demo_home) -> None:
    trace = load_trace(results[NEGATED].trace_path)
    assert trace["kind"] == "check" and trace["question"] == NEGATED
    assert trace["check"]["papers"][0]["paper_id"] == results[NEGATED].papers[0].paper_id
    checks = [e for e in trace["events"] if e["type"] == "verify" and e["name"] == "check_paper"]
    assert {e["data"]["paper_id"] for e in checks} == {p.paper_id for p in results[NEGATED].papers}
    assert any(e["type"] == "ranking" for e in trace["events"])  # the retrieval's own events
    timeline = render_timeline(trace)
    assert f"question: {NEGATED}" in timeline and "check_paper" in timeline
    report = replay_trace(Settings(home=demo_home), trace, index=session.index)
    assert report.reproduced and report.same_citations and report.same_rankings, report.first_difference
    replayed = load_trace(trace_path(Settings(home=demo_home), report.replay_trace_id))
    assert replayed["kind"] == "check" and replayed["check"]["papers"] == trace["check"]["papers"]


def test_the_cli_prints_the_document_and_rejects_an_unknown_paper(demo_home) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["--home", str(demo_home), "check", NEGATED, "--paper", PAPER, "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [p["paper_id"] for p in document["papers"]] == [PAPER] and document["papers"][0]["verdict"] == "contradicts"
    shown = runner.invoke(app, ["--home", str(demo_home), "check", SUPPORTED, "--paper", PAPER])
    assert shown.exit_code == 0 and "SUPPORTS" in shown.stdout and "trace:" in shown.stdout
    bad = runner.invoke(app, ["--home", str(demo_home), "check", SUPPORTED, "--paper", "no-such-paper"])
    assert bad.exit_code != 0 and "no-such-paper" in bad.output


def test_the_mcp_tool_checks_a_claim(session) -> None:
    async def main():
        async with Client(build_server(session)) as client:
            done = await client.call_tool("check_claim", {"claim": NEGATED, "papers": [PAPER]})
            empty = await client.call_tool("check_claim", {"claim": "   "})
            return done, empty

    done, empty = anyio.run(main)
    assert not done.is_error and done.structured_content["papers"][0]["verdict"] == "contradicts"
    assert empty.is_error


def test_eval_scifact_refuses_an_offset_outside_its_sample(tmp_path) -> None:
    data = tmp_path / "claims.jsonl"
    data.write_text("", encoding="utf-8")
    result = CliRunner().invoke(app, ["--home", str(tmp_path), "eval", "scifact", str(data), "--every", "4",
                                      "--offset", "4"])  # fmt: skip
    assert result.exit_code != 0 and "--offset must be from 0 to --every minus 1 (3), not 4" in result.output
