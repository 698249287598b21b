"""``lit3r trace replay`` and ``lit3r trace diff``: run a trace again from its recorded model outputs; compare two."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from lit3r.cli.agent import find_trace, trace_app
from lit3r.cli.app import fail, out, state

DIFFERS = 2
"""Exit code of a replay that did not reproduce its trace."""
SHOWN_MOVES = 5


def _load(trace_id: str) -> tuple[Path, dict[str, Any]]:
    from lit3r.app.traces import load_trace

    path = find_trace(trace_id)
    try:
        doc = load_trace(path)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        fail(f"{path}: not a lit3r trace: {exc}")
    if not isinstance(doc, dict) or not isinstance(doc.get("events"), list):
        fail(f"{path}: not a lit3r trace (no 'events' list)")
    return path, doc


def _say(text: str) -> None:
    out.print(text, highlight=False, markup=False)


def _moves(row: Any) -> str:
    """A ranking's first rank moves, e.g. 'c3 4→1 (+3), c9 new at 2, c1 2→out'."""
    shown = []
    for move in row.moves[:SHOWN_MOVES]:
        if move.rank_a is None:
            shown.append(f"{move.id} new at {move.rank_b}")
        elif move.rank_b is None:
            shown.append(f"{move.id} {move.rank_a}→out")
        else:
            shown.append(f"{move.id} {move.rank_a}→{move.rank_b} ({move.change:+d})")
    more = f" (+{len(row.moves) - SHOWN_MOVES} more)" if len(row.moves) > SHOWN_MOVES else ""
    return ", ".join(shown) + more


def print_diff(diff: Any) -> None:
    """The diff as a readable report, in the order the agent works."""
    for side, name in ((diff.a, "A"), (diff.b, "B")):
        rerankers = ", ".join(side.rerankers) or "none"
        _say(f"{name}: {side.trace_id}  planner {side.planner}, reranker {rerankers}, stop {side.stop_reason}")
    presets = [", ".join(side.presets) or "defaults" if side.presets is not None else "not recorded"
               for side in (diff.a, diff.b)]  # fmt: skip
    _say(f"presets: A {presets[0]}, B {presets[1]}")
    if not (diff.a.settings_recorded and diff.b.settings_recorded):
        _say(
            "settings: not recorded in "
            + " and ".join(n for s, n in ((diff.a, "A"), (diff.b, "B")) if not s.settings_recorded)
        )
    _say(f"settings: {len(diff.settings)} differ" if diff.settings else "settings: same")
    for change in diff.settings:
        _say(f"  {change.key}: A {json.dumps(change.a)}  B {json.dumps(change.b)}")
    _say(f"first difference: {diff.first_difference or 'none: the runs are identical'}")
    sub = diff.subqueries
    detail = f"A only {sub.only_a}, B only {sub.only_b}" if not sub.same else f"{len(sub.a)} the same"
    _say(f"subqueries: {detail}")
    changed = [r for r in diff.rankings if not r.same]
    _say(f"rankings: {len(changed)} of {len(diff.rankings)} differ")
    for row in changed:
        where = f" [{row.subquery}]" if row.subquery else ""
        _say(f"  {row.name}{where}: overlap@20 {row.overlap:.2f}; {_moves(row)}")
    for row in (diff.pool, diff.final_papers):
        _say(f"{row.name}: " + ("same" if row.same else f"overlap@20 {row.overlap:.2f}; {_moves(row)}"))
    for verdict in diff.verdicts:
        if not verdict.same:
            _say(f"verdict {verdict.position}: A {json.dumps(verdict.a)}  B {json.dumps(verdict.b)}")
    if all(v.same for v in diff.verdicts):
        _say(f"verdicts: {len(diff.verdicts)} the same")
    _say("answer: same" if diff.answer.same else f"answer:\n  A: {diff.answer.a}\n  B: {diff.answer.b}")
    cites = diff.citations
    _say("citations: same" if cites.same else f"citations: A only {cites.chunks_only_a}, B only {cites.chunks_only_b}")
    tokens = ", ".join(f"{k} {v.a:g}→{v.b:g}" for k, v in diff.tokens.items())
    _say(f"tokens: {tokens}")
    total = diff.time_ms["total"]
    _say(f"time: {total.a:.0f} ms → {total.b:.0f} ms ({total.delta:+.0f} ms)")
    differing = [s for s in diff.steps if not s.same]
    _say(
        f"steps: {len(diff.steps)} aligned, {len(differing)} differ"
        + (f"; first: A {differing[0].a!r}, B {differing[0].b!r}" if differing else "")
    )


@trace_app.command("diff")
def trace_diff(
    first: Annotated[str, typer.Argument(help="Trace A: an id or a trace file path.")],
    second: Annotated[str, typer.Argument(help="Trace B: an id or a trace file path.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the diff as one JSON document.")] = False,
) -> None:
    """Compare two traces step by step: subqueries, rankings with rank moves, pool, verdicts, answer, cost."""
    from lit3r.app.trace_diff import diff_traces

    diff = diff_traces(_load(first)[1], _load(second)[1])
    if as_json:
        print(diff.model_dump_json(indent=1))
    else:
        print_diff(diff)


@trace_app.command("replay")
def trace_replay(
    trace_id: Annotated[str, typer.Argument(help="A trace id or a trace file path.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as one JSON document.")] = False,
    current_settings: Annotated[
        bool,
        typer.Option(
            "--current-settings",
            help="Run with today's settings (flags, preset, environment) instead of those the trace recorded.",
        ),
    ] = False,
) -> None:
    """Run a traced question again with the model outputs the trace recorded (no model, no network) and say
    whether the answer, citations and rankings come out the same. Exit code 2 when they do not."""
    from lit3r.app.replay import replay_trace
    from lit3r.index.corpus_index import IndexNotBuiltError
    from lit3r.llm.errors import LLMConfigError

    path, doc = _load(trace_id)
    try:
        report = replay_trace(state.settings, doc, recorded_settings=not current_settings)
    except (IndexNotBuiltError, LLMConfigError, ValueError) as exc:
        fail(f"cannot replay {path}: {exc}")
    if as_json:
        print(report.model_dump_json(indent=1))
    else:
        verdict = "reproduced" if report.reproduced else "DIFFERS"
        _say(f"replayed {report.trace_id} as {report.replay_trace_id}: {verdict}")
        same = {"answer": report.same_answer, "citations": report.same_citations, "rankings": report.same_rankings}
        _say(", ".join(f"{k}: {'same' if v else 'differ'}" for k, v in same.items()))
        _say(
            f"model calls: {report.model_calls_recorded} recorded, {report.model_calls_replayed} replayed, "
            f"{len(report.mismatches)} with another prompt"
        )
        for mismatch in report.mismatches[:SHOWN_MOVES]:
            _say(f"  call {mismatch.position} ({mismatch.recorded}): {mismatch.difference}")
        if report.first_difference:
            _say(f"first difference: {report.first_difference}")
        for note in report.notes:
            _say(f"note: {note}")
    if not report.reproduced:
        raise typer.Exit(DIFFERS)
