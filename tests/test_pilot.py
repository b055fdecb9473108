"""engine/pilot: sizes from timed pilot runs fit the budget."""

from __future__ import annotations

import time

import pytest

from dpaudit.engine.pilot import MIN_SAMPLES, fit_cost, plan_sizes
from dpaudit.errors import InvalidArgumentError


def test_fit_recovers_an_exact_linear_cost() -> None:
    pts = [(s, f, 0.5 + 2e-6 * s + 3e-7 * f) for s, f in [(1, 10), (4, 10), (1, 40), (7, 3)]]
    c0, cs, cf = fit_cost(pts)
    assert (c0, cs, cf) == pytest.approx((0.5, 2e-6, 3e-7), rel=1e-6)


def test_plan_meets_the_budget_of_a_run_with_known_cost() -> None:
    """A run that sleeps c₀ + c_s·s + c_f·f: the plan's sizes are the budget's, within timing noise.

    Each slope is measured from 60 ms of extra sleep; a busy machine can delay a
    pilot by ~10 ms, which moves a slope by up to ~17 % and the planned size by
    about as much — hence the 30 % tolerance below (and 5 % above, for rounding).
    """
    c0, cs, cf = 0.02, 1e-5, 1e-6

    def run(s: int, f: int) -> None:
        time.sleep(c0 + cs * s + cf * f)

    plan = plan_sizes(run, 5.0, ratio=10)
    want = (5.0 - c0) / (cs + 10 * cf)  # 249 000
    assert plan.final_samples == 10 * plan.samples
    assert want * 0.7 <= plan.samples <= want * 1.05
    assert plan.fits and plan.estimated_seconds <= 5.0
    assert "estimated" in plan.describe()


def test_a_fast_run_gets_the_cap_and_a_slow_one_the_minimum() -> None:
    fast = plan_sizes(lambda s, f: None, 60.0, max_samples=100_000)
    assert fast.samples == 100_000
    slow = plan_sizes(lambda s, f: time.sleep(0.01 * (s + f) / 2000), 0.01, pilot_samples=200)
    assert slow.samples == MIN_SAMPLES and not slow.fits
    assert "does not fit" in slow.describe()


@pytest.mark.parametrize("budget", [0, -1.0, float("inf"), float("nan")])
def test_budget_must_be_positive_seconds(budget: float) -> None:
    with pytest.raises(InvalidArgumentError, match="time_budget"):
        plan_sizes(lambda s, f: None, budget)
