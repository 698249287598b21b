"""The real ``lit3r serve`` in a subprocess on a free loopback port, and the corpus homes it serves in tests.

:func:`served_home` ingests the demo corpus and a two-page PDF (:mod:`fakes.pdfs`) and builds the index with the
real default encoder (all-MiniLM-L6-v2, shipped in a package), so the server and the tests embed queries alike.
:class:`ServeProcess` starts ``lit3r --home H serve --port P`` with extra ``LIT3R_`` settings in its environment,
waits (bounded) until ``/healthz`` says an index is loaded, and stops the process it started by its pid.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from lit3r.corpus.ingest import ingest
from lit3r.corpus.store import CorpusStore
from lit3r.index.build import build_index
from lit3r.settings import Settings

from fakes.pdfs import write_glacier_pdf

HOST = "127.0.0.1"
START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 15.0
DEMO_PAPERS = Path(__file__).resolve().parents[2] / "lit3r" / "demo" / "papers"
KEY = "test-key-7f3a"
"""The key of the keyed test server."""
UPLOAD_LIMIT = 64_000
"""The keyed test server's upload limit in bytes."""


def served_home(folder: Path) -> Path:
    """A home with the demo corpus and the glacier PDF ingested and indexed (default settings)."""
    home = folder / "home"
    pdf = write_glacier_pdf(folder / "pdfs" / "glacier-radar.pdf")
    settings = Settings(home=home)
    with CorpusStore(home) as store:
        report = ingest([DEMO_PAPERS, pdf.parent], store)
        assert not report.failed, report.failed
        build_index(settings, store)
    return home


def copy_home(home: Path, target: Path) -> Path:
    """A copy of a home (its PDFs stay where they were ingested from, so page images still work)."""
    shutil.copytree(home, target, symlinks=True)
    return target


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def lit3r_command() -> list[str]:
    script = Path(sys.executable).with_name("lit3r")
    return [str(script)] if script.exists() else [sys.executable, "-c", "from lit3r.cli import app; app()"]


class ServeProcess:
    """``lit3r serve`` running over ``home``; ``env`` adds settings (``LIT3R_SERVER__...``)."""

    def __init__(self, home: Path, env: dict[str, str] | None = None, log: Path | None = None) -> None:
        self.home = home
        self.port = free_port()
        self.base_url = f"http://{HOST}:{self.port}"
        self.log_path = log or home.parent / f"serve-{self.port}.log"
        self.env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **(env or {})}
        self.process: subprocess.Popen | None = None

    def start(self) -> ServeProcess:
        command = [*lit3r_command(), "--home", str(self.home), "serve", "--port", str(self.port)]
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(command, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"lit3r serve exited with {self.process.returncode}:\n{self.log()}")
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=2).json().get("ready"):
                    return self
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"lit3r serve did not become ready in {START_TIMEOUT_S:.0f} s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-4000:]

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(STOP_TIMEOUT_S)

    def __enter__(self) -> ServeProcess:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()
