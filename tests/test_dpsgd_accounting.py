"""The DP-SGD accountant: closed forms, monotonicity, agreement with Opacus, errors."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

from dpaudit.analysis.dpsgd_accounting import (
    DEFAULT_ORDERS,
    DPSGDEvent,
    rdp_to_epsilon,
    subsampled_gaussian_rdp,
)
from dpaudit.claims.curves import ApproxDP, RenyiDP
from dpaudit.errors import InvalidArgumentError

ORDERS = list(DEFAULT_ORDERS)


def test_default_orders_are_the_integers_2_to_256() -> None:
    assert tuple(range(2, 257)) == DEFAULT_ORDERS


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.7])
def test_full_batch_is_the_gaussian_mechanism(sigma: float) -> None:
    """q = 1: ε(α) = α/(2σ²) exactly (Mironov 2017, Prop. 7)."""
    out = subsampled_gaussian_rdp(1.0, sigma, ORDERS)
    np.testing.assert_array_equal(out, np.asarray(ORDERS) / (2 * sigma**2))


def test_binomial_sum_by_hand_at_order_2() -> None:
    """α = 2: A = (1−q)² + 2q(1−q) + q² e^{1/σ²} = 1 + q²(e^{1/σ²} − 1)."""
    q, sigma = 0.1, 0.8
    expected = math.log1p(q * q * math.expm1(1 / sigma**2))
    assert subsampled_gaussian_rdp(q, sigma, [2])[0] == pytest.approx(expected, rel=1e-12)


def test_monotone_in_rate_noise_and_steps() -> None:
    rates = [1e-3, 0.01, 0.1, 0.5, 1.0]
    curves = [subsampled_gaussian_rdp(q, 1.0, ORDERS) for q in rates]
    assert all(np.all(b >= a) for a, b in itertools.pairwise(curves))
    sigmas = [0.5, 0.8, 1.0, 2.0, 5.0]
    curves = [subsampled_gaussian_rdp(0.05, s, ORDERS) for s in sigmas]
    assert all(np.all(b <= a) for a, b in itertools.pairwise(curves))
    eps = [DPSGDEvent(1.0, 0.02, t).epsilon(1e-5) for t in (1, 10, 100, 1000)]
    assert eps == sorted(eps) and eps[0] < eps[-1]
    eps_q = [DPSGDEvent(1.0, q, 100).epsilon(1e-5) for q in (0.001, 0.01, 0.1)]
    assert eps_q == sorted(eps_q)


def test_rdp_is_non_decreasing_in_the_order() -> None:
    """D_α grows with α (van Erven & Harremoës 2014, Thm. 3)."""
    out = subsampled_gaussian_rdp(0.03, 0.9, ORDERS)
    assert np.all(np.diff(out) >= -1e-15)


def test_large_orders_and_small_noise_stay_finite() -> None:
    out = subsampled_gaussian_rdp(0.01, 0.3, ORDERS)
    assert np.all(np.isfinite(out)) and np.all(out > 0)


CASES = [(0.01, 1.1, 10000), (0.032, 1.0, 200), (0.5, 0.5, 10), (1e-4, 0.3, 100), (0.2, 4.0, 7)]


@pytest.mark.parametrize(("q", "sigma", "steps"), CASES)
def test_agrees_with_opacus_at_integer_orders(q: float, sigma: float, steps: int) -> None:
    """Opacus' compute_rdp and get_privacy_spent at the same orders, to 1e-9 relative."""
    pytest.importorskip("opacus")
    from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent

    event = DPSGDEvent(sigma, q, steps)
    theirs = np.asarray(compute_rdp(q=q, noise_multiplier=sigma, steps=steps, orders=ORDERS))
    np.testing.assert_allclose(event.rdp(), theirs, rtol=1e-9)
    with warnings.catch_warnings():  # Opacus warns when the best order is the smallest
        warnings.simplefilter("ignore", UserWarning)
        their_eps, their_order = get_privacy_spent(orders=ORDERS, rdp=theirs, delta=1e-5)
    assert event.epsilon(1e-5) == pytest.approx(float(their_eps), rel=1e-9)
    assert rdp_to_epsilon(event.rdp(), ORDERS, 1e-5)[1] == int(their_order)


def test_known_value() -> None:
    """q = 0.01, σ = 1.1, T = 10000, δ = 1e-5: ε = 5.6543 at integer orders 2..256 (α* = 5).

    Opacus' get_privacy_spent at the same orders reports 5.654308000149 (checked in
    test_agrees_with_opacus_at_integer_orders); with its fractional default orders it is a
    little lower.
    """
    eps, order = rdp_to_epsilon(DPSGDEvent(1.1, 0.01, 10000).rdp(), ORDERS, 1e-5)
    assert eps == pytest.approx(5.654308000149, rel=1e-9)
    assert order == 5


def test_claims() -> None:
    event = DPSGDEvent(1.0, 0.032, 200)
    approx = event.approx_claim(1e-5)
    assert isinstance(approx, ApproxDP)
    assert (approx.epsilon, approx.delta) == (event.epsilon(1e-5), 1e-5)
    renyi = event.renyi_claim()
    assert isinstance(renyi, RenyiDP)
    assert renyi.orders == tuple(float(a) for a in ORDERS)
    np.testing.assert_allclose(renyi.epsilons, event.rdp())
    # The RDP claim's implied δ at the reported ε is at most the δ asked for.
    assert float(renyi.profile([approx.epsilon])[0]) <= 1e-5 * (1 + 1e-9)


def test_gdp_mu_is_the_clt_formula() -> None:
    event = DPSGDEvent(1.1, 0.01, 10000)
    assert event.gdp_mu() == pytest.approx(0.01 * math.sqrt(10000 * math.expm1(1 / 1.21)))


def test_describe_and_immutability() -> None:
    event = DPSGDEvent(1.0, 0.01, 50)
    assert "50 steps" in event.describe() and "poisson" in event.describe()
    with pytest.raises(AttributeError):
        event.steps = 3  # type: ignore[misc]
    assert event == DPSGDEvent(1.0, 0.01, 50)


def test_shuffle_is_recorded_but_not_analysed() -> None:
    event = DPSGDEvent(1.0, 0.01, 50, sampling="shuffle")
    with pytest.raises(InvalidArgumentError, match=r"sampling.*only Poisson"):
        event.epsilon(1e-5)
    with pytest.raises(InvalidArgumentError, match="sampling"):
        event.gdp_mu()


@pytest.mark.parametrize(
    ("kwargs", "name", "allowed"),
    [
        ({"noise_multiplier": 0.0}, "noise_multiplier", "> 0"),
        ({"noise_multiplier": -1.0}, "noise_multiplier", "> 0"),
        ({"sampling_rate": 0.0}, "sampling_rate", r"\(0, 1\]"),
        ({"sampling_rate": 1.5}, "sampling_rate", r"\(0, 1\]"),
        ({"steps": 0}, "steps", r"\[1, "),
        ({"sampling": "uniform"}, "sampling", "poisson"),
    ],
)
def test_event_errors_name_the_argument(kwargs: dict, name: str, allowed: str) -> None:
    args = {"noise_multiplier": 1.0, "sampling_rate": 0.01, "steps": 10, **kwargs}
    with pytest.raises(InvalidArgumentError, match=allowed) as info:
        DPSGDEvent(**args)
    assert info.value.argument == name


@pytest.mark.parametrize("orders", [[1], [2, 2.5], [], [0, 3], [True]])
def test_orders_must_be_integers_at_least_2(orders: list) -> None:
    with pytest.raises(InvalidArgumentError, match="integer Rényi orders >= 2"):
        subsampled_gaussian_rdp(0.1, 1.0, orders)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1])
def test_delta_must_be_in_the_open_unit_interval(delta: float) -> None:
    with pytest.raises(InvalidArgumentError, match=r"delta.*open interval"):
        DPSGDEvent(1.0, 0.01, 10).epsilon(delta)
