"""Batches of work units: sizing, running one batch in a worker, carrying failures back.

Shared by the local pool (:mod:`dpaudit.engine.executor`) and the Ray backend
(:mod:`dpaudit.engine.ray_backend`).  Imports nothing from ``auditors/`` or above.
"""

from __future__ import annotations

import math
import pickle
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

#: Wall time a batch of units should take once the time per unit is known:
#: long against the ~0.1–1 ms a task costs, short enough for a fine progress bar.
TARGET_BATCH_SECONDS = 0.1


# ---------------------------------------------------------------- batching
class Batcher:
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
class RemoteTraceback(Exception):  # noqa: N818 (mirrors concurrent.futures)
    """The traceback of an exception raised in a worker, attached as ``__cause__``."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f'\n"""\n{self.text}"""'


@dataclass
class UnitFailure:
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
    def capture(cls, exc: BaseException) -> UnitFailure:
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
        exc.__cause__ = RemoteTraceback(self.traceback)
        return exc


def run_batch(
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
            out.append((i, False, UnitFailure.capture(exc)))
            break
    return out, time.perf_counter() - start


def unpack(
    outcome: tuple[list[tuple[int, bool, Any]], float], batcher: Batcher
) -> Iterator[tuple[int, Any]]:
    rows, seconds = outcome
    batcher.record(len(rows), seconds)
    for i, ok, value in rows:
        if not ok:
            raise value.rebuild()
        yield i, value
