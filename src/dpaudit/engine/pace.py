"""How fast this machine works right now, against the idle machine the estimates came from.

A figure's ``expected_seconds`` was measured on 2 idle cores.  On a machine shared
with other jobs the same work takes several times longer (the README's main job:
206 s idle, 44 min at load 5–12), so a fixed estimate misleads exactly when a user
most needs it.  :class:`Pace` turns the idle estimate into one for the machine at
hand, from two measurements:

* a **probe** (:func:`probe_pace`): a fixed mix of the work figures do (vectorised
  sampling, sorting, elementwise maths and a Python loop), timed once before
  the run and divided by its time on the reference idle machine
  (:data:`PROBE_REFERENCE_S`).  It sees the load at the start, as a figure would.
* the **run's own pace**: each finished figure's work time over its idle estimate.
  It sees load that comes and goes, and whatever the probe's mix misses.

The factor for the next figure is the two pooled, the probe counting as
:data:`PROBE_WEIGHT_S` seconds of estimated work::

    factor = (PROBE_WEIGHT_S · probe + Σ real) / (PROBE_WEIGHT_S + Σ estimate)

so the first figures lean on the probe and later ones on what the run saw.  The
factor is only an estimate: the progress line still says when a figure runs past
it, with the load average.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

import numpy as np

#: Wall seconds of :func:`_probe_work` on the reference machine (2 idle x86-64 cores, the CI
#: kind), measured 2026-12-01 as the median of 15 probes at load below 1 (spread 0.14–0.17 s).
PROBE_REFERENCE_S = 0.145
#: Times the probe's work is repeated; their total is timed (not their minimum: the share of
#: the CPU the run gets is what the estimate needs, so slow repeats count).
PROBE_REPEATS = 3
#: Seconds of estimated work the probe counts as, when pooled with finished figures.
PROBE_WEIGHT_S = 20.0
#: The factor is kept within this range: a probe interrupted by a one-off stall, or a figure
#: that finished at once (all units kept), should not move every later estimate by more.
FACTOR_RANGE = (0.5, 30.0)


def _probe_work(rng: np.random.Generator) -> float:
    """One round of the probe: a small, fixed mix of what figures spend their time on."""
    x = rng.laplace(size=1 << 19)
    x.sort()
    y = np.empty_like(x)
    for _ in range(6):  # elementwise maths, one thread (BLAS threads stall under load)
        np.exp(-np.abs(x), out=y)
        np.log1p(y, out=y)
    total = 0.0
    for value in x[:: 1 << 5].tolist():  # per-item Python: text and rewriter figures do some
        total += value * value
    return float(x[-1] + y[0] + total)


def probe_pace(repeats: int = PROBE_REPEATS) -> float:
    """This machine's slowness now, relative to the reference idle machine (1.0: as fast)."""
    rng = np.random.default_rng(0)
    _probe_work(rng)  # warm-up: first-touch allocation, BLAS start
    start = time.perf_counter()
    for _ in range(repeats):
        _probe_work(rng)
    per_round = (time.perf_counter() - start) / repeats
    return _clip(per_round / (PROBE_REFERENCE_S / PROBE_REPEATS))


#: A probe this much slower than the reference means other work shares the cores: code with
#: threads that wait for one another (PyTorch's, BLAS's) then runs faster on one thread.
BUSY_FACTOR = 1.5


def threads_for_now(factor: float | None = None) -> int | None:
    """The torch thread count for work starting now: the cores no other process is running
    on, at least 1; None (torch's own count) when nothing else runs.

    Other runnable processes are read from the kernel (:func:`competing_runnable`).  Where
    it cannot be read, the probe decides: 1 when it finds the machine busy
    (:func:`probe_pace` ≥ :data:`BUSY_FACTOR`).  ``factor``: a probe already taken, measured
    now when needed and None.  Fewer threads never change a result, only its speed.
    """
    others = competing_runnable()
    if others is not None:
        return max(1, usable_cpus() - others) if others > 0 else None
    factor = probe_pace() if factor is None else factor
    return 1 if factor >= BUSY_FACTOR else None


#: Reads of the run queue behind :func:`competing_runnable`, and the pause between them.
RUNQUEUE_READS, RUNQUEUE_PAUSE_S = 9, 0.005


def competing_runnable(path: str = "/proc/loadavg") -> int | None:
    """How many tasks of other work are runnable now: the median over a few reads of the
    kernel's running count (``/proc/loadavg``'s fourth field) less the one reading it.

    A short probe misses such competition: the scheduler gives a task that just woke its
    full share for a while, so :func:`probe_pace` reads about 1 beside one CPU-bound process
    per core, while two torch threads there run 4-5× slower, waiting at each barrier for
    the one descheduled.  None where the file does not exist (not Linux).
    """
    counts = []
    for i in range(RUNQUEUE_READS):
        try:
            with open(path, encoding="ascii") as f:
                field_4 = f.read().split()[3]
        except (OSError, IndexError):
            return None
        counts.append(int(field_4.split("/")[0]))
        if i + 1 < RUNQUEUE_READS:
            time.sleep(RUNQUEUE_PAUSE_S)
    return max(0, int(np.median(counts)) - 1)


def usable_cpus() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _clip(factor: float) -> float:
    low, high = FACTOR_RANGE
    return float(min(max(factor, low), high))


@dataclass
class Pace:
    """The factor from idle estimates to this machine's, updated as figures finish.

    ``probe``: :func:`probe_pace` at the start (1.0 when not probed);
    ``estimated`` / ``real``: the finished figures' idle estimates and work seconds.
    """

    probe: float = 1.0
    estimated: list[float] = field(default_factory=list)
    real: list[float] = field(default_factory=list)

    @property
    def factor(self) -> float:
        """Seconds here per estimated idle second, for the next piece of work."""
        pooled = (PROBE_WEIGHT_S * self.probe + sum(self.real)) / (
            PROBE_WEIGHT_S + sum(self.estimated)
        )
        return _clip(pooled)

    def estimate(self, idle_seconds: float) -> float:
        """What ``idle_seconds`` of reference work should take here, now."""
        return float(idle_seconds) * self.factor

    def observe(self, idle_seconds: float, seconds: float) -> None:
        """A piece of work estimated at ``idle_seconds`` took ``seconds``."""
        if idle_seconds > 0 and seconds >= 0:
            self.estimated.append(float(idle_seconds))
            self.real.append(float(seconds))
