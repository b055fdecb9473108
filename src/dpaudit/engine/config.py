"""How work units are to be run: :class:`ExecutionConfig` and what it validates.

Part of the execution engine (:mod:`dpaudit.engine`); imports nothing from
``auditors/``, ``mechanisms/`` or above.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dpaudit.errors import DPAuditError, InvalidArgumentError
from dpaudit.validation import check_int

if TYPE_CHECKING:
    from dpaudit.engine.checkpoint import Session

BACKENDS = ("local", "ray")


class WorkerLostError(DPAuditError, RuntimeError):
    """A worker process died and the lost units could not be completed by retrying."""


#: Most worker processes (or Ray CPUs) one run may ask for.
MAX_WORKERS = 4096


def default_workers() -> int:
    """The number of CPU cores this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


@dataclass(frozen=True)
class ExecutionConfig:
    """How to run work units.

    ``backend``: ``local`` or ``ray``; ``workers``: processes (local) or CPUs of
    the local Ray instance / tasks in flight (ray), default the core count
    (local) or the cluster's CPUs (ray); ``ray_address``: join an existing Ray
    cluster (``HOST:PORT``, ``ray://HOST:PORT`` or ``auto``); ``max_retries``:
    how often the units lost with a dead worker are re-run; ``session``: the
    checkpoint session (:class:`dpaudit.engine.checkpoint.Session`) that stores
    every unit result and applies the per-unit timeout, or ``None`` (plain
    run).  The session travels *in the configuration* every auditor already
    takes, so checkpointing is explicit at each call (no context variable); it
    never changes a result and is left out of equality.
    """

    backend: str = "local"
    workers: int | None = None
    ray_address: str | None = None
    max_retries: int = 3
    session: Session | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise InvalidArgumentError("backend", self.backend, f"one of {', '.join(BACKENDS)}")
        if self.workers is not None:
            check_int("workers", self.workers, minimum=1, maximum=MAX_WORKERS)
        check_int("max_retries", self.max_retries, minimum=0, maximum=100)
        if self.ray_address is not None:
            parse_ray_address(self.ray_address)

    @property
    def n_workers(self) -> int:
        """Workers to use: the given number, else the machine's core count."""
        return self.workers if self.workers is not None else default_workers()


def parse_ray_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a cluster address, ``None`` for ``auto``/``local``; else an error."""
    text = address.strip()
    if text in ("auto", "local"):
        return None
    allowed = "HOST:PORT, ray://HOST:PORT or auto"
    body = text.removeprefix("ray://")
    host, sep, port = body.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InvalidArgumentError("--ray-address", address, allowed)
    return host, int(port)
