"""The sequential final stage: its look plan, its coverage at every stopping time, and audits.

Coverage is simulated at the certifier: binomial counts at the boundary of the claim
(``p1 = e^ε·p2`` exactly), 2 000 runs; a false violation at any look is an error, and the
rate of each look's stops, and of all of them together, stays within α plus three binomial
standard errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _cli import run_cli_quiet

import dpaudit
from dpaudit import AuditConfig, Definition, InputDomain, PrivacyClaim, SearchConfig
from dpaudit.auditors.core.certify import FinalCounts, certify_one
from dpaudit.auditors.core.sequential import (
    LAST_LOOK_SHARE,
    MIN_FIRST_LOOK,
    LookPlan,
    certify_sequentially,
    futile,
    projected,
)
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.output_grid import round_to_grid

CLAIM = PrivacyClaim(Definition.PURE, 1.0, InputDomain((1,), 0.0, 1.0))


def half_scale(x, n, rng):  # ε = 2 against a claim of 1, bits rounded away
    return round_to_grid(x + rng.laplace(0.0, 0.5, size=(n, x.size)), 0.5)


def unit_scale(x, n, rng):  # exactly 1-DP
    return round_to_grid(x + rng.laplace(0.0, 1.0, size=(n, x.size)), 1.0)


def test_the_plan_doubles_to_the_final_size_and_spends_alpha_once():
    plan = LookPlan.of(1_000_000, 0.05)
    assert plan.sizes[-1] == 1_000_000 and len(plan.sizes) == 6
    assert all(
        b == 2 * a or b == 2 * a - 1 for a, b in zip(plan.sizes, plan.sizes[1:], strict=False)
    )
    assert math.isclose(sum(plan.errors), 0.05) and plan.errors[-1] == 0.05 * LAST_LOOK_SHARE
    assert LookPlan.of(MIN_FIRST_LOOK, 0.05) == LookPlan((MIN_FIRST_LOOK,), (0.05,))
    assert LookPlan.of(10**6, 0.05, looks=1) == LookPlan((10**6,), (0.05,))
    with pytest.raises(InvalidArgumentError, match="looks"):
        LookPlan.of(10**6, 0.05, looks=0)


def _boundary_runs(runs: int, alpha: float, seed: int) -> np.ndarray:
    """Look at which each run reported a violation (−1: none), at p1 = e·p2 under ε = 1."""
    rng = np.random.default_rng(seed)
    p2 = 0.05
    p1 = math.e * p2
    plan = LookPlan.of(64_000, alpha)
    stops = np.full(runs, -1)
    for r in range(runs):

        def draw(look: int, more: int) -> list[FinalCounts]:
            return [
                FinalCounts(int(rng.binomial(more, p1)), more, int(rng.binomial(more, p2)), more)
            ]

        out = certify_sequentially(draw, plan, 1.0)
        if out.certificates[0].lower_bound > 1.0:
            stops[r] = out.look
    return stops


@pytest.mark.parametrize("alpha", [0.05, 0.3])
def test_false_violations_stay_below_alpha_at_every_stopping_time(alpha: float):
    runs = 2000
    stops = _boundary_runs(runs, alpha, seed=11)
    se = math.sqrt(alpha * (1 - alpha) / runs)
    assert np.mean(stops >= 0) <= alpha + 3 * se
    plan = LookPlan.of(64_000, alpha)
    for look, share in enumerate(plan.errors):  # each look's stops within its own share
        share_se = math.sqrt(share * (1 - share) / runs)
        assert np.mean(stops == look) <= share + 3 * share_se


def test_a_clear_violation_stops_at_the_first_look():
    plan = LookPlan.of(64_000, 0.05)
    drawn = []

    def draw(look: int, more: int) -> list[FinalCounts]:
        drawn.append(more)
        return [FinalCounts(more // 2, more, more // 100, more)]  # loss ln 50 ≈ 3.9

    out = certify_sequentially(draw, plan, 1.0)
    assert out.look == 0 and drawn == [plan.sizes[0]]
    assert out.certificates[0].p1.bound_error == plan.errors[0] / 2


def test_a_sequential_audit_stops_early_on_a_violation_and_says_so():
    cfg = AuditConfig(samples=20_000, final_samples=1_000_000, sequential=True)
    result = dpaudit.audit(half_scale, CLAIM, config=cfg)
    assert result.violation and result.samples["final"] < 1_000_000
    assert result.witness.p1.samples == result.samples["final"]
    assert "Sequential final stage" in result.confidence_statement
    assert "share of α" in result.confidence_statement


def test_a_sequential_audit_of_a_correct_mechanism_runs_to_the_end():
    cfg = AuditConfig(samples=20_000, final_samples=200_000, sequential=True)
    result = dpaudit.audit(unit_scale, CLAIM, config=cfg)
    assert not result.violation and result.samples["final"] == 200_000
    fixed = dpaudit.audit(
        unit_scale, CLAIM, config=AuditConfig(samples=20_000, final_samples=200_000)
    )
    # Half of α at the last look: a slightly lower bound than the fixed plan's, never above it
    # by more than the looks' independent draws allow (both are lower bounds of ε = 1).
    assert result.epsilon_lower_bound <= 1.0 and fixed.epsilon_lower_bound <= 1.0


def test_bad_sequential_value_names_the_field():
    with pytest.raises(InvalidArgumentError, match="sequential"):
        AuditConfig(sequential="yes")  # type: ignore[arg-type]


def test_cli_takes_sequential_and_values_only(capsys):
    code, out, _ = run_cli_quiet(
        capsys, "audit", "adept-acl22", "--epsilon", "1", "-p", "dim=4", "--samples", "2e4",
        "--final-samples", "2e5", "--sequential", "--values-only", "--json",
    )  # fmt: skip
    import json

    result = json.loads(out)
    assert code == 0  # a finding is not an error (--fail-on-violation makes it one)
    assert result["violation"] and result["samples"]["final"] < 200_000
    assert any("not examined" in n for n in result["notes"])


def test_values_only_matches_the_search_config_switch():
    cfg = AuditConfig(
        samples=5_000, final_samples=10_000, search=SearchConfig(representation=False)
    )
    assert cfg.search.representation is False


def test_a_statement_far_below_the_claim_stops_for_futility_at_the_first_look():
    plan = LookPlan.of(64_000, 0.05)
    drawn = []

    def draw(look: int, more: int) -> list[FinalCounts]:
        drawn.append(more)
        return [FinalCounts(more // 10, more, more // 10, more)]  # loss 0 against a claim of 1

    out = certify_sequentially(draw, plan, 1.0)
    assert out.futile and out.look == 0 and drawn == [plan.sizes[0]]
    assert "for futility" in plan.describe(out.look, out.futile)


def test_the_projection_is_optimistic_and_certified_at_the_last_looks_error():
    plan = LookPlan.of(64_000, 0.05)
    seen = FinalCounts(100, 2_000, 40, 2_000)
    grown = projected(seen, 64_000)
    assert grown.samples_x == grown.samples_x_prime == 64_000
    assert grown.hits_x / 64_000 > 100 / 2_000 > 40 / 2_000 > grown.hits_x_prime / 64_000
    # The face-value loss ln(100/40) ≈ 0.92 could reach 1 at optimistic rates: not futile.
    assert not futile([seen], plan, 1.0)
    assert futile([seen], plan, 3.0)


#: A borderline violation of a claim of 1: about half the runs certify it at 64 000 outputs.
TRUE_EPSILON = 1.06


def _detections(runs: int, stop_for_futility: bool, seed: int) -> int:
    """Runs certifying ε > 1 where the truth is :data:`TRUE_EPSILON` (p2 = 0.05), 64 000
    outputs per input in the looks of :meth:`LookPlan.of`."""
    p2 = 0.05
    p1 = math.exp(TRUE_EPSILON) * p2
    plan = LookPlan.of(64_000, 0.05)
    found = 0
    for run in range(runs):
        rng = np.random.default_rng([seed, run])  # the same looks with and without the stop
        hits = [0, 0]
        for look, size in enumerate(plan.sizes):
            more = size - (plan.sizes[look - 1] if look else 0)
            hits = [hits[0] + int(rng.binomial(more, p1)), hits[1] + int(rng.binomial(more, p2))]
            pooled = FinalCounts(hits[0], size, hits[1], size)
            each = plan.errors[look] / 2
            if certify_one(pooled, each).lower_bound > 1.0:
                found += 1
                break
            if stop_for_futility and look < len(plan.sizes) - 1 and futile([pooled], plan, 1.0):
                break
    return found


def test_stopping_for_futility_costs_a_borderline_violation_almost_no_power():
    """Same draws with and without the futility stop (same seed): the stop can only lose
    detections, and at FUTILITY_ERROR = 1e-3 per rate and look it loses at most a few in
    400 (2 rates × 5 early looks × 1e-3 = 1 % per run, at worst)."""
    without = _detections(400, False, seed=5)
    with_stop = _detections(400, True, seed=5)
    assert with_stop <= without
    assert without - with_stop <= 8  # 1 % of 400 = 4 expected at worst; 8 is > 3 sd above
    assert 100 < without < 300  # the case is borderline: neither sure nor hopeless
