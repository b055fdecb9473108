"""A "user module" for the executor tests: a mechanism and unit functions defined outside dpaudit.

Nothing here is registered with dpaudit, and the module is importable only
because pytest puts ``tests/`` on ``sys.path`` — exactly the situation of a
researcher's own script.  The executor must run these on every backend.
(Named ``test_*`` so it belongs to the executor tests; it holds no tests.)
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from dpaudit.claims import Definition, InputDomain, PrivacyClaim
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import Mechanism, parameter
from dpaudit.random import unit_rng


@dataclass(frozen=True)
class ShiftedLaplace(Mechanism):
    """``x + Lap(1/ε)`` on ``[0, 1]^dim`` — a counting query with the Laplace mechanism.

    Dwork, McSherry, Nissim & Smith (TCC 2006): sensitivity 1, scale ``1/ε``.
    """

    name: ClassVar[str] = "user-shifted-laplace"
    dim: int = parameter(1, doc="coordinates")

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim(
            definition=Definition.PURE,
            epsilon=self.epsilon,
            domain=InputDomain((self.dim,), 0.0, 1.0),
            sensitivity=1.0,
            sensitivity_norm="L1",
        )

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.dim,)

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return x + rng.laplace(0.0, 1.0 / self.epsilon, size=(n, self.dim))


@dataclass(frozen=True)
class CountUnit:
    """One chunk of a Laplace counting experiment: the picklable work unit."""

    mechanism: Mechanism
    x: float
    chunk: int
    rows: int
    seed: int
    threshold: float = 0.5
    #: Marker file: if given and absent, the unit creates it and kills its own process.
    die_once: str | None = None
    #: How the unit dies: "exit" (os._exit) or "kill" (SIGKILL).
    how: str = "exit"


def count_unit(unit: CountUnit) -> np.ndarray:
    """``[rows, hits above threshold, sum of outputs as float64 bits]`` for one chunk.

    The float sum is returned through its bit pattern so equality checks are bit-exact.
    """
    if unit.die_once is not None and not Path(unit.die_once).exists():
        Path(unit.die_once).write_text(str(os.getpid()))
        if unit.how == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(3)
    rng = unit_rng(unit.seed, (7, int(unit.x * 1000), unit.chunk))
    mech = unit.mechanism
    out = mech.sample(np.full(mech.input_shape, unit.x), unit.rows, rng)
    hits = int(np.count_nonzero(out >= unit.threshold))
    total = np.array([out.sum(dtype=np.float64)]).view(np.int64)[0]
    return np.array([unit.rows, hits, total], dtype=np.int64)


def make_units(
    epsilon: float = 1.0, rows: int = 20_000, chunks: int = 6, seed: int = 11, **extra: Any
) -> list[CountUnit]:
    """Units for inputs 0 and 1, ``chunks`` each."""
    mech = ShiftedLaplace(epsilon=epsilon, dim=2)
    return [CountUnit(mech, x, c, rows, seed, **extra) for x in (0.0, 1.0) for c in range(chunks)]


def square(x: int) -> int:
    """A trivial unit function."""
    return x * x


def fail_on_five(x: int) -> int:
    """Raises a DPAuditError (with a custom ``__init__``) on unit 5."""
    if x == 5:
        raise InvalidArgumentError("runs", x, "an integer other than 5")
    return x


def divide_by_zero_on_three(x: int) -> float:
    """Raises an ordinary (non-dpaudit) exception on unit 3."""
    return 1.0 / (x - 3)


class _UnpicklableError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.handle = lambda: None  # a lambda cannot be pickled


def fail_unpicklable(x: int) -> int:
    """Raises an exception whose attributes cannot be pickled."""
    raise _UnpicklableError(f"bad unit {x}")


def always_die(x: int) -> int:
    """Kills its own worker process every time."""
    os._exit(5)


def writable(x: int) -> np.ndarray:
    """An array result (must arrive writable, whatever the backend)."""
    return np.arange(4, dtype=np.int64) * x


def record_pid_and_sleep(unit: tuple[str, int]) -> int:
    """Writes this worker's pid into the folder ``unit[0]``, then sleeps (a unit that hangs)."""
    import time

    folder, index = unit
    Path(folder, f"{index}.{os.getpid()}").write_text("")
    time.sleep(120)
    return index


def parent_death_signal(_: int) -> int:
    """The signal this process receives when its parent dies (Linux ``PR_GET_PDEATHSIG``)."""
    import ctypes

    value = ctypes.c_int(-1)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(2, ctypes.byref(value), 0, 0, 0) != 0:  # 2 = PR_GET_PDEATHSIG
        return -1
    return value.value
