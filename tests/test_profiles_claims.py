"""Claims about whole families (profile, GDP, RDP, zCDP) against closed forms and known values."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.analysis.gaussian import analytic_gaussian_sigma, classic_gaussian_sigma
from dpaudit.analysis.privacy_conversions import (
    approx_dp_profile,
    binary_renyi,
    gaussian_tradeoff,
    gdp_profile,
    laplace_profile,
    laplace_tradeoff,
    profile_from_tradeoff,
    rdp_delta_cks,
    rdp_delta_mironov,
    zcdp_delta_bun_steinke,
    zcdp_delta_cks,
)
from dpaudit.claims import (
    ApproxDP,
    GaussianDP,
    PrivacyProfile,
    PureDP,
    RenyiDP,
    ZeroConcentratedDP,
)
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.gaussian import GaussianMechanism
from dpaudit.serialization import dumps

EPS = np.linspace(0.0, 8.0, 33)
#: Type-I errors from 1e-16 to 1 (log-spaced near 0, where the profile's sup sits at large ε).
ALPHAS = np.unique(np.concatenate([np.logspace(-16, 0, 200001), np.linspace(0, 1, 100001)]))


def test_classic_calibration_at_eps_10_delta_001_really_gives_delta_0041() -> None:
    # σ = √(2 ln 125)/10 ≈ 0.3108, μ = 1/σ ≈ 3.218: δ(10) = Φ(−1.499) − e^10 Φ(−4.717) ≈ 0.0406.
    sigma = classic_gaussian_sigma(10.0, 0.01, 1.0)
    assert sigma == pytest.approx(math.sqrt(2 * math.log(125.0)) / 10.0, rel=1e-15)
    mu = 1.0 / sigma
    by_hand = stats.norm.cdf(-10 / mu + mu / 2) - math.exp(10) * stats.norm.cdf(-10 / mu - mu / 2)
    got = float(GaussianDP.from_sigma(sigma).profile([10.0])[0])
    assert got == pytest.approx(by_hand, rel=1e-10)
    assert got == pytest.approx(0.0406, abs=5e-5)  # four times the claimed 0.01


def test_analytic_calibration_meets_delta_exactly() -> None:
    for eps, delta in [(10.0, 0.01), (1.0, 1e-5), (0.1, 1e-6), (4.0, 1e-9)]:
        claim = GaussianDP.from_approx(eps, delta)
        assert claim.mu == pytest.approx(1.0 / analytic_gaussian_sigma(eps, delta, 1.0))
        assert float(claim.profile([eps])[0]) == pytest.approx(delta, rel=1e-9)
        # A μ 0.1 % larger (less noise) breaks δ at ε: the calibration is the smallest σ.
        assert float(GaussianDP(claim.mu * 1.001).profile([eps])[0]) > delta


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
def test_gdp_profile_is_the_dual_of_its_tradeoff_curve(mu: float) -> None:
    # DRS Prop. 2.12: δ(ε) = sup_α 1 − T_μ(α) − e^ε α (a grid sup is a lower bound, tight here).
    dual = profile_from_tradeoff(EPS, gaussian_tradeoff(ALPHAS, mu), ALPHAS)
    exact = gdp_profile(EPS, mu)
    assert np.all(dual <= exact + 1e-12)
    np.testing.assert_allclose(dual, exact, atol=1e-7)


@pytest.mark.parametrize("mu", [0.5, 2.0])
def test_gaussian_tradeoff_is_the_neyman_pearson_test_of_two_normals(mu: float) -> None:
    t = np.linspace(-4, 6, 41)  # reject N(0,1) when y > t
    alpha, beta = stats.norm.sf(t), stats.norm.cdf(t - mu)
    np.testing.assert_allclose(gaussian_tradeoff(alpha, mu), beta, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("eps0", [0.5, 2.0, 5.0])
def test_laplace_tradeoff_and_profile_closed_forms(eps0: float) -> None:
    t = np.linspace(-6, eps0 + 6, 97)  # reject Lap(0, 1) when y > t; Lap(eps0, 1) is the other
    alpha, beta = stats.laplace.sf(t), stats.laplace.cdf(t, loc=eps0)
    np.testing.assert_allclose(laplace_tradeoff(alpha, eps0), beta, rtol=1e-9, atol=1e-15)
    dual = profile_from_tradeoff(EPS, laplace_tradeoff(ALPHAS, eps0), ALPHAS)
    np.testing.assert_allclose(dual, laplace_profile(EPS, eps0), atol=1e-7)
    assert np.all(laplace_profile(EPS[eps0 <= EPS], eps0) == 0.0)


def test_pure_and_approx_profiles_are_the_randomised_response_profile() -> None:
    eps, delta = 1.5, 0.02
    # Dominating pair: δ atom, then randomised response with p = e^ε/(1+e^ε) on the rest.
    p = math.exp(eps) / (1 + math.exp(eps))
    big_p = np.array([delta, (1 - delta) * p, (1 - delta) * (1 - p), 0.0])
    big_q = big_p[::-1]
    hockey = np.array([np.maximum(big_p - math.exp(e) * big_q, 0).sum() for e in EPS])
    np.testing.assert_allclose(ApproxDP(eps, delta).profile(EPS), hockey, atol=1e-15)
    np.testing.assert_allclose(PureDP(eps).profile(EPS), approx_dp_profile(EPS, eps), atol=0)
    assert np.all(PureDP(eps).profile(EPS[eps <= EPS]) == 0.0)
    assert float(PureDP(800.0).profile([0.0])[0]) == pytest.approx(1.0)  # no overflow


@pytest.mark.parametrize("rho", [0.05, 0.5, 2.0])
def test_zcdp_conversions_are_sound_and_ordered(rho: float) -> None:
    cks = zcdp_delta_cks(EPS, rho)
    bs = zcdp_delta_bun_steinke(EPS, rho)
    # The Gaussian with μ = √(2ρ) is exactly ρ-zCDP, so no sound conversion may go below it.
    gauss = gdp_profile(EPS, math.sqrt(2 * rho))
    assert np.all(cks >= gauss - 1e-15)
    assert np.all(cks <= bs + 1e-15)
    # Bun & Steinke's inverse: ε = ρ + 2√(ρ ln(1/δ)) gives back δ.
    d = 1e-6
    e = rho + 2 * math.sqrt(rho * math.log(1 / d))
    assert float(zcdp_delta_bun_steinke([e], rho)[0]) == pytest.approx(d, rel=1e-9)
    assert ZeroConcentratedDP(rho).epsilon_at(3.0) == pytest.approx(3 * rho)


def test_zcdp_cks_is_the_best_order_of_the_rdp_conversion() -> None:
    rho, eps = 0.5, np.array([1.0, 3.0, 6.0])
    orders = np.linspace(1.001, 60, 60000)
    grid = np.min([rdp_delta_cks(eps, a, rho * a) for a in orders], axis=0)
    np.testing.assert_allclose(zcdp_delta_cks(eps, rho), grid, rtol=1e-6)


def test_rdp_conversions() -> None:
    alpha, tau, delta = 8.0, 0.4, 1e-5
    eps = tau + math.log(1 / delta) / (alpha - 1)  # Mironov Prop. 3
    assert float(rdp_delta_mironov([eps], alpha, tau)[0]) == pytest.approx(delta, rel=1e-12)
    factor = (alpha - 1) ** (alpha - 1) / alpha**alpha  # CKS Prop. 12
    assert float(rdp_delta_cks([eps], alpha, tau)[0]) == pytest.approx(delta * factor, rel=1e-12)
    claim = RenyiDP((2.0, 8.0), (0.1, tau), conversion="mironov")
    assert float(claim.profile([eps])[0]) == pytest.approx(delta, rel=1e-12)
    assert claim.epsilon_at(1.5) == 0.1 and claim.epsilon_at(3.0) == tau
    assert math.isinf(claim.epsilon_at(9.0))
    # The Rényi curve of a Gaussian at many orders converts close to its zCDP conversion.
    rho = 0.5
    rdp = RenyiDP.from_function(lambda a: rho * a, np.geomspace(1.001, 200, 4000))
    np.testing.assert_allclose(rdp.profile(EPS), zcdp_delta_cks(EPS, rho), rtol=2e-3, atol=1e-9)


def test_binary_renyi_known_values() -> None:
    p, q = 0.7, 0.2
    for a in (1.5, 2.0, 10.0):
        direct = math.log(p**a * q ** (1 - a) + (1 - p) ** a * (1 - q) ** (1 - a)) / (a - 1)
        assert float(binary_renyi(a, p, q)) == pytest.approx(direct, rel=1e-12)
    assert float(binary_renyi(2.0, 0.3, 0.3)) == pytest.approx(0.0, abs=1e-15)
    assert math.isinf(float(binary_renyi(2.0, 0.3, 0.0)))
    assert float(binary_renyi(2.0, 0.0, 0.0)) == 0.0


def test_a_mechanism_accountant_is_a_profile_claim() -> None:
    mech = GaussianMechanism(epsilon=1.0, delta=1e-5)
    claim = PrivacyProfile(lambda e: mech.privacy_profile(e, 0.0, 1.0), "analytic Gaussian")
    np.testing.assert_allclose(claim.profile(EPS), GaussianDP.from_sigma(mech.sigma).profile(EPS))
    scalar = PrivacyProfile(lambda e: mech.delta_at(float(e), 0.0, 1.0), "one ε at a time")
    np.testing.assert_allclose(scalar.profile(EPS), claim.profile(EPS), rtol=1e-12)


def test_claims_serialise_and_compare() -> None:
    claims = [
        PureDP(1.0),
        ApproxDP(1.0, 1e-5),
        GaussianDP(1.0),
        RenyiDP((2.0, 4.0), (0.5, 1.0)),
        ZeroConcentratedDP(0.5, "bun-steinke"),
        PrivacyProfile(lambda e: np.zeros_like(e), "zero"),
    ]
    for claim in claims:
        data = json.loads(dumps(claim))
        assert data["kind"] == claim.kind
        assert claim.describe()
    assert GaussianDP(1.0) == GaussianDP(1.0)
    with pytest.raises(AttributeError):
        GaussianDP(1.0).mu = 2.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("make", "argument"),
    [
        (lambda: GaussianDP(0.0), "mu"),
        (lambda: GaussianDP(math.inf), "mu"),
        (lambda: ApproxDP(1.0, 1.5), "delta"),
        (lambda: RenyiDP((1.0,), (0.5,)), "orders"),
        (lambda: RenyiDP((3.0, 2.0), (0.5, 0.4)), "orders"),
        (lambda: RenyiDP((2.0,), (0.5,), conversion="tight"), "conversion"),
        (lambda: ZeroConcentratedDP(-1.0), "rho"),
        (lambda: PrivacyProfile(lambda e: 2.0 + 0 * e, "bad").profile([1.0]), "function"),
        (lambda: gdp_profile([-1.0], 1.0), "epsilons"),
        (lambda: rdp_delta_cks([1.0], 1.0, 0.5), "alpha"),
    ],
)
def test_bad_input_names_the_argument(make, argument: str) -> None:
    with pytest.raises(InvalidArgumentError, match=argument):
        make()
