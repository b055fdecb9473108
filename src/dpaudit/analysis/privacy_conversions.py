"""Exact privacy profiles, trade-off curves and the conversions between privacy definitions.

A *privacy profile* ``δ(ε)`` (Balle, Barthe & Gaboardi, NeurIPS 2018) is, for
every ``ε ≥ 0``, the smallest ``δ`` for which a mechanism is (ε, δ)-DP; it is
the hockey-stick divergence ``sup_S Pr[M(x) ∈ S] − e^ε Pr[M(x') ∈ S]``
maximised over neighbours.  A *trade-off curve* ``f(α)`` (Dong, Roth & Su,
JRSS-B 2022, Def. 2.1) is the smallest type-II error of any test of ``M(x)``
against ``M(x')`` at type-I error ``α``.  The two are convex duals of each other::

    δ(ε) = sup_α [1 − f(α) − e^ε·α]          (Dong, Roth & Su 2022, Prop. 2.12)

This module holds the closed forms every other module reuses:

* Gaussian: ``f = T_μ(α) = Φ(Φ⁻¹(1 − α) − μ)`` (DRS Def. 2.7) and
  ``δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)`` (Balle & Wang, ICML 2018, Thm. 8;
  DRS Cor. 2.13) — the latter evaluated by :mod:`dpaudit.analysis.gaussian`,
  with ``σ = 1`` and distance ``μ``;
* Laplace with ``ε₀ = Δ/b``: ``f(α) = 1 − e^{ε₀}α`` for ``α < e^{−ε₀}/2``,
  ``e^{−ε₀}/(4α)`` up to ``α = 1/2``, ``e^{−ε₀}(1 − α)`` beyond (DRS Appendix,
  Laplace example), and ``δ(ε) = 1 − e^{(ε − ε₀)/2}`` for ``ε < ε₀``, 0 beyond;
* pure ε-DP and (ε, δ)-DP: the profile of their dominating pair (randomised
  response with a δ atom; Kairouz, Oh & Viswanath, ICML 2015, Thm. 2.1):
  ``δ(ε') = δ + (1 − δ)·(e^ε − e^{ε'})₊/(1 + e^ε)``;
* Rényi DP ``(α, τ)`` → (ε, δ): Mironov (CSF 2017, Prop. 3)
  ``δ = e^{(α−1)(τ − ε)}``, and the tighter Canonne, Kamath & Steinke (NeurIPS
  2020, Prop. 12) ``δ = e^{(α−1)(τ − ε)}·(α − 1)^{α−1}/α^α``;
* ρ-zCDP → (ε, δ): Bun & Steinke (TCC 2016, Prop. 1.3) ``ε = ρ + 2√(ρ ln 1/δ)``,
  i.e. ``δ = e^{−(ε − ρ)²/(4ρ)}`` for ``ε ≥ ρ``; and CKS (Cor. 13), the CKS RDP
  bound at ``τ = ρα`` minimised over ``α > 1`` (the exponent is convex in α, so
  the minimiser is the root of its derivative, found by Brent's method).

Every conversion is *sound*: it returns a δ the stronger guarantee really
implies (never smaller), so a certified violation of the converted profile is
a violation of the original claim.  All functions are vectorised over ε.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpaudit.analysis.gaussian import gaussian_privacy_profile
from dpaudit.errors import InvalidArgumentError
from dpaudit.validation import check_delta, check_epsilon, check_positive


def check_epsilon_grid(epsilons: Any) -> np.ndarray:
    """``epsilons`` as a float array, or an error unless all are finite and ``>= 0``."""
    eps = np.asarray(epsilons, dtype=np.float64)
    if np.any(~np.isfinite(eps)) or np.any(eps < 0):
        raise InvalidArgumentError("epsilons", "<array>", "finite numbers >= 0")
    return eps


def _alphas(alpha: Any) -> np.ndarray:
    a = np.asarray(alpha, dtype=np.float64)
    if np.any(~(a >= 0)) or np.any(a > 1):
        raise InvalidArgumentError("alpha", "<array>", "type-I errors in [0, 1]")
    return a


# ------------------------------------------------------------------ Gaussian
def gdp_profile(epsilons: Any, mu: float) -> np.ndarray:
    """Exact ``δ(ε)`` of μ-GDP: ``Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)`` (DRS 2022, Cor. 2.13).

    The same function as two Gaussians of unit variance whose means are ``μ``
    apart (Balle & Wang 2018, Thm. 8), so it is computed there.
    """
    check_positive("mu", mu)
    return gaussian_privacy_profile(check_epsilon_grid(epsilons), 1.0, float(mu))


def gaussian_tradeoff(alpha: Any, mu: float) -> np.ndarray:
    """``T_μ(α) = Φ(Φ⁻¹(1 − α) − μ)``: the trade-off curve of μ-GDP (DRS 2022, Def. 2.7)."""
    check_positive("mu", mu)
    from scipy import special  # lazy: adapters read claims at `dpaudit --help` time

    return special.ndtr(special.ndtri(1.0 - _alphas(alpha)) - mu)


# ------------------------------------------------------------------ Laplace
def laplace_tradeoff(alpha: Any, epsilon: float) -> np.ndarray:
    """Trade-off curve of ``Lap(0, b)`` against ``Lap(Δ, b)`` with ``ε₀ = Δ/b``.

    ``1 − e^{ε₀}α`` for ``α < e^{−ε₀}/2``; ``e^{−ε₀}/(4α)`` for
    ``e^{−ε₀}/2 ≤ α ≤ 1/2``; ``e^{−ε₀}(1 − α)`` for ``α > 1/2`` (the type-II
    error of the Neyman–Pearson test "output above t", one piece per region
    of t: beyond Δ, between the centres, below 0).
    """
    eps0 = check_epsilon(epsilon)
    a = _alphas(alpha)
    low = a < 0.5 * math.exp(-eps0)
    with np.errstate(divide="ignore"):
        mid = math.exp(-eps0) / (4.0 * a)
    out = np.where(
        low, 1.0 - math.exp(eps0) * a, np.where(a <= 0.5, mid, math.exp(-eps0) * (1 - a))
    )
    return np.clip(out, 0.0, 1.0)


def laplace_profile(epsilons: Any, epsilon: float) -> np.ndarray:
    """Exact ``δ(ε)`` of the Laplace pair with ``ε₀ = Δ/b``: ``1 − e^{(ε − ε₀)/2}``, 0 for ε ≥ ε₀.

    The dual of :func:`laplace_tradeoff`: the supremum of ``1 − f(α) − e^ε α``
    is attained at ``α = e^{−(ε₀ + ε)/2}/2``, inside the middle piece exactly
    when ``ε ≤ ε₀``.
    """
    eps0 = check_epsilon(epsilon)
    eps = check_epsilon_grid(epsilons)
    return np.where(eps < eps0, -np.expm1((eps - eps0) / 2.0), 0.0)


def profile_from_tradeoff(epsilons: Any, tradeoff: Any, alphas: Any) -> np.ndarray:
    """``sup_α [1 − f(α) − e^ε α]`` over the given type-I errors (DRS 2022, Prop. 2.12).

    ``tradeoff`` is ``f`` evaluated at ``alphas``.  A supremum over a finite
    grid is a lower bound on the true profile (tight as the grid fills in).
    """
    eps = check_epsilon_grid(epsilons)
    a = _alphas(alphas)
    f = np.asarray(tradeoff, dtype=np.float64)
    values = 1.0 - f[None, :] - np.exp(eps)[:, None] * a[None, :]
    return np.maximum(values.max(axis=1), 0.0)


# ------------------------------------------------------------ pure / approx
def approx_dp_profile(epsilons: Any, epsilon: float, delta: float = 0.0) -> np.ndarray:
    """Profile implied by (ε, δ)-DP: ``δ + (1 − δ)(e^ε − e^{ε'})₊/(1 + e^ε)`` at each ε'.

    The hockey-stick divergence of the dominating pair of (ε, δ)-DP (a δ atom
    plus randomised response; Kairouz, Oh & Viswanath, ICML 2015, Thm. 2.1):
    no (ε, δ)-DP mechanism exceeds it, and that pair attains it.  ``δ = 0``
    gives pure ε-DP.
    """
    eps0 = check_epsilon(epsilon)
    d = check_delta(delta)
    eps = check_epsilon_grid(epsilons)
    # (e^ε − e^ε')/(1 + e^ε) written with exponents ≤ 0 so that large ε cannot overflow.
    gap = np.where(eps < eps0, (1.0 - np.exp(eps - eps0)) / (1.0 + math.exp(-eps0)), 0.0)
    return d + (1.0 - d) * gap


# -------------------------------------------------------------- Rényi, zCDP
def _check_order(alpha: float) -> float:
    a = float(alpha)
    if not (math.isfinite(a) and a > 1.0):
        raise InvalidArgumentError("alpha", alpha, "a Rényi order > 1")
    return a


def rdp_delta_mironov(epsilons: Any, alpha: float, tau: float) -> np.ndarray:
    """``δ(ε) = min(1, e^{(α−1)(τ − ε)})`` from (α, τ)-RDP (Mironov, CSF 2017, Prop. 3)."""
    a = _check_order(alpha)
    check_epsilon(tau, "tau")
    eps = check_epsilon_grid(epsilons)
    return np.exp(np.minimum((a - 1.0) * (tau - eps), 0.0))


def rdp_delta_cks(epsilons: Any, alpha: float, tau: float) -> np.ndarray:
    """``δ(ε) = min(1, e^{(α−1)(τ − ε)}·(α − 1)^{α−1}/α^α)`` from (α, τ)-RDP.

    Canonne, Kamath & Steinke (NeurIPS 2020, Prop. 12); always at most
    Mironov's bound, since ``(α − 1)^{α−1}/α^α = (1 − 1/α)^{α−1}/α < 1``.
    """
    a = _check_order(alpha)
    check_epsilon(tau, "tau")
    eps = check_epsilon_grid(epsilons)
    log_delta = (a - 1.0) * (tau - eps) + (a - 1.0) * math.log(a - 1.0) - a * math.log(a)
    return np.exp(np.minimum(log_delta, 0.0))


def zcdp_delta_bun_steinke(epsilons: Any, rho: float) -> np.ndarray:
    """``δ(ε) = e^{−(ε − ρ)²/(4ρ)}`` for ``ε ≥ ρ``, else 1 (Bun & Steinke, TCC 2016, Prop. 1.3).

    The inverse of ``ε = ρ + 2√(ρ ln(1/δ))``.
    """
    r = check_epsilon(rho, "rho")
    eps = check_epsilon_grid(epsilons)
    if r == 0.0:
        return np.zeros_like(eps)
    return np.where(eps >= r, np.exp(-((eps - r) ** 2) / (4.0 * r)), 1.0)


def _zcdp_cks_one(eps: float, rho: float) -> float:
    # log δ(α) = (α−1)(αρ − ε) + (α−1)ln(α−1) − α ln α is convex in α > 1 (second
    # derivative 2ρ + 1/(α−1) − 1/α > 0); its derivative 2αρ − ρ − ε + ln(1 − 1/α)
    # is −∞ at α → 1 and positive at the bracket's top, so Brent finds the minimiser.
    def slope(a: float) -> float:
        return 2.0 * a * rho - rho - eps + math.log1p(-1.0 / a)

    top = (eps + rho + 1.0) / (2.0 * rho) + 1.0
    bottom = 1.0 + 1e-12
    from scipy import optimize  # lazy: adapters read claims at `dpaudit --help` time

    a = top if slope(bottom) >= 0 else optimize.brentq(slope, bottom, top, xtol=1e-12)
    log_delta = (a - 1.0) * (a * rho - eps) + (a - 1.0) * math.log(a - 1.0) - a * math.log(a)
    return math.exp(min(log_delta, 0.0))


def zcdp_delta_cks(epsilons: Any, rho: float) -> np.ndarray:
    """``δ(ε)`` implied by ρ-zCDP: CKS (NeurIPS 2020, Cor. 13), minimised over the order α.

    Any α > 1 gives a valid δ, so even an imprecise minimiser stays sound.
    """
    r = check_epsilon(rho, "rho")
    eps = check_epsilon_grid(epsilons)
    if r == 0.0:
        return np.zeros_like(eps)
    flat = [_zcdp_cks_one(float(e), r) for e in eps.ravel()]
    return np.asarray(flat, dtype=np.float64).reshape(eps.shape)


def binary_renyi(alpha: float, p: Any, q: Any) -> np.ndarray:
    """Rényi divergence of order α between ``Bernoulli(p)`` and ``Bernoulli(q)``.

    ``ln(p^α q^{1−α} + (1−p)^α (1−q)^{1−α})/(α − 1)``, computed in logs.  By
    data processing it lower-bounds ``D_α(M(x) ‖ M(x'))`` for any set S with
    ``p = Pr[M(x) ∈ S]``, ``q = Pr[M(x') ∈ S]`` (Mironov 2017, Prop. 9's proof
    idea; van Erven & Harremoës 2014, Thm. 9).  ``inf`` when ``q ∈ {0, 1}`` and
    ``p ≠ q`` with α > 1.
    """
    a = _check_order(alpha)
    p_arr, q_arr = np.broadcast_arrays(np.asarray(p, float), np.asarray(q, float))
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = a * np.log(p_arr) + (1 - a) * np.log(q_arr)
        t2 = a * np.log1p(-p_arr) + (1 - a) * np.log1p(-q_arr)
        # 0·log 0 = 0: an empty side contributes nothing.
        t1 = np.where(p_arr == 0, -np.inf, t1)
        t2 = np.where(p_arr == 1, -np.inf, t2)
        out = np.logaddexp(t1, t2) / (a - 1.0)
    return np.where(np.isnan(out), np.inf, np.maximum(out, 0.0))
