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

import atexit
import ctypes
import json
import math
import multiprocessing
import os
import pickle
import signal
import socket
import sys
import threading
import time
import traceback
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, TypeVar

from dpaudit.errors import DPAuditError, InvalidArgumentError, OptionalDependencyError
from dpaudit.progress import progress
from dpaudit.validation import check_int

U = TypeVar("U")
R = TypeVar("R")

BACKENDS = ("local", "ray")

#: Wall time a batch of units should take once the time per unit is known:
#: long against the ~0.1–1 ms a task costs, short enough for a fine progress bar.
TARGET_BATCH_SECONDS = 0.1

#: Seconds to wait for a TCP connection to a ``ray_address`` before giving up.
RAY_CONNECT_TIMEOUT = 5.0

#: How often a pool worker checks that its parent is still alive (the portable guard).
PARENT_POLL_SECONDS = 0.5

#: ``prctl`` option of Linux's <sys/prctl.h>: signal sent when the parent dies.
_PR_SET_PDEATHSIG = 1


class WorkerLostError(DPAuditError, RuntimeError):
    """A worker process died and the lost units could not be completed by retrying."""


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
    how often the units lost with a dead worker are re-run.
    """

    backend: str = "local"
    workers: int | None = None
    ray_address: str | None = None
    max_retries: int = 3

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise InvalidArgumentError("backend", self.backend, f"one of {', '.join(BACKENDS)}")
        if self.workers is not None:
            check_int("workers", self.workers, minimum=1, maximum=4096)
        check_int("max_retries", self.max_retries, minimum=0, maximum=100)
        if self.ray_address is not None:
            _parse_ray_address(self.ray_address)

    @property
    def n_workers(self) -> int:
        """Workers to use: the given number, else the machine's core count."""
        return self.workers if self.workers is not None else default_workers()


def run_units(
    fn: Callable[[U], R],
    units: Sequence[U],
    config: ExecutionConfig | None = None,
    *,
    desc: str = "working",
    on_result: Callable[[int, R], None] | None = None,
) -> list[R]:
    """Apply ``fn`` to every unit and return the results **in unit order**.

    ``fn`` must be a module-level function (picklable) and units picklable.
    ``on_result(i, r)`` is called in the caller's process as each result
    arrives (used for checkpointing); arrival order may vary, the returned
    list never does.  Exceptions raised by ``fn`` propagate unchanged.
    """
    config = config or ExecutionConfig()
    units = list(units)
    results: list[Any] = [None] * len(units)
    if not units:
        return results
    with progress(len(units), desc) as bar:
        for i, r in _iter_results(fn, units, config):
            results[i] = r
            if on_result is not None:
                on_result(i, r)
            bar.update(1)
    return results


def prepare_backend(config: ExecutionConfig) -> None:
    """Check that ``config``'s backend can run, before any work or output starts.

    For ``ray`` this imports Ray and connects to (or starts) the instance, so a
    missing extra or an unreachable cluster is reported up front.  Idempotent.
    """
    if config.backend == "ray":
        _connect_ray(config)


def _iter_results(
    fn: Callable[[U], R], units: list[U], config: ExecutionConfig
) -> Iterator[tuple[int, R]]:
    if config.backend == "ray":
        yield from _iter_ray(fn, units, config)
        return
    workers = min(config.n_workers, len(units))
    if workers == 1:
        for i, u in enumerate(units):
            yield i, fn(u)
        return
    yield from _iter_pool(fn, units, workers, config.max_retries)


# ---------------------------------------------------------------- batching
class _Batcher:
    """Hands out batches of pending unit indices sized from the measured time per unit."""

    def __init__(self, n_units: int, workers: int) -> None:
        self.pending: deque[int] = deque(range(n_units))
        self.workers = workers
        self.unit_seconds = 0.0
        self.units_timed = 0

    def next_batch(self) -> list[int]:
        """The next batch (empty when nothing is pending)."""
        if not self.pending:
            return []
        size = 1
        if self.units_timed:
            per_unit = self.unit_seconds / self.units_timed
            wanted = TARGET_BATCH_SECONDS / per_unit if per_unit > 0 else len(self.pending)
            fair_share = math.ceil(len(self.pending) / (2 * self.workers))
            size = max(1, min(int(wanted), fair_share))
        return [self.pending.popleft() for _ in range(min(size, len(self.pending)))]

    def record(self, n_units: int, seconds: float) -> None:
        """Account a finished batch's compute time."""
        self.units_timed += n_units
        self.unit_seconds += seconds

    def requeue(self, indices: list[int]) -> None:
        """Put lost units back at the front, in order."""
        self.pending.extendleft(sorted(indices, reverse=True))


# ------------------------------------------------------- running a batch
class _RemoteTraceback(Exception):  # noqa: N818 (mirrors concurrent.futures)
    """The traceback of an exception raised in a worker, attached as ``__cause__``."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f'\n"""\n{self.text}"""'


@dataclass
class _UnitFailure:
    """An exception raised by a unit, in a form that survives pickling.

    Exceptions with a custom ``__init__`` (like :class:`InvalidArgumentError`)
    cannot be unpickled the default way; this carries the class, ``args`` and
    ``__dict__`` and rebuilds the exception without calling ``__init__``.
    """

    exc_type: type[BaseException]
    args: tuple[Any, ...]
    state: dict[str, Any]
    traceback: str

    @classmethod
    def capture(cls, exc: BaseException) -> _UnitFailure:
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        failure = cls(type(exc), exc.args, dict(getattr(exc, "__dict__", {})), tb)
        try:
            pickle.loads(pickle.dumps(failure))
        except Exception:  # a local class or unpicklable attributes: keep the text
            text = f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"
            failure = cls(RuntimeError, (text,), {}, tb)
        return failure

    def rebuild(self) -> BaseException:
        exc = self.exc_type.__new__(self.exc_type)
        exc.args = self.args
        exc.__dict__.update(self.state)
        exc.__cause__ = _RemoteTraceback(self.traceback)
        return exc


def _run_batch(
    fn: Callable[[Any], Any], items: list[tuple[int, Any]]
) -> tuple[list[tuple[int, bool, Any]], float]:
    """Run one batch in a worker: ``([(index, ok, result or failure)], seconds)``.

    Stops at the first failing unit: the run is over anyway.
    """
    start = time.perf_counter()
    out: list[tuple[int, bool, Any]] = []
    for i, unit in items:
        try:
            out.append((i, True, fn(unit)))
        except Exception as exc:
            out.append((i, False, _UnitFailure.capture(exc)))
            break
    return out, time.perf_counter() - start


MISSING_MODULE_HINT = (
    "the module that defines the mechanism and the unit function must be importable "
    "on every Ray node: install it there, or ship it with a Ray runtime environment, "
    'e.g. DPAUDIT_RAY_RUNTIME_ENV=\'{"working_dir": "."}\''
)


def _run_batch_ray(fn_blob: bytes, items_blob: bytes, paths: tuple[str, ...]) -> bytes:
    """A Ray task: one batch, from cloudpickled function and units to pickled outcome.

    ``paths`` (the driver's import path, given only for a local instance we
    started) are appended to ``sys.path`` *before* anything is unpickled, so
    that a mechanism from the user's own, uninstalled module loads as it does
    in the driver.  The outcome travels as bytes because Ray would otherwise
    hand back read-only arrays, and merging by in-place addition must work.
    """
    for p in paths:
        if p not in sys.path:
            sys.path.append(p)
    try:
        fn = pickle.loads(fn_blob)
        items = pickle.loads(items_blob)
    except ModuleNotFoundError as exc:
        failure = _UnitFailure.capture(
            DPAuditError(
                f"a Ray worker could not load the work units (no module {exc.name!r}): "
                + MISSING_MODULE_HINT
            )
        )
        return pickle.dumps(([(-1, False, failure)], 0.0))
    return pickle.dumps(_run_batch(fn, items), protocol=pickle.HIGHEST_PROTOCOL)


def _unpack(
    outcome: tuple[list[tuple[int, bool, Any]], float], batcher: _Batcher
) -> Iterator[tuple[int, Any]]:
    rows, seconds = outcome
    batcher.record(len(rows), seconds)
    for i, ok, value in rows:
        if not ok:
            raise value.rebuild()
        yield i, value


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
    batcher = _Batcher(len(units), workers)
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
        finished = False
        try:
            while True:
                while len(in_flight) < in_flight_limit:
                    batch = batcher.next_batch()
                    if not batch:
                        break
                    items = [(i, units[i]) for i in batch]
                    in_flight[pool.submit(_run_batch, fn, items)] = batch
                if not in_flight:
                    break
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for fut in done:
                    outcome = fut.result()  # BrokenProcessPool if a worker died
                    del in_flight[fut]
                    yield from _unpack(outcome, batcher)
            finished = True
        except BrokenProcessPool as exc:
            restarts += 1
            lost = sorted(i for batch in in_flight.values() for i in batch)
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


# ----------------------------------------------------------------- Ray
_RAY_STARTED: dict[str, Any] = {}  # what we started: {"num_cpus": N} or {"address": A}
_RAY_TASK: dict[str, Any] = {}  # the remote function, made once per Ray session


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise OptionalDependencyError("ray", "ray", "--backend ray") from None
    return ray


def _parse_ray_address(address: str) -> tuple[str, int] | None:
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


def _probe(address: str) -> None:
    """Fail fast when nothing listens at ``address`` (Ray would retry for minutes)."""
    hostport = _parse_ray_address(address)
    if hostport is None:
        return
    try:
        with socket.create_connection(hostport, timeout=RAY_CONNECT_TIMEOUT):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise InvalidArgumentError(
            "--ray-address", address, f"a reachable Ray cluster (cannot connect: {reason})"
        ) from None


def _driver_paths() -> tuple[str, ...]:
    """This process's import path (absolute, existing directories), for local Ray workers."""
    paths: list[str] = []
    for p in sys.path:
        full = os.path.abspath(p or os.curdir)
        if os.path.isdir(full) and full not in paths:
            paths.append(full)
    return tuple(paths)


#: Environment variable holding a Ray runtime environment as JSON, passed to
#: ``ray.init`` — e.g. ``{"working_dir": "."}`` ships the current directory
#: (the user's mechanism module) to every node of a cluster.
RUNTIME_ENV_VARIABLE = "DPAUDIT_RAY_RUNTIME_ENV"


def _runtime_env_from_environment() -> dict[str, Any] | None:
    text = os.environ.get(RUNTIME_ENV_VARIABLE, "").strip()
    if not text:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise InvalidArgumentError(
            RUNTIME_ENV_VARIABLE, text, 'a JSON object, e.g. {"working_dir": "."}'
        )
    return value


def _connect_ray(config: ExecutionConfig) -> Any:
    """Import Ray and make sure it is initialised as ``config`` asks; returns the module."""
    import logging

    ray = _import_ray()
    runtime_env = _runtime_env_from_environment()  # a malformed value fails before any start
    wanted = (
        {"address": config.ray_address}
        if config.ray_address
        else {"num_cpus": config.workers or default_workers()}
    )
    if ray.is_initialized() and (not _RAY_STARTED or wanted == _RAY_STARTED):
        return ray  # the caller's own instance, or ours with the same shape
    if config.ray_address:
        _probe(config.ray_address)  # before touching a running instance
    if ray.is_initialized():
        shutdown_ray()
    options: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
    if runtime_env is not None:
        options["runtime_env"] = runtime_env
    with warnings.catch_warnings():  # Ray's own warnings would break one-line errors
        warnings.simplefilter("ignore")
        if config.ray_address:
            try:
                ray.init(address=config.ray_address, **options)
            except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
                text = str(exc).strip()
                first = text.splitlines()[0] if text else type(exc).__name__
                raise InvalidArgumentError(
                    "--ray-address", config.ray_address, f"a reachable Ray cluster ({first})"
                ) from None
        else:
            ray.init(num_cpus=wanted["num_cpus"], include_dashboard=False, **options)
    if not _RAY_STARTED:
        atexit.register(shutdown_ray)
    _RAY_STARTED.clear()
    _RAY_STARTED.update(wanted)
    return ray


def shutdown_ray() -> None:
    """Shut down the Ray instance (or cluster connection) that :func:`run_units` started."""
    if not _RAY_STARTED:
        return
    _RAY_STARTED.clear()
    _RAY_TASK.clear()
    try:
        import ray
    except ImportError:
        return
    if ray.is_initialized():
        ray.shutdown()


def _ray_capacity(ray: Any, config: ExecutionConfig) -> int:
    if config.workers is not None:
        return config.workers
    try:
        return max(1, int(ray.cluster_resources().get("CPU", 1)))
    except Exception:
        return default_workers()


def _iter_ray(
    fn: Callable[[U], R], units: list[U], config: ExecutionConfig
) -> Iterator[tuple[int, R]]:
    ray = _connect_ray(config)
    dumps = ray.cloudpickle.dumps  # by value for __main__ code, like fork does locally
    try:
        fn_blob = dumps(fn)
    except Exception as exc:
        raise TypeError(f"run_units cannot serialise {fn!r} for Ray: {exc}") from None
    if "task" not in _RAY_TASK:
        _RAY_TASK["task"] = ray.remote(_run_batch_ray)
    task = _RAY_TASK["task"].options(max_retries=config.max_retries, retry_exceptions=False)
    # The driver's import path only helps workers on this machine: a local instance.
    paths = _driver_paths() if "num_cpus" in _RAY_STARTED else ()
    workers = _ray_capacity(ray, config)
    batcher = _Batcher(len(units), workers)
    fn_ref = ray.put(fn_blob)
    in_flight: dict[Any, list[int]] = {}
    try:
        while True:
            while len(in_flight) < 2 * workers:
                batch = batcher.next_batch()
                if not batch:
                    break
                items = dumps([(i, units[i]) for i in batch])
                in_flight[task.remote(fn_ref, items, paths)] = batch
            if not in_flight:
                break
            done, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in done:
                batch = in_flight.pop(ref)
                try:
                    payload = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    raise _ray_failure(ray, exc, batch, config) from None
                yield from _unpack(pickle.loads(payload), batcher)
    finally:
        for ref in in_flight:
            ray.cancel(ref, force=True)


def _ray_failure(
    ray: Any, exc: BaseException, batch: list[int], config: ExecutionConfig
) -> DPAuditError | BaseException:
    """Turn a Ray-level failure of a batch into a clear error."""
    lost = (
        ray.exceptions.WorkerCrashedError,
        ray.exceptions.NodeDiedError,
        ray.exceptions.LocalRayletDiedError,
    )
    if isinstance(exc, lost):
        return WorkerLostError(
            f"a Ray worker died running work units #{batch[0]}..#{batch[-1]}; "
            f"still lost after {config.max_retries} retries ({type(exc).__name__})"
        )
    text = str(exc)
    if "No module named" in text:
        missing = text[text.find("No module named") :].splitlines()[0]
        return DPAuditError(
            f"a Ray worker could not load the work units ({missing}): " + MISSING_MODULE_HINT
        )
    return exc
