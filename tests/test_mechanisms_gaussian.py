"""The Gaussian mechanism: sampler GOF, log-density, calibration and truth."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.analysis.gaussian import gaussian_delta
from dpaudit.errors import DPAuditError
from dpaudit.mechanisms import make_mechanism

# GOF tolerance: under a correct sampler the KS p-value is uniform on (0, 1), so
# requiring p > 1e-3 fails for one seed in a thousand; the seed is fixed, so the
# test is deterministic.  A power check (a 10% wrong scale is rejected at the
# same sample size) shows the test can fail.
ALPHA = 1e-3
N = 20_000


@pytest.mark.parametrize("calibration", ["analytic", "classic"])
def test_sampler_ks(calibration: str) -> None:
    mech = make_mechanism("gaussian", epsilon=0.7, dim=3, calibration=calibration)
    x = np.array([0.2, 0.5, 1.0])
    out = mech.sample(x, N, np.random.default_rng(11))
    assert out.shape == (N, 3)
    noise = (out - x).ravel()
    assert stats.kstest(noise, stats.norm(scale=mech.sigma).cdf).pvalue > ALPHA
    assert stats.kstest(noise, stats.norm(scale=1.1 * mech.sigma).cdf).pvalue < ALPHA


def test_noise_from_uniform_ks() -> None:
    mech = make_mechanism("gaussian", epsilon=1.0)
    noise = mech.noise_from_uniform(np.random.default_rng(3).random(N))
    assert stats.kstest(noise, stats.norm(scale=mech.sigma).cdf).pvalue > ALPHA


def test_log_prob_matches_scipy() -> None:
    mech = make_mechanism("gaussian", epsilon=1.0, dim=2, delta=1e-6)
    y = np.array([[0.0, 0.0], [1.5, -2.0], [10.0, 3.0]])
    x = np.array([0.25, 0.75])
    expected = stats.norm(x, mech.sigma).logpdf(y).sum(axis=1)
    np.testing.assert_allclose(mech.log_prob(x, y), expected, rtol=1e-12)


def test_analytic_truth_is_tight_and_not_violated() -> None:
    mech = make_mechanism("gaussian", epsilon=1.0, dim=4, delta=1e-5)
    truth = mech.truth()
    assert truth.true_delta == pytest.approx(1e-5, rel=1e-8)
    assert truth.true_epsilon == pytest.approx(1.0, rel=1e-8)
    assert not truth.violates(mech.claim)
    assert mech.warning is None
    assert any("pure ε is infinite" in note for note in truth.notes)


def test_classic_at_large_epsilon_is_violated_and_flagged() -> None:
    mech = make_mechanism("gaussian", epsilon=10.0, delta=1e-5, calibration="classic")
    truth = mech.truth()
    assert mech.warning is not None and "unproven" in mech.warning
    assert truth.true_delta > mech.delta
    assert truth.true_epsilon > mech.epsilon
    assert truth.violates(mech.claim)
    # The exact δ is that of the worst pair (opposite corners of the box).
    assert truth.true_delta == pytest.approx(gaussian_delta(10.0, mech.sigma, 1.0))


def test_classic_at_small_epsilon_is_fine() -> None:
    mech = make_mechanism("gaussian", epsilon=0.5, delta=1e-5, calibration="classic")
    assert mech.warning is None
    assert not mech.truth().violates(mech.claim)


def test_understated_sensitivity_is_caught() -> None:
    mech = make_mechanism("gaussian", epsilon=1.0, dim=4, sensitivity=1.0)  # true √4·1 = 2
    assert mech.truth().true_sensitivity == 2.0
    assert mech.truth().violates(mech.claim)


def test_pairwise_losses() -> None:
    mech = make_mechanism("gaussian", epsilon=1.0, dim=2)
    assert mech.privacy_loss([0, 0], [0, 0]) == 0.0
    assert mech.privacy_loss([0, 0], [0, 1]) == math.inf
    assert mech.delta_at(1.0, [0, 0], [1, 1]) == pytest.approx(1e-5, rel=1e-8)
    assert mech.delta_at(1.0, [0, 0], [0, 1]) < 1e-5
    curve = mech.privacy_profile([0.5, 1.0, 2.0], [0, 0], [1, 1])
    assert curve[1] == pytest.approx(1e-5, rel=1e-8) and curve[0] > curve[1] > curve[2]


def test_delta_by_monte_carlo_in_several_dimensions() -> None:
    """δ(ε) = E_{y~M(x)}[max(0, 1 − e^{ε − L(y)})], L the log-density ratio; 5 SE."""
    mech = make_mechanism("gaussian", epsilon=0.5, dim=3, delta=1e-2)
    x, xp = np.zeros(3), np.ones(3)
    y = mech.sample(x, 200_000, np.random.default_rng(5))
    loss = mech.log_prob(x, y) - mech.log_prob(xp, y)
    terms = np.maximum(0.0, 1.0 - np.exp(0.5 - loss))
    se = terms.std() / math.sqrt(len(terms))
    assert abs(terms.mean() - mech.delta_at(0.5, x, xp)) < 5 * se


@pytest.mark.parametrize(
    ("params", "argument"),
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": 1.0, "delta": 0.0}, "delta"),
        ({"epsilon": 1.0, "delta": 1.0}, "delta"),
        ({"epsilon": 1.0, "delta": "1.5"}, "delta"),
        ({"epsilon": 1.0, "dim": 0}, "dim"),
        ({"epsilon": 1.0, "sensitivity": -1.0}, "sensitivity"),
        ({"epsilon": 1.0, "calibration": "magic"}, "calibration"),
        ({"epsilon": 1.0, "sigma": 3.0}, "sigma"),
    ],
)
def test_bad_parameters(params: dict[str, object], argument: str) -> None:
    with pytest.raises(DPAuditError, match=argument):
        make_mechanism("gaussian", **params)


@pytest.mark.parametrize("x", [[math.nan], [math.inf], [0.1, 0.2], [2.0]])
def test_bad_inputs(x: list[float]) -> None:
    mech = make_mechanism("gaussian", epsilon=1.0)
    with pytest.raises(DPAuditError, match="x"):
        mech.sample(x, 10, np.random.default_rng(0))
