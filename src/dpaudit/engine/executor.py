"""The executor seam shared by every auditor.

A *work unit* is a small picklable value — mechanism spec, input pair, chunk
index and seed — and a module-level function turns it into *sufficient
statistics* that merge by addition (counts, histograms).  Because each unit
seeds its own generator from (root seed, key) — see :mod:`dpaudit.random` — and
results are returned in unit order, the outcome is bit-identical whatever the
backend, the number of workers or the assignment of units to workers.

Backends
--------
* ``local`` — the embedded engine.  One worker runs in-process; more use a
  :class:`concurrent.futures.ProcessPoolExecutor` started with ``fork`` on
  POSIX (not macOS, where fork is unsafe), so mechanisms defined in the user's
  own module or in ``__main__`` work unchanged; ``spawn`` elsewhere.
* ``ray`` — Ray's own task API (``ray.remote``), on an existing cluster
  (``ray_address``) or on a local Ray instance with ``num_cpus = workers``,
  started once per process and shut down at exit.  Needs the ``ray`` extra.
  Functions and units travel cloudpickled (code from ``__main__`` by value);
  the workers of a local instance get the driver's import path, so the user's
  own modules import there too; on a cluster they must be installed on every
  node or shipped with a runtime environment (``DPAUDIT_RAY_RUNTIME_ENV``).

Batching
--------
Units are grouped into *batches* of consecutive units, one task per batch, so
that inter-process overhead stays small even for tiny units: the first batches
hold one unit, later ones are sized from the measured time per unit to take
about :data:`TARGET_BATCH_SECONDS`, never more than a fair share of what is
left (so the tail stays balanced across workers).

Faults
------
* An exception raised by a unit stops the run and is re-raised in the caller
  with its type, message and attributes intact (so a :class:`DPAuditError` from
  a mechanism reaches the CLI, which prints it with exit 2); the worker's
  traceback is attached as ``__cause__``.
* A worker process that dies (``os._exit``, a signal, the OOM killer) breaks
  the pool; the units that were in flight are re-run on a fresh pool — a retry
  gives the same result because units are seeded deterministically — at most
  ``max_retries`` times, then :class:`WorkerLostError`.  Ray retries crashed
  tasks itself (``max_retries``) and ends with the same error.
* An unreachable ``ray_address`` raises :class:`InvalidArgumentError` before
  any unit runs (a TCP probe with a short timeout; Ray itself would wait for
  minutes).
* A parent that dies — even by ``kill -9``, which runs no clean-up — leaves no
  orphaned pool workers behind: every worker arms a parent-death guard first
  (:func:`guard_parent_death`): on Linux the kernel sends it ``SIGKILL`` when
  the parent goes (``prctl(PR_SET_PDEATHSIG)``), and everywhere a daemon
  thread checks ``os.getppid()`` every :data:`PARENT_POLL_SECONDS` and exits
  the worker once it has been re-parented.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from dpaudit.engine.batches import Batcher, run_batch, unpack
from dpaudit.engine.config import BACKENDS, ExecutionConfig, WorkerLostError, default_workers
from dpaudit.engine.ray_backend import connect_ray, iter_ray, shutdown_ray
from dpaudit.progress import progress

__all__ = [
    "BACKENDS",
    "ExecutionConfig",
    "WorkerLostError",
    "default_workers",
    "execute",
    "guard_parent_death",
    "prepare_backend",
    "run_units",
    "shutdown_ray",
]

U = TypeVar("U")
R = TypeVar("R")

#: How often a pool worker checks that its parent is still alive (the portable guard).
PARENT_POLL_SECONDS = 0.5

#: ``prctl`` option of Linux's <sys/prctl.h>: signal sent when the parent dies.
_PR_SET_PDEATHSIG = 1


def run_units(
    fn: Callable[[U], R],
    units: Sequence[U],
    config: ExecutionConfig | None = None,
    *,
    desc: str = "working",
    on_result: Callable[[int, R], None] | None = None,
) -> list[R]:
    """Apply ``fn`` to every unit and return the results **in unit order**.

    The single entry point of the engine.  ``fn`` must be a module-level
    function (picklable) and units picklable.  ``on_result(i, r)`` is called in
    the caller's process as each result arrives; arrival order may vary, the
    returned list never does.  Exceptions raised by ``fn`` propagate unchanged.
    When ``config.session`` is set, the call goes through that checkpoint
    session (:meth:`dpaudit.engine.checkpoint.Session.run`): stored results are
    reused, new ones stored, slow units stopped.
    """
    config = config or ExecutionConfig()
    if config.session is not None:
        return config.session.run(fn, units, config, desc=desc, on_result=on_result)
    return execute(fn, units, config, desc=desc, on_result=on_result)


def execute(
    fn: Callable[[U], R],
    units: Sequence[U],
    config: ExecutionConfig,
    *,
    desc: str = "working",
    on_result: Callable[[int, R], None] | None = None,
) -> list[R]:
    """:func:`run_units` without a session: run every unit on ``config``'s backend."""
    units = list(units)
    results: list[Any] = [None] * len(units)
    if not units:
        return results
    done = [False] * len(units)
    with progress(len(units), desc) as bar:
        for i, r in _iter_results(fn, units, config):
            results[i] = r
            done[i] = True
            if on_result is not None:
                on_result(i, r)
            bar.update(1)
    if not all(done):
        # A unit the backend dropped must never pass as a result of None.
        missing = [i for i, d in enumerate(done) if not d]
        raise RuntimeError(
            f"internal error: {len(missing)} work unit(s) returned no result "
            f"(first: #{missing[0]}); please report it"
        )
    return results


def prepare_backend(config: ExecutionConfig) -> None:
    """Check that ``config``'s backend can run, before any work or output starts.

    For ``ray`` this imports Ray and connects to (or starts) the instance, so a
    missing extra or an unreachable cluster is reported up front.  Idempotent.
    """
    if config.backend == "ray":
        connect_ray(config)


def _iter_results(
    fn: Callable[[U], R], units: list[U], config: ExecutionConfig
) -> Iterator[tuple[int, R]]:
    if config.backend == "ray":
        yield from iter_ray(fn, units, config)
        return
    workers = min(config.n_workers, len(units))
    if workers == 1:
        for i, u in enumerate(units):
            yield i, fn(u)
        return
    yield from _iter_pool(fn, units, workers, config.max_retries)


# ------------------------------------------------------- parent-death guard
def guard_parent_death(
    parent_pid: int, *, use_prctl: bool = True, poll_seconds: float = PARENT_POLL_SECONDS
) -> None:
    """End this process soon after ``parent_pid`` (its parent) dies, however the parent died.

    Two layers: ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (Linux, when ``use_prctl``)
    makes the kernel kill this process at once when the parent thread that
    started it exits; a daemon thread polls ``os.getppid()`` every
    ``poll_seconds`` and calls ``os._exit`` once the process has been
    re-parented (every POSIX system).  If the parent is already gone when this
    runs, the process exits immediately.
    """
    if use_prctl:
        _set_parent_death_signal()
    if os.getppid() != parent_pid:  # the parent died before the guard was armed
        os._exit(1)
    watcher = threading.Thread(
        target=_watch_parent,
        args=(parent_pid, poll_seconds),
        name="dpaudit-parent-watch",
        daemon=True,
    )
    watcher.start()


def _set_parent_death_signal() -> bool:
    """Ask Linux to ``SIGKILL`` this process when its parent dies; False where unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):  # no libc symbol: the polling thread still guards
        return False


def _watch_parent(parent_pid: int, poll_seconds: float) -> None:
    while True:
        time.sleep(poll_seconds)
        if os.getppid() != parent_pid:
            os._exit(1)  # no clean-up: the results have nobody to go to


def _pool_worker_init(parent_pid: int) -> None:
    """Initializer of every local pool worker."""
    guard_parent_death(parent_pid)


# ----------------------------------------------------------- local pool
def _start_method() -> str:
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and sys.platform != "darwin":
        return "fork"
    return "spawn"


def _check_picklable(fn: Callable[[Any], Any]) -> None:
    try:
        pickle.dumps(fn)
    except Exception as exc:
        raise TypeError(
            f"run_units needs a module-level (picklable) function, got {fn!r}: {exc}"
        ) from None


def _iter_pool(
    fn: Callable[[U], R], units: list[U], workers: int, max_retries: int
) -> Iterator[tuple[int, R]]:
    _check_picklable(fn)
    ctx = multiprocessing.get_context(_start_method())
    batcher = Batcher(len(units), workers)
    in_flight_limit = 2 * workers  # keep every worker fed while results travel back
    restarts = 0
    while batcher.pending:
        pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=ctx,
            initializer=_pool_worker_init,
            initargs=(os.getpid(),),
        )
        in_flight: dict[Future[Any], list[int]] = {}
        # A batch taken from the batcher but not yet in flight: submit raises
        # BrokenProcessPool when a worker has just died, and that batch must be requeued.
        submitting: list[int] = []
        finished = False
        try:
            while True:
                while len(in_flight) < in_flight_limit:
                    submitting = batcher.next_batch()
                    if not submitting:
                        break
                    items = [(i, units[i]) for i in submitting]
                    in_flight[pool.submit(run_batch, fn, items)] = submitting
                    submitting = []
                if not in_flight:
                    break
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for fut in done:
                    outcome = fut.result()  # BrokenProcessPool if a worker died
                    del in_flight[fut]
                    yield from unpack(outcome, batcher)
            finished = True
        except BrokenProcessPool as exc:
            restarts += 1
            lost = sorted(i for batch in [*in_flight.values(), submitting] for i in batch)
            if restarts > max_retries:
                raise WorkerLostError(
                    f"a worker process died {restarts} times; {len(lost)} work units "
                    f"(first: #{lost[0] if lost else '?'}) could not be completed "
                    f"after {max_retries} retries ({exc})"
                ) from None
            batcher.requeue(lost)
        finally:
            _close_pool(pool, graceful=finished)


def _close_pool(pool: ProcessPoolExecutor, graceful: bool) -> None:
    """Shut the pool down; on error or interrupt stop the workers at once."""
    if graceful:
        pool.shutdown(wait=True)
        return
    # Workers may still be busy with batches nobody will read: end them now
    # instead of letting the interpreter wait for them at exit.
    terminate = getattr(pool, "terminate_workers", None)  # public from Python 3.14
    if callable(terminate):
        terminate()
        return
    # Before 3.14 the pool exposes its processes only as the private ``_processes``
    # (a dict of pid → Process since Python 3.2).  If it is ever missing, the
    # fallback is a plain shutdown: busy workers finish their batch, then exit.
    processes = getattr(pool, "_processes", None)
    workers = list(processes.values()) if isinstance(processes, dict) else []
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in workers:
        if proc.is_alive():
            proc.terminate()
    for proc in workers:
        proc.join(timeout=5)
