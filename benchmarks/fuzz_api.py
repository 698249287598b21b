"""Fuzz ``lit3r serve`` against its own OpenAPI document with schemathesis; no request may get a 5xx.

Run from the repository root (``make fuzz-api``)::

    python benchmarks/fuzz_api.py --max-examples 25 --out bench-out/fuzz-api

The demo corpus and the tests' two-page PDF are indexed under a temporary home, and the real server is started
in a subprocess on a free 127.0.0.1 port with an API key. schemathesis reads ``/openapi.json`` and sends
generated requests, valid and invalid, to every operation (``--max-examples`` per operation and phase, a fixed
seed) with the key, checking that no response is a server error, that statuses and content types are the
documented ones and that JSON bodies match their schemas. The server's own access log is read afterwards and
every 5xx it answered is counted, whatever schemathesis reports. Exit code 1 when any 5xx was answered.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the test builders: home and server
from fakes.lit3r_server import ServeProcess, served_home  # noqa: E402

KEY = "fuzz-key"
CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
ACCESS = re.compile(r'"(?P<method>[A-Z]+) (?P<path>\S+) HTTP/1\.1" (?P<status>\d{3})')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-examples", type=int, default=25)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("bench-out/fuzz-api"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    schemathesis = Path(sys.executable).with_name("schemathesis")
    with tempfile.TemporaryDirectory(prefix="lit3r-fuzz-") as tmp:
        home = served_home(Path(tmp))
        keys = Path(tmp) / "keys"
        keys.write_text(KEY + "\n", encoding="utf-8")
        env = {"LIT3R_SERVER__API_KEY_FILE": str(keys), "LIT3R_SERVER__MAX_CONCURRENT_ANSWERS": "4"}
        with ServeProcess(home, env, log=args.out / "server.log") as server:
            command = [
                str(schemathesis), "run", f"{server.base_url}/openapi.json",
                "--header", f"Authorization: Bearer {KEY}",
                "--checks", CHECKS,
                "--max-examples", str(args.max_examples),
                "--seed", str(args.seed),
                "--workers", "1",
                "--request-timeout", "120",
                "--continue-on-failure",
                "--report", "junit",
                "--report-dir", str(args.out),
                "--no-color",
                "--generation-database", "none",
            ]  # fmt: skip
            done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
        (args.out / "schemathesis.txt").write_text(done.stdout + done.stderr, encoding="utf-8")
    statuses: dict[str, int] = {}
    server_errors = []
    for match in ACCESS.finditer((args.out / "server.log").read_text(encoding="utf-8", errors="replace")):
        statuses[match["status"]] = statuses.get(match["status"], 0) + 1
        if match["status"].startswith("5"):
            server_errors.append(f"{match['method']} {match['path']} -> {match['status']}")
    summary = {
        "requests": sum(statuses.values()),
        "statuses": dict(sorted(statuses.items())),
        "server_errors": len(server_errors),
        "server_error_samples": server_errors[:20],
        "schemathesis_exit": done.returncode,
        "schemathesis_summary": done.stdout.strip().splitlines()[-30:],
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    print(json.dumps(summary, indent=1))
    sys.exit(1 if server_errors else 0)


if __name__ == "__main__":
    main()
