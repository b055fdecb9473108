"""Sizes that fit a time budget, from timed pilot runs of the real audit on this machine.

A default audit must finish: 10⁷ final samples take seconds for a scalar
Laplace mechanism and hours for a nearest-word mechanism or a library that
costs a millisecond per output.  Speed tables measured on another CPU do not
transfer, so the sizes come from the machine at hand: after one small
warm-up run (imports, worker start), the audit itself is run at growing sizes
(``s₀``, ``4s₀``, then each the largest predicted to take 1/:data:`PILOT_SHARE`
of the budget left; ``f = ratio·s`` final samples), and the wall time ``T(s)``
is extrapolated along the secant of the two largest pilots,

    T(s) ≈ c₀ + c·s    (c the secant's slope, c₀ its intercept).

Why a ladder and not a fit at small sizes: an audit's cost is concave in its
size — classifier training grows with the sizes only up to
``SearchConfig.train_floor`` outputs, worker start and the pairs' screening
are paid once — so slopes measured between pilots of 2 000 and 16 000 samples
charge those costs to every sample and overestimate a fast mechanism's time
tenfold (30 s estimated, 3.6 s taken, for a scalar user function).  The secant
of the largest pilots is the closest the budget allows; concavity keeps its
error on the safe side (the run ends before the budget).

The budget covers the pilots too: the sizes fit what is left of it after
them.  The pilots use their own seeds' work, so they cost time but no
confidence: the real audit runs afresh at the chosen sizes.  The fit is an
estimate; the result states it, and an explicit size on the command line
always wins.  The pilots' wall times include the machine's load at that
moment, which is also what the real run will meet.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dpaudit.errors import InvalidArgumentError

#: Selection samples of the smallest pilot; each further one is GROWTH times larger.
PILOT_SAMPLES = 2_000
#: Size ratio of consecutive pilots: wide, so that the slope stands out of the timing noise.
GROWTH = 4
#: Final samples per selection sample, as in the defaults (1e6 / 1e7).
FINAL_RATIO = 10
#: Never plan fewer selection samples than this: smaller audits cannot show anything.
MIN_SAMPLES = 1_000
#: No pilot is started that is predicted to take more than 1/this of the budget left; a first
#: pilot that took that long is the only one (a slow mechanism).  The pilots then cost about a
#: third of the budget when the cost grows linearly, leaving the audit the rest.
PILOT_SHARE = 4


@dataclass(frozen=True)
class SizePlan:
    """The sizes chosen for a budget and the timing model behind them.

    ``samples``/``final_samples``: per input; ``estimated_seconds``: the model's
    prediction for the audit at these sizes, pilots not included;
    ``fixed_seconds`` and ``seconds_per_sample``: the secant's ``c₀`` and ``c``
    (per selection sample with its ``ratio`` final samples); ``pilot_seconds``:
    what the warm-up and the pilots cost (taken from the budget); ``pilots``:
    their ``(samples, seconds)``; ``fits``: False when even the smallest audit
    (:data:`MIN_SAMPLES`) is predicted to exceed what is left of the budget.
    """

    samples: int
    final_samples: int
    estimated_seconds: float
    budget_seconds: float
    fixed_seconds: float
    seconds_per_sample: float
    pilot_seconds: float
    pilots: tuple[tuple[int, float], ...]
    fits: bool

    def describe(self) -> str:
        """One line for the terminal, e.g. "sizes 40 000 / 400 000 per input: about 95 s"."""
        head = (
            f"sizes {self.samples:,} / {self.final_samples:,} per input (selection / final), "
            f"estimated {self.estimated_seconds:.0f} s + {self.pilot_seconds:.1f} s of timed "
            f"pilot runs for a budget of {self.budget_seconds:.0f} s"
        )
        if not self.fits:
            head += " — the smallest useful audit does not fit; it runs anyway at these sizes"
        return head


def _timed(run: Callable[[int, int], Any], samples: int, final: int) -> float:
    t0 = time.perf_counter()
    run(samples, final)
    return time.perf_counter() - t0


def secant(points: list[tuple[int, float]]) -> tuple[float, float]:
    """``(c₀, c) ≥ 0`` of the line through the two largest ``(size, seconds)`` pilots.

    One pilot, or a slope that timing noise made negative or zero: the largest
    pilot's time is charged to its size alone (``c₀ = 0``), which overestimates
    the cost of any larger run, so the plan stays within the budget.
    """
    (s1, t1), (s2, t2) = (points[0], points[0]) if len(points) < 2 else points[-2:]
    slope = (t2 - t1) / (s2 - s1) if s2 > s1 else 0.0
    if slope <= 0.0:
        return 0.0, max(t2, 1e-9) / s2
    return max(t2 - slope * s2, 0.0), slope


def _ladder(
    run: Callable[[int, int], Any], budget: float, s0: int, ratio: int, max_samples: int
) -> list[tuple[int, float]]:
    """Pilots of growing size, each as large as 1/PILOT_SHARE of the budget left allows.

    The second pilot is ``GROWTH·s0`` (one pilot cannot tell fixed cost from
    slope); each later one is the largest the secant predicts to take
    ``1/PILOT_SHARE`` of what is left.  The ladder stops when that is less than
    twice the last size, or when even ``max_samples`` is predicted to take at
    most half of what is left (it will be planned; no need to look closer).
    """
    started = time.perf_counter()
    points = [(s0, _timed(run, s0, ratio * s0))]
    while points[-1][0] < max_samples:
        left = budget - (time.perf_counter() - started)
        if len(points) == 1:
            if points[0][1] > left / PILOT_SHARE:
                break  # slow: the first pilot is all the budget allows to look at
            size = GROWTH * s0
        else:
            c0, slope = secant(points)
            if c0 + slope * max_samples <= left / 2:
                break
            size = int((left / PILOT_SHARE - c0) / slope)
        size = min(size, max_samples)
        if size < 2 * points[-1][0]:
            break
        points.append((size, _timed(run, size, ratio * size)))
    return points


def plan_sizes(
    run: Callable[[int, int], Any],
    budget_seconds: float,
    *,
    pilot_samples: int = PILOT_SAMPLES,
    ratio: int = FINAL_RATIO,
    max_samples: int = 1_000_000,
) -> SizePlan:
    """Time ``run(samples, final_samples)`` at growing sizes and size the real run to the budget.

    ``run`` performs a complete audit at the given sizes (its result is
    discarded).  ``max_samples`` caps the selection size (the defaults'
    10⁶): a fast mechanism gets the default sizes, not more.
    """
    if not budget_seconds > 0 or not math.isfinite(budget_seconds):
        raise InvalidArgumentError("time_budget", budget_seconds, "a number of seconds > 0")
    started = time.perf_counter()
    s0 = min(pilot_samples, max_samples)
    _timed(run, max(s0 // 4, 1), max(ratio * s0 // 4, 1))  # imports, pool start: not a size cost
    points = _ladder(run, budget_seconds, s0, ratio, max_samples)
    spent = time.perf_counter() - started
    c0, slope = secant(points)
    left = budget_seconds - spent
    best = (left - c0) / slope
    samples = round_down(int(min(max(best, MIN_SAMPLES), max_samples)))
    return SizePlan(
        samples=samples,
        final_samples=samples * ratio,
        estimated_seconds=c0 + slope * samples,
        budget_seconds=float(budget_seconds),
        fixed_seconds=c0,
        seconds_per_sample=slope,
        pilot_seconds=spent,
        pilots=tuple(points),
        fits=best >= MIN_SAMPLES,
    )


def round_down(n: int) -> int:
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
#: ESTIMATE_PILOT_SECONDS (the time-budget planner's PILOT_SHARE above is another rule).
ESTIMATE_PILOT_SHARE = 0.05
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
    sized_seconds: Callable[[Any], float | None] | None = None,
) -> DurationEstimate | None:
    """Time ``run`` at growing sizes on the requested ``final/samples`` ray; extrapolate.

    After a warm-up at a quarter of ``start`` (imports, worker start), pilots at
    ``start``, ``GROW·start``, … selection samples (final samples in the
    requested ratio) run while the next one is predicted to fit ``pilot_seconds``
    (or :data:`ESTIMATE_PILOT_SHARE` of the upper estimate) and stays below a quarter of
    the request.  The last two are fitted by
    ``T ≈ c₀ + c·s`` along the ray.  When no larger pilot fits (a slow mechanism),
    one more at a quarter of ``start`` gives the second point: the fixed costs an
    audit pays whatever its size are then not charged per sample.  Only a first
    pilot of one selection sample has its whole time charged to the sizes: an
    upper estimate, unless ``sized_seconds`` reads from the pilot's own result
    (``run``'s return value) the seconds its sampling stages took: only those
    grow with the sizes, the rest (an audit's pair search, say) is paid once.
    ``None`` when the request is no larger than the second pilot (the run costs
    about as much as an estimate would).
    """
    ratio = final_samples / max(samples, 1)
    if samples <= GROW * start:
        return None

    sized: dict[int, float | None] = {}  # size → its pilot's sampling seconds, where known

    def pilot(s: int) -> tuple[int, float]:
        t0 = time.perf_counter()
        out = run(s, max(1, round(ratio * s)))
        sized[s] = None if sized_seconds is None else sized_seconds(out)
        return s, time.perf_counter() - t0

    # A warm-up of the pilot's own size (start < 4) would only pay the fixed costs twice:
    # the caller's speed probe has already run the mechanism once.
    warm = _timed(run, start // 4, max(1, round(ratio * start / 4))) if start >= 4 else 0.0
    points = [pilot(start)]
    spent = warm + points[0][1]
    # A pilot is worth its time while it costs at most ``pilot_seconds`` or ESTIMATE_PILOT_SHARE of
    # the first pilot's upper estimate (a slow run can afford one more pilot, which
    # separates c₀ from the per-sample cost; further ones only within pilot_seconds).
    share = ESTIMATE_PILOT_SHARE * points[0][1] * samples / points[0][0]
    while (
        spent + GROW * points[-1][1] * 1.5
        <= (max(pilot_seconds, share) if len(points) == 1 else pilot_seconds)
        and GROW * points[-1][0] * 4 <= samples
    ):
        points.append(pilot(GROW * points[-1][0]))
        spent += points[-1][1]
    if len(points) == 1 and start > 1:
        # A slow run affords no larger pilot, but a cheaper one at a quarter of the size
        # separates the fixed costs (classifier training per pair, pair screening) from
        # the per-sample ones; charging all of the first pilot to its size overestimated
        # a 0.2 ms/output function 2.7× and mldp's TEM 5× (pilot docstring).
        points.insert(0, pilot(max(start // GROW, 1)))
        spent += points[0][1]
    grows = sized[points[0][0]] if len(points) == 1 else None
    if grows is not None:
        # The pilot's own stage timings separate what it paid once from what grows.
        (s1, t1), grows = points[0], min(max(grows, 0.0), points[0][1])
        estimate, upper = t1 - grows + grows * samples / s1, False
    elif len(points) == 1:
        (s1, t1), upper = points[0], True
        estimate = t1 * samples / s1
    else:
        (s1, t1), (s2, t2) = points[-2], points[-1]
        # Between 0 (noise) and t2/s2 (no fixed cost): never above the all-to-size estimate.
        slope = min(max((t2 - t1) / (s2 - s1), 0.0), t2 / s2)
        estimate, upper = max(t2 - slope * s2, 0.0) + slope * samples, False
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
