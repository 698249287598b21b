"""Joining a Ray cluster: the cluster named by the settings, or a clear error that names it.

Ray waits minutes for a head that is not there, so the head's port is tried
first with a short timeout. Ray is an optional extra; without it every entry
point says how to install it.
"""

from __future__ import annotations

import logging
import socket
from types import ModuleType
from urllib.parse import urlsplit

from lit3r.index.corpus_index import IndexNotBuiltError
from lit3r.settings import RaySettings

INSTALL_HINT = "install the ray extra: pip install -e '.[ray]'"
AUTH_HINT = (
    "if the cluster uses token authentication, set RAY_AUTH_MODE=token and the cluster's token "
    "(RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token) here too"
)


LOOPBACK = ("127.0.0.1", "localhost", "::1")


class ClusterError(IndexNotBuiltError):
    """Raised when the Ray cluster cannot be used: not installed, unreachable, refused, or a shard failed.

    A kind of :class:`IndexNotBuiltError`: to a command, an index whose shards cannot be reached is not
    usable, and every command already reports that error by its message.
    """


def import_ray() -> ModuleType:
    """The ``ray`` module, or :class:`ClusterError` saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ClusterError(f"Ray is not installed ({exc}); {INSTALL_HINT}") from exc
    return ray


def head_endpoint(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of an address ``host:port`` or ``ray://host:port``; None for ``auto``/``local``."""
    if address in ("auto", "local"):
        return None
    split = urlsplit(address if "://" in address else f"ray://{address}")
    try:
        port = split.port
    except ValueError as exc:
        raise ClusterError(f"invalid Ray address {address!r}: {exc}") from exc
    if not split.hostname or port is None:
        raise ClusterError(f"invalid Ray address {address!r}: expected HOST:PORT, e.g. 127.0.0.1:6379")
    return split.hostname, port


def check_reachable(address: str, timeout_s: float) -> None:
    """Raise :class:`ClusterError` naming ``address`` unless something accepts connections there."""
    endpoint = head_endpoint(address)
    if endpoint is None:
        return
    try:
        with socket.create_connection(endpoint, timeout=timeout_s):
            pass
    except OSError as exc:
        raise ClusterError(
            f"no Ray cluster reachable at {address} ({exc}); start one with "
            f"`ray start --head --node-ip-address 127.0.0.1 --port {endpoint[1]}` or correct ray.address"
        ) from exc


def connect(settings: RaySettings) -> ModuleType:
    """Join the cluster at ``settings.address`` (once per process) and return the ``ray`` module."""
    if not settings.address:
        raise ClusterError("no Ray cluster configured: pass --ray ADDRESS or set LIT3R_RAY__ADDRESS")
    ray = import_ray()
    if ray.is_initialized():
        return ray
    check_reachable(settings.address, settings.connect_timeout_s)
    options = {}
    endpoint = head_endpoint(settings.address)
    if endpoint is not None and endpoint[0] in LOOPBACK and "://" not in settings.address:
        # a head on loopback: this client joins as 127.0.0.1 too (Ray would advertise the machine's address)
        options["_node_ip_address"] = "127.0.0.1"
    try:
        ray.init(
            address=settings.address, namespace="lit3r", logging_level=logging.ERROR, log_to_driver=False, **options
        )
    except (ConnectionError, RuntimeError, ray.exceptions.RaySystemError, ray.exceptions.AuthenticationError) as exc:
        raise ClusterError(f"cannot join the Ray cluster at {settings.address}: {exc}; {AUTH_HINT}") from exc
    import ray.data  # configures its loggers on import: quieten them after

    ray.data.DataContext.get_current().enable_progress_bars = False
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.WARNING)
    return ray


def cluster_cpus(ray: ModuleType) -> float:
    """CPUs of the cluster's alive nodes."""
    return float(ray.cluster_resources().get("CPU", 0.0))
