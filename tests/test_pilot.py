"""engine/pilot: sizes from timed pilot runs fit the budget."""

from __future__ import annotations

import time

import pytest

from dpaudit.engine.pilot import MIN_SAMPLES, PILOT_SHARE, plan_sizes, secant
from dpaudit.errors import InvalidArgumentError


def test_secant_recovers_an_exact_line_and_stays_safe_on_noise() -> None:
    assert secant([(10, 9.0), (100, 0.5 + 0.02 * 100), (400, 0.5 + 0.02 * 400)]) == pytest.approx(
        (0.5, 0.02)
    )
    # One pilot, or a slope noise made negative: all time charged to the size (c₀ = 0).
    assert secant([(100, 2.0)]) == (0.0, 0.02)
    assert secant([(100, 2.0), (400, 1.9)]) == (0.0, 1.9 / 400)


def test_a_concave_cost_is_not_charged_per_sample() -> None:
    """Fixed costs that small pilots cannot tell from a slope (training that stops growing).

    The run costs 0.1 s, plus 0.05 s spread over its first 4 000 samples (a
    classifier's training that stops growing), plus 10⁻⁶ s per sample: a slope
    taken between pilots of 1 000 and 4 000 samples (1.35·10⁻⁵ s per sample)
    would plan 13× too few samples.  The ladder climbs past the kink, so the
    run lands between half the budget and the budget (which also pays the
    pilots; 5 % over for sleep's overshoot).
    """

    def cost(s: int) -> float:
        return 0.1 + 0.05 * min(s, 4_000) / 4_000 + 1e-6 * s

    def run(s: int, f: int) -> None:
        time.sleep(cost(s))

    plan = plan_sizes(run, 3.0, pilot_samples=1_000, max_samples=10**7)
    real = cost(plan.samples) + plan.pilot_seconds
    assert 0.5 * 3.0 <= real <= 3.0 * 1.05, (plan, real)
    assert all(t <= 3.0 / PILOT_SHARE * 2 for _, t in plan.pilots)


def test_plan_meets_the_budget_of_a_run_with_known_cost() -> None:
    """A run that sleeps c₀ + c_s·s + c_f·f: the plan's sizes are the budget's, within timing noise.

    The slope is measured from ≥ 120 ms of extra sleep; a busy machine can delay a
    pilot by ~10 ms, which moves a slope by up to ~17 % and the planned size by
    about as much — hence the 30 % tolerance below (and 5 % above, for rounding).
    """
    c0, cs, cf = 0.02, 1e-5, 1e-6

    def run(s: int, f: int) -> None:
        time.sleep(c0 + cs * s + cf * f)

    plan = plan_sizes(run, 5.0, ratio=10)
    want = (5.0 - plan.pilot_seconds - c0) / (cs + 10 * cf)  # about 235 000
    assert plan.final_samples == 10 * plan.samples
    assert want * 0.7 <= plan.samples <= want * 1.05
    assert plan.fits and plan.estimated_seconds + plan.pilot_seconds <= 5.0
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
