"""Sizes that fit a time budget, from timed pilot runs of the real audit on this machine.

A default audit must finish: 10⁷ final samples take seconds for a scalar
Laplace mechanism and hours for a nearest-word mechanism or a library that
costs a millisecond per output.  Speed tables measured on another CPU do not
transfer, so the sizes come from the machine at hand: after one small
warm-up run (imports, worker start), the audit itself is run three times at
small sizes and its wall time fitted by

    T(s, f) ≈ c₀ + c_s·s + c_f·f

(``s`` selection samples and ``f`` final samples per input; ``c₀`` covers
start-up and classifier training, which grow slowly with the sizes).  The
largest ``s`` with ``f = ratio·s`` that fits the budget is then chosen.  The
pilots use their own seeds' work, so they cost time but no confidence: the
real audit runs afresh at the chosen sizes.

The fit is an estimate; the result states it, and an explicit size on the
command line always wins.  The pilots' wall times include the machine's load
at that moment, which is also what the real run will meet.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.errors import InvalidArgumentError

#: Selection samples of the smallest pilot; the two others multiply one size by SPREAD.
PILOT_SAMPLES = 2_000
#: How much larger the second and third pilots are in one size: wide, so that the slopes
#: stand out of the timing noise.
SPREAD = 8
#: Final samples per selection sample, as in the defaults (1e6 / 1e7).
FINAL_RATIO = 10
#: Never plan fewer selection samples than this: smaller audits cannot show anything.
MIN_SAMPLES = 1_000
#: When the first pilot alone takes more than 1/this of the budget, no further pilots run.
SLOW_PILOT_SHARE = 15


@dataclass(frozen=True)
class SizePlan:
    """The sizes chosen for a budget and the timing model behind them.

    ``samples``/``final_samples``: per input; ``estimated_seconds``: the model's
    prediction for them; ``fixed_seconds``, ``seconds_per_sample`` and
    ``seconds_per_final_sample``: the fitted ``c₀``, ``c_s`` and ``c_f``;
    ``pilot_seconds``: what the three pilots cost; ``fits``: False when even
    the smallest audit (:data:`MIN_SAMPLES`) is predicted to exceed the budget.
    """

    samples: int
    final_samples: int
    estimated_seconds: float
    budget_seconds: float
    fixed_seconds: float
    seconds_per_sample: float
    seconds_per_final_sample: float
    pilot_seconds: float
    fits: bool

    def describe(self) -> str:
        """One line for the terminal, e.g. "sizes 40 000 / 400 000 per input: about 95 s"."""
        head = (
            f"sizes {self.samples:,} / {self.final_samples:,} per input (selection / final), "
            f"estimated {self.estimated_seconds:.0f} s for a budget of {self.budget_seconds:.0f} s"
        )
        if not self.fits:
            head += " — the smallest useful audit does not fit; it runs anyway at these sizes"
        return head + f" (from {self.pilot_seconds:.1f} s of timed pilot runs)"


def _timed(run: Callable[[int, int], Any], samples: int, final: int) -> float:
    t0 = time.perf_counter()
    run(samples, final)
    return time.perf_counter() - t0


def fit_cost(points: list[tuple[int, int, float]]) -> tuple[float, float, float]:
    """Least-squares ``(c₀, c_s, c_f) ≥ 0`` of ``T ≈ c₀ + c_s·s + c_f·f`` from (s, f, T) points."""
    a = np.array([[1.0, s, f] for s, f, _ in points])
    t = np.array([p[2] for p in points])
    coef, *_ = np.linalg.lstsq(a, t, rcond=None)
    c0, cs, cf = (max(float(c), 0.0) for c in coef)
    if cs == 0.0 and cf == 0.0:
        # Timing noise hid the slope: charge the spread of the times to the largest
        # difference in sizes (an upper bound on a slope the noise could hide).
        spread = float(np.max(t) - np.min(t)) / max(float(np.ptp(a[:, 1] + a[:, 2])), 1.0)
        cs = cf = max(spread, 1e-9)
    return c0, cs, cf


def plan_sizes(
    run: Callable[[int, int], Any],
    budget_seconds: float,
    *,
    pilot_samples: int = PILOT_SAMPLES,
    ratio: int = FINAL_RATIO,
    max_samples: int = 1_000_000,
) -> SizePlan:
    """Time ``run(samples, final_samples)`` three times and size the real run to the budget.

    ``run`` performs a complete audit at the given sizes (its result is
    discarded).  ``max_samples`` caps the selection size (the defaults'
    10⁶): a fast mechanism gets the default sizes, not more.
    """
    if not budget_seconds > 0 or not math.isfinite(budget_seconds):
        raise InvalidArgumentError("time_budget", budget_seconds, "a number of seconds > 0")
    s0, f0 = pilot_samples, pilot_samples * ratio
    warm = _timed(run, max(s0 // 4, 1), max(f0 // 4, 1))  # imports, pool start: not a size cost
    points = [(s0, f0, _timed(run, s0, f0))]
    if points[0][2] > budget_seconds / SLOW_PILOT_SHARE:
        # A slow mechanism: two larger pilots would eat the budget.  Charge the first
        # pilot's time to the sizes alone (an overestimate: c₀ is counted per sample).
        c0, cs, cf = 0.0, points[0][2] / (s0 + f0), points[0][2] / (s0 + f0)
    else:
        points += [(s, f, _timed(run, s, f)) for s, f in [(SPREAD * s0, f0), (s0, SPREAD * f0)]]
        c0, cs, cf = fit_cost(points)
    per_sample = cs + ratio * cf
    best = (budget_seconds - c0) / per_sample if per_sample > 0 else max_samples
    samples = int(min(max(best, MIN_SAMPLES), max_samples))
    samples = _round_down(samples)
    estimate = c0 + per_sample * samples
    return SizePlan(
        samples=samples,
        final_samples=samples * ratio,
        estimated_seconds=estimate,
        budget_seconds=float(budget_seconds),
        fixed_seconds=c0,
        seconds_per_sample=cs,
        seconds_per_final_sample=cf,
        pilot_seconds=warm + sum(p[2] for p in points),
        fits=best >= MIN_SAMPLES,
    )


def _round_down(n: int) -> int:
    """``n`` rounded down to two significant digits (40 000, not 41 372), at least 1."""
    if n < 100:
        return max(n, 1)
    scale = 10 ** (len(str(n)) - 2)
    return n // scale * scale
