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


# ============================================================ explicit sizes
#: Selection samples of the first estimate pilot; each further pilot is GROW times larger.
ESTIMATE_START = 50
GROW = 4
#: Seconds the estimate's pilots may take together (a pilot predicted to exceed it is skipped).
ESTIMATE_PILOT_SECONDS = 5.0
#: Share of the upper estimate (all time charged to the sizes) that pilots may cost beyond
#: ESTIMATE_PILOT_SECONDS.
PILOT_SHARE = 0.05
#: Print an estimate only for runs whose sampling alone is predicted to take longer than this.
SLOW_RUN_SECONDS = 10.0


@dataclass(frozen=True)
class DurationEstimate:
    """Expected wall time of an audit at explicit sizes, from timed pilot runs.

    ``estimated_seconds``: for ``samples``/``final_samples`` per input;
    ``pilot_seconds``: what the pilots cost; ``pilots``: how many were timed;
    ``upper``: True when a single pilot was charged entirely to the sizes (a slow
    mechanism, where the fixed cost is negligible): an overestimate.
    """

    samples: int
    final_samples: int
    estimated_seconds: float
    pilot_seconds: float
    pilots: int
    upper: bool

    def describe(self) -> str:
        """One line: "estimated duration at 10 000 / 100 000 per input: about 2.1 h (…)"."""
        kind = "at most about" if self.upper else "about"
        return (
            f"estimated duration at {self.samples:,} / {self.final_samples:,} per input "
            f"(selection / final): {kind} {format_seconds(self.estimated_seconds)} (from "
            f"{self.pilot_seconds:.1f} s of {self.pilots} timed pilot run(s) on this machine); "
            f"--time-budget SECONDS without sizes fits the sizes to a budget instead"
        )


def format_seconds(seconds: float) -> str:
    """``"42 s"``, ``"12 min"``, ``"3.4 h"``, ``"2.1 days"``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172_800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86_400:.1f} days"


def estimate_duration(
    run: Callable[[int, int], Any],
    samples: int,
    final_samples: int,
    *,
    start: int = ESTIMATE_START,
    pilot_seconds: float = ESTIMATE_PILOT_SECONDS,
) -> DurationEstimate | None:
    """Time ``run`` at growing sizes on the requested ``final/samples`` ray; extrapolate.

    After a warm-up at a quarter of ``start`` (imports, worker start), pilots at
    ``start``, ``GROW·start``, … selection samples (final samples in the
    requested ratio) run while the next one is predicted to fit ``pilot_seconds``
    (or :data:`PILOT_SHARE` of the upper estimate) and stays below a quarter of
    the request.  The last two are fitted by
    ``T ≈ c₀ + c·s`` along the ray.  With one pilot only (a slow mechanism) its
    whole time is charged to the sizes: an upper estimate.  ``None`` when the
    request is no larger than the second pilot (the run costs about as much as
    an estimate would).
    """
    ratio = final_samples / max(samples, 1)
    if samples <= GROW * start:
        return None

    def pilot(s: int) -> tuple[int, float]:
        return s, _timed(run, s, max(1, round(ratio * s)))

    warm = _timed(run, max(start // 4, 1), max(1, round(ratio * start / 4)))
    points = [pilot(start)]
    spent = warm + points[0][1]
    # A pilot is worth its time while it costs at most ``pilot_seconds`` or PILOT_SHARE of
    # the first pilot's upper estimate (a slow run can afford one more pilot, which
    # separates c₀ from the per-sample cost; further ones only within pilot_seconds).
    share = PILOT_SHARE * points[0][1] * samples / points[0][0]
    while (
        spent + GROW * points[-1][1] * 1.5
        <= (max(pilot_seconds, share) if len(points) == 1 else pilot_seconds)
        and GROW * points[-1][0] * 4 <= samples
    ):
        points.append(pilot(GROW * points[-1][0]))
        spent += points[-1][1]
    if len(points) == 1:
        (s1, t1), upper = points[0], True
        estimate = t1 * samples / s1
    else:
        (s1, t1), (s2, t2) = points[-2], points[-1]
        slope = max((t2 - t1) / (s2 - s1), 0.0)
        estimate, upper = max(t1 - slope * s1, 0.0) + slope * samples, False
    return DurationEstimate(samples, final_samples, estimate, spent, len(points), upper)


def seconds_per_output(draw: Callable[[int], Any], *, min_seconds: float = 0.05) -> float:
    """Wall seconds per output of ``draw(k)`` (``k`` outputs), doubling ``k`` until it is timed.

    The first call is a warm-up (imports, caches) and is not counted; ``k`` grows
    from 8 until one call takes ``min_seconds`` or ``k`` reaches 4096.
    """
    draw(1)
    k = 8
    while True:
        seconds = _timed(lambda s, f: draw(s), k, 0)
        if seconds >= min_seconds or k >= 4096:
            return seconds / k
        k *= 2
