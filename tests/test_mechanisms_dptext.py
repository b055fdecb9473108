"""DPText's sampler as published (Habernal, ACL 2022, Eq. 8–9), per NaN policy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.errors import DPAuditError
from dpaudit.mechanisms import make_mechanism

ALPHA = 1e-3  # KS p-value threshold at a fixed seed (fails for 1 seed in 1000)
N = 40_000


def _noise(policy: str, dim: int = 2, eps: float = 1.0, seed: int = 0) -> tuple[object, np.ndarray]:
    mech = make_mechanism("dptext", epsilon=eps, dim=dim, nan_policy=policy)
    out = mech.sample(np.zeros(dim), N // dim, np.random.default_rng(seed))
    return mech, out.ravel()


def test_zero_policy_is_zero_half_the_time_and_never_negative() -> None:
    mech, noise = _noise("zero")
    assert not np.isnan(noise).any()
    assert noise.min() >= 0.0
    # P[noise = 0] = 1/2: binomial, within 5 standard errors.
    frac = np.mean(noise == 0.0)
    assert abs(frac - 0.5) < 5 * math.sqrt(0.25 / noise.size)
    # The non-zero part is b·Exp(1) (KS against scipy's exponential), b = n/ε = 2.
    positive = noise[noise > 0]
    assert stats.kstest(positive, stats.expon(scale=mech.scale).cdf).pvalue > ALPHA
    assert stats.kstest(positive, stats.expon(scale=1.1 * mech.scale).cdf).pvalue < ALPHA
    # And it is certainly not Laplace.
    assert stats.kstest(noise, stats.laplace(scale=mech.scale).cdf).pvalue < ALPHA


def test_discard_policy_redraws_to_exponential() -> None:
    mech, noise = _noise("discard", seed=1)
    assert not np.isnan(noise).any()
    assert noise.min() >= 0.0
    assert np.mean(noise == 0.0) < 1e-3
    assert stats.kstest(noise, stats.expon(scale=mech.scale).cdf).pvalue > ALPHA


def test_keep_policy_keeps_nans() -> None:
    mech, noise = _noise("keep", seed=2)
    assert mech.allows_nan_output
    assert not make_mechanism("dptext", epsilon=1.0).allows_nan_output
    frac = np.mean(np.isnan(noise))
    assert abs(frac - 0.5) < 5 * math.sqrt(0.25 / noise.size)
    finite = noise[~np.isnan(noise)]
    assert finite.min() >= 0.0
    assert stats.kstest(finite, stats.expon(scale=mech.scale).cdf).pvalue > ALPHA


def test_noise_from_uniform_is_the_literal_transform() -> None:
    mech = make_mechanism("dptext", epsilon=0.5, dim=1)  # b = 2
    u = np.array([0.0, 0.1, 0.25, 0.49, 0.51, 0.9, 0.999])
    expected = -2.0 * np.log(1.0 - 2.0 * u[:4])
    got = mech.noise_from_uniform(u)
    np.testing.assert_allclose(got[:4], expected, rtol=1e-15)
    np.testing.assert_array_equal(got[4:], 0.0)  # NaN → 0, as the reference code did
    keep = make_mechanism("dptext", epsilon=0.5, nan_policy="keep").noise_from_uniform(u)
    assert np.isnan(keep[4:]).all()
    assert mech.is_additive


def test_noise_from_uniform_matches_sampler_in_law() -> None:
    rng = np.random.default_rng(9)
    for policy in ("zero", "discard"):
        mech = make_mechanism("dptext", epsilon=1.0, dim=1, nan_policy=policy)
        fused = mech.noise_from_uniform(rng.random(N))
        sampled = mech.sample([0.0], N, rng).ravel()
        assert stats.ks_2samp(fused, sampled).pvalue > ALPHA


def test_truth_is_infinite_with_witness() -> None:
    mech = make_mechanism("dptext", epsilon=1.0, dim=3)
    truth = mech.truth()
    assert truth.true_epsilon == math.inf
    assert truth.violates(mech.claim)
    assert truth.witness.x == (0.0, 0.0, 0.0) and truth.witness.x_prime == (1.0, 1.0, 1.0)
    assert "y[0] < 1" in truth.witness.event
    assert mech.privacy_loss([0.0, 0.0, 0.0], [0.0, 0.0, 0.5]) == math.inf
    assert mech.privacy_loss([0.3, 0.3, 0.3], [0.3, 0.3, 0.3]) == 0.0
    assert mech.known_flawed


@pytest.mark.parametrize(
    ("params", "argument"),
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": 1.0, "nan_policy": "ignore"}, "nan_policy"),
        ({"epsilon": 1.0, "dim": 0}, "dim"),
        ({"epsilon": 1.0, "domain": "0,0"}, "domain"),
    ],
)
def test_bad_parameters(params: dict, argument: str) -> None:
    with pytest.raises(DPAuditError, match=argument):
        make_mechanism("dptext", **params)


@pytest.mark.parametrize("x", [[math.nan], [-0.5], [0.0, 0.0]])
def test_bad_inputs(x: list[float]) -> None:
    with pytest.raises(DPAuditError, match="x"):
        make_mechanism("dptext", epsilon=1.0).sample(x, 2, np.random.default_rng(0))
