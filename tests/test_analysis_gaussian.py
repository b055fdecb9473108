"""Exact Gaussian privacy profile (Balle & Wang 2018) against numerical integration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpaudit.analysis.gaussian import (
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_delta,
    gaussian_epsilon_for_delta,
    gaussian_privacy_profile,
)
from dpaudit.errors import InvalidArgumentError


def _hockey_stick(epsilon: float, sigma: float, distance: float) -> float:
    """δ(ε) = ∫ max(0, p(y) − e^ε q(y)) dy for p = N(0, σ²), q = N(Δ, σ²), by quadrature."""
    p = stats.norm(0.0, sigma)
    q = stats.norm(distance, sigma)
    # p > e^ε q exactly left of the crossing point y*.
    y_star = distance / 2.0 - epsilon * sigma**2 / distance
    value, _ = integrate.quad(
        lambda y: p.pdf(y) - math.exp(epsilon) * q.pdf(y),
        -np.inf,
        y_star,
        epsabs=1e-15,
        epsrel=1e-10,
        limit=200,
    )
    return value


@pytest.mark.parametrize(
    ("epsilon", "sigma", "distance"),
    [(0.1, 1.0, 1.0), (1.0, 0.5, 1.0), (1.0, 3.0, 2.0), (3.0, 1.0, 1.0), (0.5, 10.0, 1.0)],
)
def test_delta_matches_numerical_integration(epsilon: float, sigma: float, distance: float) -> None:
    assert gaussian_delta(epsilon, sigma, distance) == pytest.approx(
        _hockey_stick(epsilon, sigma, distance), rel=1e-7, abs=1e-15
    )


def test_vectorised_profile_matches_scalar() -> None:
    eps = np.array([0.0, 0.1, 1.0, 5.0, 30.0])
    curve = gaussian_privacy_profile(eps, 0.7, 1.3)
    np.testing.assert_allclose(curve, [gaussian_delta(e, 0.7, 1.3) for e in eps], rtol=1e-13)
    with pytest.raises(InvalidArgumentError, match="epsilons"):
        gaussian_privacy_profile(np.array([-1.0]), 1.0, 1.0)


def test_delta_decreases_in_epsilon_and_sigma() -> None:
    eps = np.linspace(0, 5, 30)
    d = [gaussian_delta(e, 1.0, 1.0) for e in eps]
    assert all(a > b for a, b in itertools.pairwise(d))
    s = [gaussian_delta(1.0, t, 1.0) for t in (0.3, 0.6, 1.0, 2.0)]
    assert all(a > b for a, b in itertools.pairwise(s))


@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 4.0, 20.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_analytic_sigma_is_the_smallest_valid(epsilon: float, delta: float) -> None:
    sigma = analytic_gaussian_sigma(epsilon, delta, 2.0)
    assert gaussian_delta(epsilon, sigma, 2.0) <= delta
    assert gaussian_delta(epsilon, sigma, 2.0) == pytest.approx(delta, rel=1e-8)
    # A slightly smaller σ already violates: the calibration is tight.
    assert gaussian_delta(epsilon, sigma * (1 - 1e-6), 2.0) > delta


@pytest.mark.parametrize("epsilon", [0.05, 0.3, 0.9])
@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-9])
def test_classic_sigma_is_valid_for_small_epsilon(epsilon: float, delta: float) -> None:
    sigma = classic_gaussian_sigma(epsilon, delta, 1.0)
    assert sigma == pytest.approx(math.sqrt(2 * math.log(1.25 / delta)) / epsilon)
    assert gaussian_delta(epsilon, sigma, 1.0) <= delta
    assert analytic_gaussian_sigma(epsilon, delta, 1.0) <= sigma


def test_classic_sigma_fails_at_large_epsilon() -> None:
    # Dwork & Roth's Thm. A.1 needs ε < 1; at ε = 10 the formula is simply false.
    sigma = classic_gaussian_sigma(10.0, 1e-5, 1.0)
    assert gaussian_delta(10.0, sigma, 1.0) > 2e-5


@pytest.mark.parametrize("delta", [1e-2, 1e-5, 1e-9])
def test_epsilon_for_delta_inverts_delta(delta: float) -> None:
    eps = gaussian_epsilon_for_delta(delta, 0.8, 1.0)
    assert gaussian_delta(eps, 0.8, 1.0) == pytest.approx(delta, rel=1e-9)


def test_epsilon_for_delta_edge_cases() -> None:
    assert gaussian_epsilon_for_delta(0.0, 1.0, 1.0) == math.inf
    assert gaussian_epsilon_for_delta(1e-5, 1.0, 0.0) == 0.0
    assert gaussian_epsilon_for_delta(0.9, 100.0, 1.0) == 0.0


def test_bad_input() -> None:
    with pytest.raises(InvalidArgumentError, match="delta"):
        analytic_gaussian_sigma(1.0, 0.0, 1.0)
    with pytest.raises(InvalidArgumentError, match="epsilon"):
        analytic_gaussian_sigma(0.0, 1e-5, 1.0)
    with pytest.raises(InvalidArgumentError, match="sensitivity"):
        classic_gaussian_sigma(1.0, 1e-5, -1.0)
    with pytest.raises(InvalidArgumentError, match="epsilon"):
        gaussian_delta(-1.0, 1.0, 1.0)
