"""A Ray cluster of separate processes on this machine: a head and worker nodes on 127.0.0.1.

Each node is one ``ray start --block`` process in its own process group; its
Ray processes are its children and die with it, and on Linux it is stopped
when the process that started the cluster dies, however that dies. The cluster is stopped by
those process ids only, never with ``ray stop`` (which ends every Ray process
on the host, other users' included). Token authentication is on: the nodes
and the client share a random token (:attr:`LocalCluster.env`).

Ray advertises the machine's external address to its peers; run the cluster
(and its client) inside a loopback-only network namespace so nothing listens
beyond this machine (``unshare -n`` with ``lo`` up; see tests/test_ray_namespace.py).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HOST = "127.0.0.1"
STARTED = "Ray runtime started."
"""What ``ray start`` (2.60) prints once its node runs."""


@dataclass
class Node:
    """One ``ray start --block`` process."""

    name: str
    process: subprocess.Popen
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


class LocalCluster:
    """A head (``head_cpus`` CPUs) and ``workers`` worker nodes (``worker_cpus`` each) on 127.0.0.1."""

    def __init__(self, workers: int = 2, worker_cpus: int = 1, head_cpus: int = 0, env: dict[str, str] | None = None):
        self.workers = workers
        self.worker_cpus = worker_cpus
        self.head_cpus = head_cpus
        self.port = free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="lit3r-ray-", dir="/tmp"))  # Ray's socket paths must be short
        self.env = {
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": secrets.token_hex(32),
            "RAY_USAGE_STATS_ENABLED": "0",
            **(env or {}),
        }
        self.nodes: list[Node] = []

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    def _ray(self, name: str, *args: str) -> Node:
        log = self.folder / f"{name}.log"
        command = [str(Path(sys.executable).with_name("ray")), "start", "--block", "--node-ip-address", HOST, *args]
        with log.open("wb") as handle:
            process = subprocess.Popen(
                command,
                stdout=handle,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.env},
                start_new_session=True,  # its own process group: the node and its children
                preexec_fn=_stop_with_parent if sys.platform == "linux" else None,
            )
        node = Node(name, process, log)
        self.nodes.append(node)
        return node

    def start(self, timeout_s: float = 120.0) -> LocalCluster:
        """Start the head, then the workers one after another, each once the previous one is up."""
        head_args = ["--head", "--port", str(self.port), "--num-cpus", str(self.head_cpus)]
        head_args += ["--include-dashboard", "false", "--disable-usage-stats", "--temp-dir", str(self.folder / "t")]
        self._wait_started(self._ray("head", *head_args), timeout_s)
        for number in range(self.workers):
            self.add_worker(f"worker-{number}", timeout_s)
        return self

    def add_worker(self, name: str | None = None, timeout_s: float = 120.0) -> Node:
        """Start one more worker node and wait until it runs (nodes starting together can time out)."""
        name = name or f"worker-{len(self.nodes)}"
        args = ["--address", self.address, "--num-cpus", str(self.worker_cpus), "--temp-dir", str(self.folder / "t")]
        return self._wait_started(self._ray(name, *args), timeout_s)

    def _wait_started(self, node: Node, timeout_s: float) -> Node:
        """Wait until ``ray start`` reports the node's runtime started (what it prints before it blocks)."""
        deadline = time.monotonic() + timeout_s
        while STARTED not in node.log.read_text(errors="replace"):
            self._check_alive(node)
            if time.monotonic() > deadline:
                raise TimeoutError(f"Ray {node.name} did not start in {timeout_s:.0f} s; see {node.log}")
            time.sleep(0.2)
        return node

    def _check_alive(self, node: Node) -> None:
        if node.process.poll() is not None:
            tail = node.log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"Ray {node.name} exited with {node.process.returncode}:\n{tail}")

    def wait_for_nodes(self, ray, count: int | None = None, timeout_s: float = 120.0) -> None:
        """Wait until the connected cluster (``ray`` initialised) has ``count`` alive nodes (default: all)."""
        count = len(self.live_nodes()) if count is None else count
        deadline = time.monotonic() + timeout_s
        while sum(1 for n in ray.nodes() if n.get("Alive")) < count:
            for node in self.live_nodes():
                self._check_alive(node)
            if time.monotonic() > deadline:
                raise TimeoutError(f"fewer than {count} Ray nodes alive after {timeout_s:.0f} s; logs in {self.folder}")
            time.sleep(0.5)

    def live_nodes(self) -> list[Node]:
        return [n for n in self.nodes if n.process.poll() is None]

    def kill(self, node: Node) -> None:
        """Kill a node at once (SIGKILL to its process group), as a machine failure would."""
        _kill_group(node.pid, signal.SIGKILL)
        node.process.wait()

    def stop(self, grace_s: float = 20.0) -> None:
        """Stop every node (workers first) by its process id, then remove the cluster's folder."""
        for node in reversed(self.nodes):
            if node.process.poll() is None:
                node.process.send_signal(signal.SIGTERM)  # `ray start --block` stops its node's processes
        for node in reversed(self.nodes):
            try:
                node.process.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                pass
            _kill_group(node.pid, signal.SIGKILL)  # whatever of the node outlived the grace period
            node.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _stop_with_parent() -> None:
    """In a node's process, before ``ray start`` runs: SIGTERM when the process that started it dies (Linux)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _kill_group(pid: int, sig: int) -> None:
    """Signal the process group that ``pid`` leads (a node started with its own session)."""
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass
