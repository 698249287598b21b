"""``langgraph dev`` serving lit3r's ``langgraph.json`` offline, inside a loopback-only network namespace, driven
with ``langgraph_sdk``: the assistant, a thread, a streamed run with trace steps as custom events, and the
thread's final state with a cited answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lit3r.index.corpus_index import CorpusIndex
from lit3r.settings import Settings

from fakes.demo import DEMO_QUESTION

pytest.importorskip("langgraph_api", reason="the 'platform' extra is not installed: pip install -e '.[platform]'")
pytest.importorskip("langgraph_cli", reason="the 'platform' extra is not installed: pip install -e '.[platform]'")

DRIVER = Path(__file__).resolve().parents[1] / "fakes" / "langgraph_dev.py"


@pytest.mark.slow
def test_langgraph_dev_serves_the_agent_offline_in_a_loopback_only_namespace(demo_home: Path) -> None:
    driver = f"{sys.executable} {DRIVER} --home {demo_home} --question '{DEMO_QUESTION}'"
    done = subprocess.run(
        ["unshare", "-n", "sh", "-c", f"ip link set lo up && exec {driver}"],
        capture_output=True,
        text=True,
        timeout=400,
    )
    log = demo_home / "langgraph-dev" / "server.log"
    assert done.returncode == 0, f"{done.stderr[-3000:]}\n{log.read_text()[-3000:] if log.exists() else ''}"
    seen = json.loads(done.stdout)
    assert seen["assistants"] == ["lit3r"]
    steps = [(e["type"], e["name"]) for e in seen["custom_events"]]
    assert ("tool", "search_chunks") in steps and ("node", "synthesize_answer") in steps
    assert all(e["lit3r"] == "trace_event" and e["summary"] for e in seen["custom_events"])
    final = seen["final_state"]
    assert seen["streamed_values"].items() <= final.items() and final["question"] == DEMO_QUESTION
    assert final["sufficient"] and final["candidate_papers"][0] == "demo-evidence-verification"
    index = CorpusIndex.open(Settings(home=demo_home))
    assert final["citations"]
    for citation in final["citations"]:
        chunk = index.chunk_by_id[citation["chunk_id"]]
        assert " ".join(citation["quote"].split()) in " ".join(chunk.text.split())
    assert (demo_home / "traces" / f"{final['trace_id']}.json").is_file()
