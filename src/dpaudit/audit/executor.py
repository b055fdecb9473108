"""The executor seam shared by every auditor.

A *work unit* is a small picklable value — mechanism spec, input pair, chunk
index and seed — and a top-level function turns it into *sufficient
statistics* that merge by addition (counts, histograms).  Because each unit
seeds its own generator from (root seed, key) — see :mod:`dpaudit.random` — and
results are merged in unit order, the outcome is bit-identical whatever the
backend, the number of workers or the assignment of units to workers.

Backends:

* ``local`` — the embedded engine: in-process for one worker, otherwise a pool
  of processes (``fork`` on POSIX, so mechanisms defined in the user's own
  module or ``__main__`` work unchanged);
* ``ray`` — Ray's task API, on a local Ray instance or an existing cluster
  (``ray_address``); needs the ``ray`` extra.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from dpaudit.errors import DPAuditError, InvalidArgumentError, OptionalDependencyError
from dpaudit.progress import progress
from dpaudit.validation import check_int

U = TypeVar("U")
R = TypeVar("R")

BACKENDS = ("local", "ray")


@dataclass(frozen=True)
class ExecutionConfig:
    """How to run work units: backend, number of workers, Ray cluster address."""

    backend: str = "local"
    workers: int | None = None
    ray_address: str | None = None

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise InvalidArgumentError("backend", self.backend, f"one of {', '.join(BACKENDS)}")
        if self.workers is not None:
            check_int("workers", self.workers, minimum=1, maximum=4096)

    @property
    def n_workers(self) -> int:
        """Workers to use: the given number, else the machine's core count."""
        return self.workers if self.workers is not None else (os.cpu_count() or 1)


def run_units(
    fn: Callable[[U], R],
    units: Sequence[U],
    config: ExecutionConfig | None = None,
    *,
    desc: str = "working",
    on_result: Callable[[int, R], None] | None = None,
) -> list[R]:
    """Apply ``fn`` to every unit and return the results **in unit order**.

    ``fn`` must be a module-level function (picklable).  ``on_result(i, r)`` is
    called as each result arrives (used for checkpointing); arrival order may
    vary, the returned list never does.
    """
    config = config or ExecutionConfig()
    results: list[Any] = [None] * len(units)
    with progress(len(units), desc) as bar:
        for i, r in _iter_results(fn, units, config):
            results[i] = r
            if on_result is not None:
                on_result(i, r)
            bar.update(1)
    return results


def _iter_results(
    fn: Callable[[U], R], units: Sequence[U], config: ExecutionConfig
) -> Iterator[tuple[int, R]]:
    if config.backend == "ray":
        yield from _iter_ray(fn, units, config)
        return
    workers = min(config.n_workers, max(1, len(units)))
    if workers == 1:
        for i, u in enumerate(units):
            yield i, fn(u)
        return
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    with ctx.Pool(workers) as pool:
        indexed = pool.imap_unordered(_IndexedCall(fn), list(enumerate(units)), chunksize=1)
        yield from indexed


class _IndexedCall:
    """Picklable wrapper returning ``(index, fn(unit))``."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    def __call__(self, item: tuple[int, Any]) -> tuple[int, Any]:
        i, unit = item
        return i, self.fn(unit)


def _iter_ray(
    fn: Callable[[U], R], units: Sequence[U], config: ExecutionConfig
) -> Iterator[tuple[int, R]]:
    try:
        import ray
    except ImportError:
        raise OptionalDependencyError("ray", "ray", "--backend ray") from None
    if not ray.is_initialized():
        try:
            if config.ray_address:
                ray.init(address=config.ray_address, log_to_driver=False)
            else:
                ray.init(num_cpus=config.n_workers, include_dashboard=False, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise InvalidArgumentError(
                "ray_address", config.ray_address, f"a reachable Ray cluster ({exc})"
            ) from None
    remote = ray.remote(max_retries=3)(fn)
    pending = {remote.remote(u): i for i, u in enumerate(units)}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            i = pending.pop(ref)
            try:
                yield i, ray.get(ref)
            except ray.exceptions.RayTaskError as exc:
                cause = exc.cause if hasattr(exc, "cause") else exc
                if isinstance(cause, DPAuditError):
                    raise cause from None
                raise
