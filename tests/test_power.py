"""``auditors/core/power``: the smallest loss an audit of a given size would certify."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.auditors.blackbox.auditor import audit
from dpaudit.auditors.blackbox.config import AuditConfig
from dpaudit.auditors.core.power import (
    MAX_SAMPLES,
    certifiable_ceiling,
    describe_power,
    detectable_loss,
    power_summary,
    samples_for_loss,
)
from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.engine.config import ExecutionConfig
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms import make_mechanism


def test_ceiling_is_the_closed_form_of_all_hits_against_none() -> None:
    n, e = 10**6, 0.0125
    want = math.log(e ** (1 / n)) - math.log(1 - e ** (1 / n))
    assert certifiable_ceiling(n, e) == pytest.approx(want, rel=1e-9)
    assert certifiable_ceiling(n, e) == pytest.approx(math.log(n / math.log(1 / e)), abs=1e-3)


@pytest.mark.parametrize(("mass", "n"), [(0.5, 10**5), (0.05, 10**5), (0.01, 10**6)])
def test_detection_rate_at_the_detectable_loss_is_high(mass: float, n: int) -> None:
    """Simulated: sets at the detectable loss are certified above ε in ≈ 90 % of audits.

    2000 seeded audits; the rate's binomial standard error is ≤ 0.011, so the
    bounds 0.8 and 0.45 below leave > 5 standard errors on either side of 0.9
    and of the ≤ 0.5 expected just under the threshold (the counts' medians).
    """
    claimed, e = 1.0, 0.0125
    loss = detectable_loss(claimed, n, e, mass)
    assert claimed < loss < certifiable_ceiling(n, e)
    rng = np.random.default_rng(7)

    def rate(true_loss: float) -> float:
        k1 = rng.binomial(n, mass, 2000)
        k2 = rng.binomial(n, mass * math.exp(-true_loss), 2000)
        bound = np.log(clopper_pearson_lower(k1, n, e)) - np.log(clopper_pearson_upper(k2, n, e))
        return float(np.mean(bound > claimed))

    assert rate(loss) >= 0.8
    # Halfway between the claim and the detectable loss, detection is a coin flip at best.
    assert rate(claimed + 0.5 * (loss - claimed)) <= 0.45


def test_smaller_sets_and_fewer_samples_need_larger_losses() -> None:
    e = 0.0125
    big, small = detectable_loss(1.0, 10**6, e, 0.5), detectable_loss(1.0, 10**6, e, 0.001)
    assert 1.0 < big < small
    assert detectable_loss(1.0, 10**4, e, 0.5) > big
    # A set too rare for the sample size can certify nothing.
    assert detectable_loss(1.0, 1000, e, 1e-5) == math.inf


def test_summary_and_sentence() -> None:
    s = power_summary(1.0, 10**6, 0.0125)
    assert list(s) == ["mass 0.5", "mass 0.1", "mass 0.01", "mass 0.001", "ceiling"]
    text = describe_power(1.0, s)
    assert "ε = 1" in text and "mass 0.5" in text and f"{s['ceiling']:.3g}" in text


def test_bad_arguments_are_named() -> None:
    with pytest.raises(InvalidArgumentError, match="mass"):
        detectable_loss(1.0, 100, 0.01, 0.0)
    with pytest.raises(InvalidArgumentError, match="n"):
        detectable_loss(1.0, 0, 0.01, 0.5)


def test_a_black_box_audit_says_what_it_could_see_or_that_it_could_not() -> None:
    cfg = AuditConfig(samples=4_000, final_samples=8_000, seed=0)
    ok = audit(make_mechanism("laplace", epsilon=1.0), cfg, ExecutionConfig(workers=1))
    assert not ok.violation and ok.verdict_text.startswith("no violation found")
    assert 1.0 < ok.power["mass 0.5"] < ok.power["mass 0.01"] < ok.power["ceiling"]
    assert any(n.startswith("What this audit could see") for n in ok.notes)
    # ε = 12 lies above what 8 000 final samples can ever certify (ceiling ≈ ln(8000/4.4)).
    big = audit(make_mechanism("laplace", epsilon=12.0), cfg, ExecutionConfig(workers=1))
    assert big.verdict_text.startswith("inconclusive") and big.power["mass 0.5"] == math.inf


@pytest.mark.parametrize(("claimed", "mass"), [(0.1, 0.5), (1.0, 0.01), (0.2, 1e-4)])
def test_samples_for_loss_inverts_the_detectable_loss(claimed: float, mass: float) -> None:
    """At the samples it names, the target loss is detectable; at 0.8 of them it is not yet."""
    e, target = 0.0125, 2 * claimed
    n = samples_for_loss(target, claimed, e, mass)
    assert detectable_loss(claimed, n, e, mass) <= target * (1 + 1e-9)
    assert detectable_loss(claimed, int(0.8 * n), e, mass) > target
    # No loss at or below the claim can ever be shown.
    assert samples_for_loss(claimed, claimed, e, mass) == MAX_SAMPLES
