"""engine/pilot: sizes from timed pilot runs fit the budget."""

from __future__ import annotations

import time

import pytest

from dpaudit.engine.pilot import (
    MIN_SAMPLES,
    PILOT_SHARE,
    estimate_duration,
    format_seconds,
    plan_sizes,
    secant,
    seconds_per_output,
)
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


# ------------------------------------------------ explicit sizes: the expected duration
def test_estimate_recovers_a_known_cost_on_the_requested_ray() -> None:
    """A run sleeping 0.05 + 2·10⁻⁵·(s + f) s: the estimate at 10⁵ / 10⁶ is its 22 s.

    The fit takes the last two pilots (≥ 50 and 200 selection samples, 0.06–0.1 s
    of sleep); ~10 ms of scheduling noise moves the slope by < 25 %, hence the
    tolerance.
    """

    def run(s: int, f: int) -> None:
        time.sleep(0.05 + 2e-5 * (s + f))

    est = estimate_duration(run, 100_000, 1_000_000, pilot_seconds=3.0)
    assert est is not None and not est.upper and est.pilots >= 2
    truth = 0.05 + 2e-5 * 1_100_000
    assert 0.75 * truth <= est.estimated_seconds <= 1.25 * truth
    assert est.pilot_seconds < 4.0 and "estimated duration at 100,000 / 1,000,000" in est.describe()


def test_a_slow_run_gets_a_quarter_pilot_that_separates_fixed_costs() -> None:
    """0.2 s fixed (training, screening) + 0.1 s per 550 outputs; no larger pilot fits.

    A second pilot of 4× the first (≈ 1.4 s) would exceed both 0.01 s and 5 % of the
    6 s upper estimate, so the second point is a quarter pilot (12 / 120): the fit
    charges the 0.2 s once.  Truth 0.2 + 2.0 = 2.2 s; all-to-size would say
    0.3·11000/550 = 6 s.  Sleep overshoot on a loaded machine (≲ 30 ms per call)
    moves the slope by ≲ 0.03 s / 38 samples, ≲ 0.8 s at 1000: the tolerance below.
    """

    def run(s: int, f: int) -> None:
        time.sleep(0.2 + 0.1 * (s + f) / 550)

    est = estimate_duration(run, 1000, 10_000, pilot_seconds=0.01)
    assert est is not None and not est.upper and est.pilots == 2
    assert 2.2 * 0.8 <= est.estimated_seconds <= 2.2 + 1.0, est
    assert est.estimated_seconds < 0.3 * 11_000 / 550  # below the all-to-size estimate
    assert "about" in est.describe() and "at most" not in est.describe()
    # A request no larger than the second pilot needs no estimate.
    assert estimate_duration(run, 200, 2000) is None


def test_a_one_sample_pilot_is_an_upper_estimate() -> None:
    # A request of 15: a 4-sample pilot would exceed a quarter of it, none below 1 exists.
    est = estimate_duration(lambda s, f: time.sleep(0.01 * s), 15, 150, start=1)
    assert est is not None and est.upper and est.pilots == 1
    assert "at most about" in est.describe()


def test_a_one_sample_pilot_with_its_own_stage_timings_is_not_an_upper_estimate() -> None:
    """0.3 s paid once (a pair search) + 2 ms per output, the pilot reporting its sampling time.

    Truth at 40 / 160: 0.3 + 0.002·200 = 0.7 s; all-to-size would charge the one-sample
    pilot's 0.31 s forty times (12.4 s).  Sleep overshoot (≲ 30 ms per call on a
    loaded machine) on the 10 ms sampling part, scaled 40×, allows ≲ 1.2 s: the tolerance.
    """

    def run(s: int, f: int) -> float:
        time.sleep(0.3)
        t0 = time.perf_counter()
        time.sleep(0.002 * (s + f))
        return time.perf_counter() - t0

    est = estimate_duration(
        run, 40, 160, start=1, pilot_seconds=0.01, sized_seconds=lambda took: took
    )
    assert est is not None and not est.upper and est.pilots == 1
    assert 0.7 * 0.9 <= est.estimated_seconds <= 0.7 + 1.2, est
    assert est.pilot_seconds < 0.5  # no warm-up of the pilot's own size: one fixed cost paid
    assert "about" in est.describe() and "at most" not in est.describe()


def test_seconds_per_output_times_the_draw() -> None:
    per = seconds_per_output(lambda k: time.sleep(1e-4 * k))
    assert 0.8e-4 <= per <= 2e-4
    assert format_seconds(42) == "42 s" and format_seconds(3600 * 3) == "3.0 h"


def test_cli_prints_the_estimate_before_a_slow_audit(capsys: pytest.CaptureFixture[str]) -> None:
    """``_estimate`` (the CLI's step before an audit at explicit sizes) on a 0.5 ms/output draw."""
    import argparse

    from dpaudit.cli.sizing import estimate as _estimate

    args = argparse.Namespace(samples=20_000, final_samples=200_000, json=False)
    _estimate(args, lambda s, f: time.sleep(5e-6 * (s + f)), lambda k: time.sleep(5e-4 * k))
    err = capsys.readouterr().err
    assert "estimated duration at 20,000 / 200,000 per input" in err and "µs per output" in err
    assert args.planned_seconds > 0  # the audit's stage bars carry it (progress.whole_run)
    # A fast mechanism: no pilots, nothing printed.
    _estimate(args, lambda s, f: None, lambda k: None)
    assert capsys.readouterr().err == ""
