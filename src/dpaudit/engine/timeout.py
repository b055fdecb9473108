"""Per-unit timeouts of the execution engine: a work unit that hangs is stopped with a clear error.

:func:`deadline` / :func:`with_timeout`: a work unit that does not return
within ``seconds`` is interrupted with a ``MechanismError``.  It uses
``SIGALRM`` (POSIX) and therefore acts in the main thread of the process
running the unit — the CLI process with one worker, each worker process of the
local pool otherwise; elsewhere (a non-main thread, Windows) the unit runs
without a deadline.  Python code (loops, ``time.sleep``) is interrupted
promptly; a single C call that never returns to the interpreter is not.

Part of :mod:`dpaudit.engine`: a unit describes itself for the message
(:class:`DescribedUnit`); the engine never looks inside it.  Imports nothing
from ``auditors/`` or ``mechanisms/``.
"""

from __future__ import annotations

import math
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from dpaudit.errors import InvalidArgumentError, MechanismError

R = TypeVar("R")

#: Default per-unit timeout of the CLI (seconds); generous: units take 0.1 s to minutes.
DEFAULT_UNIT_TIMEOUT = 3600.0


class _Expired(BaseException):
    """Raised by the alarm handler; a BaseException so that ``except Exception`` cannot eat it."""


def _can_alarm() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def deadline(seconds: float | None, what: str) -> Iterator[None]:
    """Raise :class:`MechanismError` if the block does not finish within ``seconds``.

    ``what`` describes the work for the message (mechanism and input).  ``None``
    or a platform without ``SIGALRM`` in this thread: no deadline.
    """
    if seconds is None or not _can_alarm():
        yield
        return

    def _on_alarm(signum: int, frame: Any) -> None:
        raise _Expired

    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))
    try:
        yield
    except _Expired:
        raise MechanismError(
            f"{what} did not finish within {seconds:g} s (per-unit timeout, "
            "--unit-timeout); the mechanism may be hanging"
        ) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)


@runtime_checkable
class DescribedUnit(Protocol):
    """A work unit that says what it is, for messages about it (a timeout, a crash)."""

    def describe(self) -> str:
        """E.g. ``mechanism 'laplace' on input [0]``."""
        ...


def describe_unit(unit: Any) -> str:
    """The unit's own description; the engine does not look inside units."""
    return unit.describe() if isinstance(unit, DescribedUnit) else "a work unit"


def mechanism_on_input(mechanism: Any, x: Any) -> str:
    """``mechanism 'name' on input [...]``: how a unit sampling a mechanism describes itself."""
    return f"mechanism {mechanism_label(mechanism)!r} on input {preview(x)}"


class TimedUnitFunction:
    """Picklable ``fn(unit)`` under :func:`deadline`, in whichever process runs the unit."""

    def __init__(self, fn: Callable[[Any], R], seconds: float | None) -> None:
        self.fn = fn
        self.seconds = seconds

    def __call__(self, unit: Any) -> Any:
        with deadline(self.seconds, describe_unit(unit)):
            return self.fn(unit)


def with_timeout(fn: Callable[[Any], Any], seconds: float | None) -> Callable[[Any], Any]:
    """``fn`` itself when ``seconds`` is None, else ``fn`` wrapped with a per-unit deadline."""
    return fn if seconds is None else TimedUnitFunction(fn, seconds)


def check_timeout(seconds: float | None, name: str = "--unit-timeout") -> float | None:
    """``None`` or a number of seconds > 0."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise InvalidArgumentError(name, seconds, "a number of seconds > 0")
    if not (math.isfinite(seconds) and seconds > 0):
        raise InvalidArgumentError(name, seconds, "a number of seconds > 0")
    return float(seconds)


def mechanism_label(mechanism: Any) -> str:
    """The name to show in messages: the registry name, or the user callable's target."""
    for attribute in ("target", "label"):  # a module:callable, or a function object's name
        value = getattr(mechanism, attribute, None)
        if isinstance(value, str) and ":" in value:
            return value
    return getattr(mechanism, "name", type(mechanism).__name__)


def preview(x: Any) -> str:
    if isinstance(x, str):
        return x
    flat = np.ravel(np.asarray(x, dtype=np.float64))
    head = ", ".join(f"{v:g}" for v in flat[:4])
    return f"[{head}{', ...' if flat.size > 4 else ''}]"
