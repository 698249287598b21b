"""Runs the Ray cluster tests (tests/cluster/ray_cluster.py) inside a loopback-only network namespace.

Ray nodes advertise the machine's address and listen on it; in a fresh
network namespace with only ``lo`` up, the head, the two worker nodes and the
client see 127.0.0.1 alone, so nothing is reachable from, or sent beyond, this
machine. The cluster tests run as one pytest process in that namespace; this
test passes when every one of them passed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ray_support import NAMESPACE_ENV, QASPER

ROOT = Path(__file__).resolve().parents[2]
CLUSTER_TESTS = ROOT / "tests" / "cluster" / "ray_cluster.py"


def _namespace_command() -> list[str]:
    pytest.importorskip("ray", reason="the ray extra is not installed (`make install` installs it)")
    if not QASPER.exists():
        pytest.skip(f"needs the shared data folder (the cluster indexes a QASPER subset): {QASPER}")
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs unshare (util-linux) and ip (iproute2) to make a loopback-only network namespace")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot create a network namespace here (root or user namespaces needed): {probe.stderr.strip()}")
    inner = f"ip link set lo up && exec {sys.executable} -m pytest -q -p no:cacheprovider {CLUSTER_TESTS}"
    return ["unshare", "-n", "sh", "-c", inner]


@pytest.mark.slow
@pytest.mark.shared_data
def test_cluster_tests_pass_in_a_loopback_namespace() -> None:
    command = _namespace_command()
    env = {**os.environ, NAMESPACE_ENV: "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    output = run.stdout + run.stderr
    summary = output.strip().splitlines()[-1] if output.strip() else ""
    assert run.returncode == 0, output[-8000:]
    expected = len(re.findall(r"^def test_", CLUSTER_TESTS.read_text(encoding="utf-8"), re.MULTILINE))
    passed = re.search(r"(\d+) passed", summary)
    assert passed and int(passed.group(1)) == expected, output[-4000:]
    assert not re.search(r"skipped|failed|error", summary), output[-4000:]
