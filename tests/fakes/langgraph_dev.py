"""Start ``langgraph dev`` on lit3r's ``langgraph.json`` and drive it with ``langgraph_sdk``; print what it saw.

Run as a script (the protocol test runs it inside a loopback-only network namespace, so the server and this
client share the namespace's loopback):

    python tests/fakes/langgraph_dev.py --home HOME --question Q

It starts the server with analytics and tracing off, waits for ``/ok``, lists the assistants, creates a thread,
streams one run (``custom`` and ``values`` events) with the context ``{"home": HOME}``, reads the thread's final
state, stops the server by its pid, and prints one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OFFLINE = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGSMITH_TRACING": "false",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_ok(url: str, proc: subprocess.Popen, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"langgraph dev exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"langgraph dev did not answer /ok within {timeout_s} s")


def drive(url: str, home: str, question: str) -> dict:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=url)
    assistants = client.assistants.search(graph_id="lit3r")
    thread = client.threads.create()
    events: list[dict] = []
    values: dict = {}
    for part in client.runs.stream(
        thread["thread_id"],
        "lit3r",
        input={"question": question},
        context={"home": home},
        stream_mode=["custom", "values"],
    ):
        if part.event == "custom":
            events.append(part.data)
        elif part.event == "values":
            values = part.data
        elif part.event == "error":
            raise RuntimeError(f"the run failed: {part.data}")
    state = client.threads.get_state(thread["thread_id"])
    return {
        "assistants": [a["graph_id"] for a in assistants],
        "thread_id": thread["thread_id"],
        "custom_events": events,
        "streamed_values": values,
        "final_state": state["values"],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", required=True)
    parser.add_argument("--question", required=True)
    parser.add_argument("--timeout", type=float, default=240)
    args = parser.parse_args()
    port = free_port()
    langgraph = str(Path(sys.executable).parent / "langgraph")
    config = str(ROOT / "langgraph.json")
    command = [langgraph, "dev", "--no-browser", "--no-reload", "--port", str(port), "--config", config]
    work = Path(args.home) / "langgraph-dev"  # the dev server keeps its in-memory store's files under its cwd
    work.mkdir(exist_ok=True)
    log = open(work / "server.log", "w")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen(command, cwd=work, env={**os.environ, **OFFLINE}, stdout=log, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ok(url, proc, args.timeout)
        print(json.dumps(drive(url, args.home, args.question)))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


if __name__ == "__main__":
    main()
