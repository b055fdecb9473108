"""Runs of a sanity check fitted to a time budget: as many as can change the verdict.

Two timed pilots of the real check, on a stream of their own and then discarded, give its
cost per run and the four candidates' counts (two guesses × two directions).  The best
candidate's loss at face value, ``L̂``, decides what more runs can do:

* ``L̂`` above the claim: the runs at which a loss ``L̂`` on a set of that mass is certified
  above the claim with about 90 % probability (:func:`~dpaudit.auditors.core.power.
  samples_for_loss`, at the check's own error α/8), times :data:`HEADROOM`, within the
  budget and never fewer than the default;
* ``L̂`` not above the claim: more runs would not make it a violation, so the default
  :data:`DEFAULT_RUNS`, or fewer when the budget affords fewer.

The final check then runs once at that size on its own stream: its confidence is exactly
the stated one, since the size was chosen from samples it never counts.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.auditors.core.certify import split_error
from dpaudit.auditors.core.power import MAX_SAMPLES, samples_for_loss
from dpaudit.auditors.sanity.check import SANITY_STATEMENTS
from dpaudit.engine.pilot import round_down, secant
from dpaudit.errors import InvalidArgumentError

#: Runs per input of a check given no size and no reason for more.
DEFAULT_RUNS = 1_000_000
#: Runs per input of the two pilots.
PILOT_RUNS = (20_000, 100_000)
#: More runs than the 90 %-power size, for a loss estimated on the pilot's counts.
HEADROOM = 1.5
#: The loss planned for when the pilot saw a set under one input only (e^-60 ≈ 0).
NEVER_SEEN_LOSS = 60.0
#: Share of the budget kept free for what the pilots cannot see.
MARGIN = 0.1


@dataclass(frozen=True)
class SanitySizes:
    """The runs chosen, what they cost, and the pilot's face-value loss behind them."""

    runs: int
    budget_seconds: float
    estimated_seconds: float
    pilot_seconds: float
    pilot_loss: float
    needed_runs: int | None

    def describe(self) -> str:
        """What was chosen and why, for the line before the result."""
        loss = "∞" if math.isinf(self.pilot_loss) else f"{self.pilot_loss:.3g}"
        head = (
            f"sized to the {self.budget_seconds:g} s budget (--runs {self.runs}; about "
            f"{self.estimated_seconds:.0f} s, after a {self.pilot_seconds:.1f} s pilot whose "
            f"best set loses {loss} at face value)"
        )
        if self.needed_runs is None:
            return f"{head}: not above the claim, so the default size"
        if self.needed_runs > self.runs:
            return (
                f"{head}: about {self.needed_runs:,} runs would certify it above the claim; "
                "the budget affords fewer (raise --time-budget)"
            )
        return f"{head}: {self.needed_runs:,} runs certify it above the claim with ≈ 90 % power"


def face_value_loss(counts: Any) -> tuple[float, float]:
    """The best candidate's ``ln(p_a/p_b)`` on the counts ``f[true][guess]``, and ``p_a``."""
    f = np.asarray(counts, dtype=np.float64)
    n = f.sum(axis=1)
    best, mass = -math.inf, 1.0
    for guess in (0, 1):
        for a, b in ((0, 1), (1, 0)):
            p_a, p_b = f[a, guess] / n[a], f[b, guess] / n[b]
            if p_a == 0:
                continue
            loss = math.inf if p_b == 0 else math.log(p_a / p_b)
            if loss > best:
                best, mass = loss, p_a
    return best, mass


def plan_sanity_runs(
    pilot: Any, claimed: float, budget_seconds: float, confidence: float
) -> SanitySizes:
    """Runs per input for a check of a claim of ``claimed`` within ``budget_seconds``.

    ``pilot(runs)`` runs the real check at ``runs`` (a stream of its own) and returns its
    counts ``f[true][guess]``.
    """
    if not (math.isfinite(budget_seconds) and budget_seconds > 0):
        raise InvalidArgumentError("--time-budget", budget_seconds, "a number of seconds > 0")
    started = time.perf_counter()
    times = []
    for runs in PILOT_RUNS:
        t0 = time.perf_counter()
        counts = pilot(runs)
        times.append(time.perf_counter() - t0)
    spent = time.perf_counter() - started
    fixed, slope = secant(list(zip(PILOT_RUNS, times, strict=True)))
    affordable = max(int((budget_seconds * (1 - MARGIN) - spent - fixed) / slope), PILOT_RUNS[0])
    loss, mass = face_value_loss(counts)
    needed = None
    if loss > claimed:
        error = split_error(1.0 - confidence, SANITY_STATEMENTS)
        target = NEVER_SEEN_LOSS if math.isinf(loss) else loss
        needed = min(samples_for_loss(target, claimed, error, mass), MAX_SAMPLES)
        runs = min(max(int(needed * HEADROOM), DEFAULT_RUNS), affordable)
    else:
        runs = min(DEFAULT_RUNS, affordable)
    runs = _round(runs)
    return SanitySizes(
        runs=runs,
        budget_seconds=float(budget_seconds),
        estimated_seconds=spent + fixed + slope * runs,
        pilot_seconds=spent,
        pilot_loss=loss,
        needed_runs=needed,
    )


def _round(n: int) -> int:
    """``n`` rounded down to two significant digits (at least 100)."""
    return round_down(max(n, 100))


__all__ = ["DEFAULT_RUNS", "SanitySizes", "face_value_loss", "plan_sanity_runs"]
