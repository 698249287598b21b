"""A local OpenAI-compatible model server, started and stopped by lit3r around a run.

:class:`LocalServer` runs ``python -m llama_cpp.server`` (the ``local`` extra, which compiles llama.cpp) or
``python -m lit3r.llm.wheel_server`` (gpt4all's prebuilt llama.cpp, the ``local-wheel`` extra), as
``llm.local.runtime`` and :func:`server_program` choose, on a free loopback port with the same options,
waits until ``GET /v1/models`` answers, and on exit terminates it (then kills it); its output goes to
``<home>/logs/llama-server.log``. :func:`local_llm` wraps a run: for ``llm.provider == 'local'`` without a
``base_url`` it prepares the model file (:mod:`lit3r.llm.local_model`), starts the server and yields
settings whose ``llm.base_url`` points at it, so the ordinary ``ChatOpenAI`` path serves the run. Other
providers pass through untouched, and so does a run already inside :func:`local_llm`.

Structured output: the server's default chat handler (the chat template stored in the GGUF) turns a
*forced* tool call into a grammar built from the tool's JSON schema, so every reply parses; it ignores a
``json_schema`` response format. That is why ``structured_output='auto'`` means ``function_calling`` for this
provider. A free tool choice (planner 'llm') needs ``llm.local.chat_format='chatml-function-calling'``.
The wheel server has no grammar: it asks for the forced call's JSON and validates it (see its docstring).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lit3r.llm.errors import LLMConfigError
from lit3r.llm.local_model import PACKAGED, LocalModelError, local_model_path, part_paths
from lit3r.settings.llm import LocalSettings

if TYPE_CHECKING:
    from lit3r.settings import Settings

logger = logging.getLogger(__name__)

LLAMA_SERVER = (sys.executable, "-m", "llama_cpp.server")
WHEEL_SERVER = (sys.executable, "-m", "lit3r.llm.wheel_server")
RUNTIME_MODULES = {"llama_cpp": "llama_cpp", "gpt4all": "gpt4all"}
INSTALL_HINTS = {
    "llama_cpp": "pip install 'lit3r[local]' (or make install-local; it compiles llama.cpp, about 15 minutes on "
    "2 cores)",
    "gpt4all": "pip install 'lit3r[local-wheel]' (or make install-local-wheel; prebuilt wheels, no compiler)",
}
LOG_FILE = Path("logs") / "llama-server.log"
HOST = "127.0.0.1"
POLL_S = 0.25
STOP_WAIT_S = 10.0
TAIL_LINES = 20


class LocalServerError(LLMConfigError):
    """The local server could not be started: not installed, exited early, or never answered."""


def installed(module: str) -> bool:
    """Whether ``module`` can be imported here (without importing it: llama_cpp loads its library on import)."""
    return importlib.util.find_spec(module) is not None


def chosen_runtime(runtime: str) -> str:
    """The runtime ``llm.local.runtime`` means: 'auto' is llama_cpp when llama-cpp-python is installed, else
    gpt4all when gpt4all is, else llama_cpp (whose error then names both extras)."""
    if runtime != "auto":
        return runtime
    if installed(RUNTIME_MODULES["llama_cpp"]) or not installed(RUNTIME_MODULES["gpt4all"]):
        return "llama_cpp"
    return "gpt4all"


def server_program(runtime: str) -> tuple[str, ...]:
    """The command that starts the server of ``runtime`` ('auto' resolved by :func:`chosen_runtime`)."""
    return WHEEL_SERVER if chosen_runtime(runtime) == "gpt4all" else LLAMA_SERVER


def local_unavailable(local: LocalSettings) -> str | None:
    """Why provider 'auto' cannot run the local model here: its runtime or its model is not installed (None: both
    are; whether the server starts is seen when it is started)."""
    runtime = chosen_runtime(local.runtime)
    if not installed(RUNTIME_MODULES[runtime]):
        return f"runtime {runtime!r} is not installed ({INSTALL_HINTS[runtime]})"
    if local.model_path is not None:
        return None if local.model_path.is_file() else f"llm.local.model_path {local.model_path} does not exist"
    try:
        part_paths(PACKAGED[local.model])
    except LocalModelError as exc:
        return str(exc)
    return None


def free_port(host: str = HOST) -> int:
    """A TCP port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def busy_cores(window_s: float = 0.2) -> float | None:
    """How many of the machine's cores are busy now: the non-idle share of CPU time over ``window_s``, from
    ``/proc/stat``, times the cores; None where that cannot be read (not Linux)."""

    def sample() -> tuple[int, int]:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(x) for x in stat.readline().split()[1:9]]  # user nice system idle iowait irq softirq steal
        return fields[3] + fields[4], sum(fields)

    try:
        idle_before, total_before = sample()
        time.sleep(window_s)
        idle_after, total_after = sample()
    except (OSError, ValueError, IndexError):
        return None
    elapsed = total_after - total_before
    if elapsed <= 0:
        return 0.0
    return (1 - (idle_after - idle_before) / elapsed) * (os.cpu_count() or 1)


def default_threads(cores: int | None = None, busy: float | None = None) -> int:
    """The cores that are free when the model starts: of the machine's cores less those other work keeps busy
    (:func:`busy_cores`, counted over the whole machine), at most the cores lit3r may run on, at least one. While
    lit3r waits for the model's reply it computes nothing, so on an idle 2-core machine both cores read (a demo
    question in 27.6 s, where one thread took 52.2 s: docs/BENCHMARKS.md); llama.cpp's threads wait for each
    other, so a thread that finds no free core stalls them all (2 threads on 2 cores beside another busy process
    generated 0.35 tokens/s), hence the busy ones are left out. ``llm.local.n_threads`` overrides it."""
    if cores is None:
        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:  # no affinity call (not Linux)
            cores = os.cpu_count() or 1
    busy = busy_cores() if busy is None else busy
    free = (os.cpu_count() or cores) - round(busy or 0.0)
    return max(1, min(cores, free))


def server_arguments(model: Path, port: int, alias: str, local: LocalSettings) -> list[str]:
    """The ``llama_cpp.server`` command-line options for ``model`` on ``port``."""
    threads = str(local.n_threads or default_threads())
    arguments = ["--model", str(model), "--model_alias", alias, "--host", HOST, "--port", str(port)]
    arguments += ["--n_ctx", str(local.n_ctx), "--n_threads", threads, "--n_threads_batch", threads]
    if local.chat_format:
        arguments += ["--chat_format", local.chat_format]
    if local.cache:
        arguments += ["--cache", "true"]
    return arguments


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the kernel kills the server if lit3r itself dies (SIGKILL: uvicorn waits out a request on SIGTERM)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def log_tail(path: Path, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` lines of ``path`` (empty when it is missing)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])


class LocalServer:
    """A llama.cpp server process for the length of a ``with`` block.

    Args:
        model: the GGUF file to serve.
        log_path: where the server's stdout and stderr go (appended).
        local: context size, threads, chat format and start-up deadline.
        alias: the model name the server answers to (and reports in /v1/models).
        program: the command that starts the server, before its options (default: ``local.runtime``'s, see
            :func:`server_program`; tests pass a fake server script).
    """

    def __init__(
        self,
        model: Path,
        log_path: Path,
        local: LocalSettings | None = None,
        *,
        alias: str | None = None,
        program: Sequence[str] | None = None,
    ) -> None:
        self.model = model
        self.log_path = log_path
        self.local = local or LocalSettings()
        self.alias = alias or model.stem
        self.program = tuple(program) if program else server_program(self.local.runtime)
        self.port: int | None = None
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL of the running server, e.g. ``http://127.0.0.1:41234/v1``."""
        if self.port is None:
            raise LocalServerError("the local server is not running")
        return f"http://{HOST}:{self.port}/v1"

    def start(self) -> LocalServer:
        """Start the server and wait until it answers ``GET /v1/models``; stop it again if it does not."""
        for runtime, module in (("llama_cpp", "llama_cpp.server"), ("gpt4all", "lit3r.llm.wheel_server")):
            if module in self.program and not installed(RUNTIME_MODULES[runtime]):
                other = "gpt4all" if runtime == "llama_cpp" else "llama_cpp"
                raise LocalServerError(
                    f"provider 'local' with runtime {runtime!r} needs {RUNTIME_MODULES[runtime]}: "
                    f"{INSTALL_HINTS[runtime]}; or, for runtime {other!r}: {INSTALL_HINTS[other]}"
                )
        self.port = free_port()
        command = [*self.program, *server_arguments(self.model, self.port, self.alias, self.local)]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            log.write(f"\n# lit3r: {' '.join(command)}\n".encode())
            log.flush()
            preexec = _die_with_parent if sys.platform == "linux" else None
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, preexec_fn=preexec
            )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        """Poll ``/v1/models`` until it answers, the process exits, or the start-up deadline passes."""
        assert self.process is not None
        deadline = time.monotonic() + self.local.startup_timeout_s
        while True:
            if (code := self.process.poll()) is not None:
                raise LocalServerError(self._failure(f"the local server exited with code {code} while starting"))
            if self.models() is not None:
                return
            if time.monotonic() >= deadline:
                raise LocalServerError(
                    self._failure(f"the local server did not answer within {self.local.startup_timeout_s:g} s")
                )
            time.sleep(POLL_S)

    def _failure(self, what: str) -> str:
        """``what``, the command's log file and the log's last lines."""
        tail = log_tail(self.log_path)
        return f"{what} (model {self.model}; log {self.log_path}):\n{tail}" if tail else f"{what} ({self.log_path})"

    def models(self) -> dict[str, Any] | None:
        """The server's ``/v1/models`` document, or None when it does not answer (yet)."""
        if self.port is None:
            return None
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never via a proxy
        try:
            with opener.open(f"{self.base_url}/models", timeout=2) as response:
                return json.loads(response.read())
        except (urllib.error.URLError, OSError, ValueError):
            return None

    def stop(self) -> None:
        """Terminate the server, and kill it if it has not exited after :data:`STOP_WAIT_S` seconds."""
        process, self.process = self.process, None
        self.port = None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()


@contextmanager
def local_llm(
    settings: Settings, *, home: Path | None = None, program: Sequence[str] | None = None
) -> Iterator[Settings]:
    """``settings`` with a local server running behind ``llm.base_url`` while the block runs.

    Only for ``llm.provider`` 'local' (or 'auto') without a ``base_url``; any other settings are yielded unchanged.
    'auto' is 'local' when :func:`local_unavailable` finds the runtime and the model and the server starts, else
    'none': the settings yielded then answer offline, and the reason is logged as a warning.
    ``home`` holds ``models/`` and ``logs/`` (default: ``settings.home``).
    The yielded ``llm.model`` is the server's model alias (the GGUF file's stem), so traces name the model.
    Ctrl-C and errors inside the block stop the server too.
    """
    llm = settings.llm
    if llm.provider not in ("local", "auto") or llm.base_url:
        yield settings
        return
    offline = settings.model_copy(update={"llm": llm.model_copy(update={"provider": "none"})})
    if llm.provider == "auto" and (reason := local_unavailable(llm.local)) is not None:
        logger.info("provider 'auto' answers offline: %s", reason)
        yield offline
        return
    home = home if home is not None else settings.home
    try:
        model = local_model_path(llm.local.model_path, home, PACKAGED[llm.local.model])
        server = LocalServer(model, home / LOG_FILE, llm.local, program=program).start()
    except (LocalServerError, LocalModelError) as exc:
        if llm.provider != "auto":
            raise
        logger.warning("provider 'auto' answers offline: the local model server did not start: %s", exc)
        yield offline
        return
    try:
        served = llm.model_copy(update={"provider": "local", "base_url": server.base_url, "model": server.alias})
        yield settings.model_copy(update={"llm": served})
    finally:
        server.stop()
