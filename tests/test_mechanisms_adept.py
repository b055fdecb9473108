"""ADePT samplers: clipping, Laplace noise (KS against scipy), log-density, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.errors import DPAuditError
from dpaudit.mechanisms import make_mechanism

# KS tolerance: a correct sampler's p-value is uniform on (0, 1); p > 1e-3 at a
# fixed seed fails for one seed in a thousand.  Power: the same data against a
# 10% wrong scale is rejected.
ALPHA = 1e-3
N = 20_000


@pytest.mark.parametrize(
    ("name", "x", "expected_center"),
    [
        ("adept", [3.0, 4.0], [0.6, 0.8]),  # L2 clip to C = 1
        ("adept-l1", [3.0, -1.0], [0.75, -0.25]),  # L1 clip to C = 1
        ("adept-fixed-scale", [0.0, 2.0], [0.0, 1.0]),
        ("adept-acl22", [0.0, 1.0], [0.0, 1.0]),  # no clipping
    ],
)
def test_sampler_clips_then_adds_laplace(name: str, x: list, expected_center: list) -> None:
    mech = make_mechanism(name, epsilon=0.7, dim=2)
    out = mech.sample(x, N, np.random.default_rng(31))
    assert out.shape == (N, 2)
    noise = (out - np.array(expected_center)).ravel()
    assert stats.kstest(noise, stats.laplace(scale=mech.scale).cdf).pvalue > ALPHA
    assert stats.kstest(noise, stats.laplace(scale=1.1 * mech.scale).cdf).pvalue < ALPHA
    # The centre is the clipped input: mean within 5 standard errors (sd of Lap(b) is b√2).
    se = mech.scale * math.sqrt(2) / math.sqrt(N)
    assert np.all(np.abs(out.mean(axis=0) - expected_center) < 5 * se)


def test_scales() -> None:
    assert make_mechanism("adept", epsilon=0.5, dim=9, bound=2.0).scale == pytest.approx(8.0)
    assert make_mechanism("adept-l1", epsilon=0.5, dim=9, bound=2.0).scale == pytest.approx(8.0)
    fixed = make_mechanism("adept-fixed-scale", epsilon=0.5, dim=9, bound=2.0)
    assert fixed.scale == pytest.approx(24.0)
    assert make_mechanism("adept-acl22", epsilon=0.5, dim=9).scale == pytest.approx(2.0)


def test_acl22_noise_from_uniform_is_laplace() -> None:
    mech = make_mechanism("adept-acl22", epsilon=2.0, dim=4)
    assert mech.is_additive
    noise = mech.noise_from_uniform(np.random.default_rng(4).random(N))
    assert stats.kstest(noise, stats.laplace(scale=0.5).cdf).pvalue > ALPHA
    assert not make_mechanism("adept", epsilon=1.0).is_additive  # clipping is not additive


def test_log_prob_uses_the_clipped_centre() -> None:
    mech = make_mechanism("adept", epsilon=1.0, dim=2, bound=1.0)
    y = np.array([[0.0, 0.0], [0.6, 0.8], [-3.0, 2.0]])
    expected = stats.laplace([0.6, 0.8], mech.scale).logpdf(y).sum(axis=1)
    np.testing.assert_allclose(mech.log_prob([30.0, 40.0], y), expected, rtol=1e-12)


def test_claims() -> None:
    mech = make_mechanism("adept", epsilon=1.0, dim=4, bound=2.0)
    assert mech.claim.sensitivity == 4.0 and mech.claim.sensitivity_norm == "L1"
    assert mech.known_flawed
    assert make_mechanism("adept-acl22", epsilon=1.0).known_flawed
    assert not make_mechanism("adept-l1", epsilon=1.0).known_flawed
    assert not make_mechanism("adept-fixed-scale", epsilon=1.0).known_flawed
    assert math.isinf(mech.claim.domain.low) and math.isinf(mech.claim.domain.high)


@pytest.mark.parametrize("name", ["adept", "adept-l1", "adept-fixed-scale"])
@pytest.mark.parametrize(
    ("params", "argument"),
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -2.0}, "epsilon"),
        ({"epsilon": 1.0, "bound": 0.0}, "bound"),
        ({"epsilon": 1.0, "bound": -1.0}, "bound"),
        ({"epsilon": 1.0, "dim": 0}, "dim"),
        ({"epsilon": 1.0, "domain": "2,1"}, "domain"),
        ({"epsilon": 1.0, "lambda": 3.0}, "lambda"),
    ],
)
def test_bad_parameters(name: str, params: dict, argument: str) -> None:
    with pytest.raises(DPAuditError, match=argument):
        make_mechanism(name, **params)


def test_acl22_has_no_bound() -> None:
    with pytest.raises(DPAuditError, match="bound"):
        make_mechanism("adept-acl22", epsilon=1.0, bound=1.0)


@pytest.mark.parametrize("name", ["adept", "adept-acl22"])
@pytest.mark.parametrize("x", [[math.nan, 0.0], [math.inf, 0.0], [0.1], [0.1, 0.2, 0.3]])
def test_bad_inputs(name: str, x: list[float]) -> None:
    mech = make_mechanism(name, epsilon=1.0, dim=2)
    with pytest.raises(DPAuditError, match="x"):
        mech.sample(x, 3, np.random.default_rng(0))
