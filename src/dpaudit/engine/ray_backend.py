"""The Ray backend of the execution engine: Ray's task API on a cluster or a local instance.

Functions and units travel cloudpickled (code from ``__main__`` by value); the
workers of a local instance get the driver's import path, so the user's own
modules import there too; on a cluster they must be installed on every node or
shipped with a runtime environment (:data:`RUNTIME_ENV_VARIABLE`).  Ray itself
is imported only when this backend is used (the ``ray`` extra).  Imports
nothing from ``auditors/`` or above.
"""

from __future__ import annotations

import atexit
import json
import os
import pickle
import socket
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from dpaudit.engine.batches import Batcher, UnitFailure, run_batch, unpack
from dpaudit.engine.config import (
    ExecutionConfig,
    WorkerLostError,
    default_workers,
    parse_ray_address,
)
from dpaudit.errors import DPAuditError, InvalidArgumentError, OptionalDependencyError

U = TypeVar("U")
R = TypeVar("R")

#: Seconds to wait for a TCP connection to a ``ray_address`` before giving up.
RAY_CONNECT_TIMEOUT = 5.0

MISSING_MODULE_HINT = (
    "the module that defines the mechanism and the unit function must be importable "
    "on every Ray node: install it there, or ship it with a Ray runtime environment, "
    'e.g. DPAUDIT_RAY_RUNTIME_ENV=\'{"working_dir": "."}\''
)


def run_batch_ray(fn_blob: bytes, items_blob: bytes, paths: tuple[str, ...]) -> bytes:
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
        failure = UnitFailure.capture(
            DPAuditError(
                f"a Ray worker could not load the work units (no module {exc.name!r}): "
                + MISSING_MODULE_HINT
            )
        )
        return pickle.dumps(([(-1, False, failure)], 0.0))
    return pickle.dumps(run_batch(fn, items), protocol=pickle.HIGHEST_PROTOCOL)


# ----------------------------------------------------------------- Ray
_RAY_STARTED: dict[str, Any] = {}  # what we started: {"num_cpus": N} or {"address": A}
_RAY_TASK: dict[str, Any] = {}  # the remote function, made once per Ray session


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise OptionalDependencyError("ray", "ray", "--backend ray") from None
    return ray


def _probe(address: str) -> None:
    """Fail fast when nothing listens at ``address`` (Ray would retry for minutes)."""
    hostport = parse_ray_address(address)
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


def connect_ray(config: ExecutionConfig) -> Any:
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


def iter_ray(
    fn: Callable[[U], R], units: list[U], config: ExecutionConfig
) -> Iterator[tuple[int, R]]:
    ray = connect_ray(config)
    dumps = ray.cloudpickle.dumps  # by value for __main__ code, like fork does locally
    try:
        fn_blob = dumps(fn)
    except Exception as exc:
        raise TypeError(f"run_units cannot serialise {fn!r} for Ray: {exc}") from None
    if "task" not in _RAY_TASK:
        _RAY_TASK["task"] = ray.remote(run_batch_ray)
    task = _RAY_TASK["task"].options(max_retries=config.max_retries, retry_exceptions=False)
    # The driver's import path only helps workers on this machine: a local instance.
    paths = _driver_paths() if "num_cpus" in _RAY_STARTED else ()
    workers = _ray_capacity(ray, config)
    batcher = Batcher(len(units), workers)
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
                yield from unpack(pickle.loads(payload), batcher)
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
