"""Exact (ε, δ) privacy of additive Gaussian noise.

For ``M(x) = x + N(0, σ² I)`` and two inputs at L2 distance ``Δ``, the privacy
loss ``ln p(y|x)/p(y|x')`` is itself Gaussian, ``N(η, 2η)`` with
``η = Δ²/(2σ²)``.  Its exact privacy profile (Balle & Wang, ICML 2018,
Theorem 8) is::

    δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε · Φ(−Δ/(2σ) − εσ/Δ)

the smallest δ for which the pair satisfies (ε, δ)-DP; it is strictly
decreasing in ε and in σ.  The *pure* privacy loss is unbounded (the ratio of two
Gaussian densities with different means has no supremum), so the Gaussian
mechanism is never ε-DP for any finite ε.

Calibrations
------------
* classic (Dwork & Roth 2014, Theorem A.1): ``σ = Δ₂ · sqrt(2 ln(1.25/δ)) / ε``,
  proven only for ``ε < 1``;
* analytic (Balle & Wang 2018, Algorithm 1): the smallest ``σ`` with
  ``δ(ε) ≤ δ``, found here by bracketing root search on the exact profile.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.errors import InvalidArgumentError
from dpaudit.validation import check_delta, check_epsilon, check_positive, check_real


def gaussian_delta(epsilon: float, sigma: float, distance: float) -> float:
    """Exact δ(ε) of two Gaussians ``N(·, σ²I)`` whose means are ``distance`` apart in L2.

    Balle & Wang (ICML 2018), Theorem 8.  Evaluated with log-CDFs so that the
    ``e^ε`` factor cannot overflow.
    """
    from scipy import special  # lazy: keeps `import dpaudit` light

    eps = check_real("epsilon", epsilon)
    if eps < 0:
        raise InvalidArgumentError("epsilon", epsilon, "a number >= 0")
    check_positive("sigma", sigma)
    if distance == 0.0:
        return 0.0
    a = distance / (2.0 * sigma)
    b = eps * sigma / distance
    first = special.ndtr(a - b)
    second = math.exp(eps + special.log_ndtr(-a - b))
    return float(max(0.0, first - second))


def gaussian_privacy_profile(epsilons: np.ndarray, sigma: float, distance: float) -> np.ndarray:
    """The exact (ε, δ) curve: ``δ(ε)`` of :func:`gaussian_delta` for each ``ε ≥ 0``, vectorised."""
    from scipy import special  # lazy: keeps `import dpaudit` light

    eps = np.asarray(epsilons, dtype=np.float64)
    if np.any(~np.isfinite(eps)) or np.any(eps < 0):
        raise InvalidArgumentError("epsilons", "<array>", "finite numbers >= 0")
    check_positive("sigma", sigma)
    if distance == 0.0:
        return np.zeros_like(eps)
    a = distance / (2.0 * sigma)
    b = eps * sigma / distance
    delta = special.ndtr(a - b) - np.exp(eps + special.log_ndtr(-a - b))
    return np.maximum(delta, 0.0)


def gaussian_epsilon_for_delta(delta: float, sigma: float, distance: float) -> float:
    """The smallest ε ≥ 0 with ``δ(ε) ≤ delta``: the exact ε of the pair at that δ.

    Returns ``inf`` for ``delta = 0`` (no finite pure ε) unless the inputs coincide.
    """
    from scipy import optimize  # lazy: keeps `import dpaudit` light

    check_delta(delta)
    if distance == 0.0:
        return 0.0
    if delta == 0.0:
        return math.inf
    if gaussian_delta(0.0, sigma, distance) <= delta:
        return 0.0
    hi = 1.0
    while gaussian_delta(hi, sigma, distance) > delta:
        hi *= 2.0
    return float(
        optimize.brentq(
            lambda e: gaussian_delta(e, sigma, distance) - delta,
            0.0,
            hi,
            xtol=1e-14,
            rtol=4 * np.finfo(float).eps,
        )
    )


def classic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """``σ = Δ₂ · sqrt(2 ln(1.25/δ)) / ε`` (Dwork & Roth 2014, Theorem A.1; needs ε < 1)."""
    check_epsilon(epsilon)
    check_delta(delta)
    if delta == 0.0:
        raise InvalidArgumentError("delta", delta, "a number in (0, 1) for Gaussian noise")
    check_positive("sensitivity", sensitivity)
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """The smallest σ with exact ``δ(ε) ≤ δ`` (Balle & Wang 2018, Algorithm 1 / Theorem 8).

    Solves ``δ(ε; σ) = δ`` on ``log σ`` with Brent's method; δ is strictly
    decreasing in σ, so the root is unique.
    """
    from scipy import optimize  # lazy: keeps `import dpaudit` light

    check_epsilon(epsilon)
    check_delta(delta)
    if delta == 0.0:
        raise InvalidArgumentError("delta", delta, "a number in (0, 1) for Gaussian noise")
    check_positive("sensitivity", sensitivity)

    # Scale-free: δ depends on σ/Δ only.
    def excess(log_s: float) -> float:
        return gaussian_delta(epsilon, math.exp(log_s), 1.0) - delta

    lo, hi = -1.0, 1.0
    while excess(lo) < 0:
        lo -= 2.0
    while excess(hi) > 0:
        hi += 2.0
    log_s = optimize.brentq(excess, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    s = math.exp(log_s)
    # Step up to the first σ that really satisfies δ(ε; σ) ≤ δ in floating point.
    while gaussian_delta(epsilon, s, 1.0) > delta:
        s = math.nextafter(s, math.inf)
    return sensitivity * s


def gaussian_log_density(center: np.ndarray, outputs: np.ndarray, sigma: float) -> np.ndarray:
    """Sum over coordinates of the ``N(center, σ²)`` log-density of each output row."""
    y = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)
    c = np.asarray(center, dtype=np.float64).reshape(1, -1)
    d = y.shape[1]
    sq = ((y - c) ** 2).sum(axis=1)
    return -sq / (2.0 * sigma * sigma) - d * (math.log(sigma) + 0.5 * math.log(2.0 * math.pi))
