"""The one-run test under f-DP: which trade-off curves a count of correct guesses refutes.

Mahloujifar, Melis & Chaudhuri ("Auditing f-Differential Privacy in One Run",
arXiv:2410.22235, 2024) bound the guessing game of the one-run audit
(:mod:`dpaudit.analysis.one_run`: ``m`` canaries, each included with probability 1/2, ``g``
guesses, ``v`` of them correct) by the mechanism's whole trade-off curve ``f`` instead of one
(ε, δ) point.  Their bound is a recursion on the *inverse blow-up*
``B⁻¹(y) = inf {x : 1 − f(x) ≥ y}`` — the least probability, under one input, of an event
that has probability ``y`` under its neighbour.  Starting from the mass ``α·v/m`` on correct
and ``α·(g − v)/m`` on wrong guesses, it walks down the counts ``i = v − 1, …, 0``::

    h_i = max(h_{i+1}, B⁻¹(r_{i+1})),    r_i = r_{i+1} + i/(g − i) · (h_i − h_{i+1}),

and an f-DP mechanism could make ``v`` or more correct guesses with probability ``α`` only
if ``r_0 + h_0 ≤ g/m``.  When the sum exceeds ``g/m`` the curve ``f`` is refuted at level
``α``: no f-DP trainer gives that many correct guesses that often.  Like the (ε, δ) bound it
holds for any guesses made from the released model, and needs only the inclusion bits drawn
independently and uniformly, which the auditor does itself.

Two consequences the callers rely on (and ``tests/test_one_run_fdp.py`` checks):

* the test is *monotone in the curve*: a weaker guarantee (a smaller ``f``, so a smaller
  ``B⁻¹``) makes every ``h_i`` and ``r_i`` smaller, so whatever refutes ``f`` refutes every
  stronger curve too.  The largest refuted μ of the Gaussian curves ``G_μ`` is therefore a
  lower bound on the mechanism's μ at confidence ``1 − α``: :func:`gdp_lower_bound`;
* for the pure ε-DP curve it never refutes where randomised response — which is ε-DP and
  meets the (ε, 0) bound with equality — makes ``v`` correct guesses with probability above
  ``α``, i.e. it is never sharper than the exact binomial tail where that tail is exact.

Its gain is for curves that are not one (ε, δ) point: a μ-GDP claim is refuted as a curve
where reading it at one δ and bounding ε would not (measured in
``benchmarks/one_run_fdp.py``).  Curves are given *vectorised*: ``inverse_blowup(y)`` takes
an array of shape ``(K,)``, one value per curve of a batch, so one pass tests ``K`` curves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dpaudit.analysis.privacy_conversions import gdp_profile
from dpaudit.errors import InvalidArgumentError

#: μ above which :func:`gdp_lower_bound` stops (G_μ at μ = 40 is 1 − 1e-300 away from 0).
MU_CAP = 40.0
#: Points of each of the two grid passes of :func:`gdp_lower_bound` (final step ≈ 1.5e-4).
GRID_POINTS = 257
#: ε grid of the (ε, δ(ε)) lines whose envelope stands for a curve claim's trade-off.
ENVELOPE_EPSILONS = np.concatenate([np.linspace(0.0, 4.0, 161), np.linspace(4.05, 40.0, 720)])

InverseBlowup = Callable[[np.ndarray], np.ndarray]


def _check(m: int, g: int, v: int, alpha: float) -> None:
    for name, value in (("canaries", m), ("guesses", g), ("correct", v)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise InvalidArgumentError(name, value, "an integer")
    if not 0 <= v <= g <= m or m < 1:
        raise InvalidArgumentError("counts", (m, g, v), "0 ≤ correct ≤ guesses ≤ canaries, ≥ 1")
    if not 0.0 < alpha < 1.0:
        raise InvalidArgumentError("alpha", alpha, "a probability in (0, 1)")


def refutes(inverse_blowup: InverseBlowup, m: int, g: int, v: int, alpha: float) -> np.ndarray:
    """Whether ``v`` correct of ``g`` guesses on ``m`` canaries refute each curve at ``alpha``.

    ``inverse_blowup`` maps an array of probabilities (one per curve) to the curves'
    ``B⁻¹`` at them; the answer has one boolean per curve (module docstring).
    """
    _check(m, g, v, alpha)
    probe = np.asarray(inverse_blowup(np.zeros(1)), dtype=np.float64)
    size = probe.size
    correct = np.full(size, alpha * v / m)
    wrong = np.full(size, alpha * (g - v) / m)
    for i in range(v - 1, -1, -1):
        below = np.asarray(inverse_blowup(np.clip(correct, 0.0, 1.0)), dtype=np.float64)
        grown = np.maximum(wrong, below)
        correct = correct + (i / (g - i)) * (grown - wrong)
        wrong = grown
    return correct + wrong > g / m


def gaussian_inverse_blowup(mus: Any) -> InverseBlowup:
    """``B⁻¹`` of the Gaussian curves ``G_μ`` (Dong, Roth & Su 2022): ``Φ(Φ⁻¹(y) − μ)``."""
    from scipy.special import ndtr, ndtri

    mu = np.asarray(mus, dtype=np.float64).reshape(-1)
    if np.any(~np.isfinite(mu)) or np.any(mu < 0):
        raise InvalidArgumentError("mu", "<array>", "finite numbers >= 0")

    def inverse(y: np.ndarray) -> np.ndarray:
        return ndtr(ndtri(np.broadcast_to(y, mu.shape)) - mu)

    return inverse


def approx_inverse_blowup(epsilons: Any, delta: float = 0.0) -> InverseBlowup:
    """``B⁻¹`` of the (ε, δ) curves, one per ε: ``max(0, e^{−ε}(y − δ), 1 − δ − e^ε(1 − y))``."""
    eps = np.asarray(epsilons, dtype=np.float64).reshape(-1)
    if np.any(~np.isfinite(eps)) or np.any(eps < 0) or not 0.0 <= delta <= 1.0:
        raise InvalidArgumentError("epsilon, delta", (epsilons, delta), "ε ≥ 0 finite, δ in [0, 1]")
    up, down = np.exp(eps), np.exp(-eps)

    def inverse(y: np.ndarray) -> np.ndarray:
        y = np.broadcast_to(y, eps.shape)
        return np.maximum(0.0, np.maximum(down * (y - delta), 1.0 - delta - up * (1.0 - y)))

    return inverse


def profile_inverse_blowup(claim: Any, epsilons: np.ndarray = ENVELOPE_EPSILONS) -> InverseBlowup:
    """``B⁻¹`` of the curve a claim's privacy profile implies, for one claim (a batch of one).

    A claim with profile ``δ(ε)`` is (ε, δ(ε))-DP at every ε, hence f-DP for the pointwise
    largest of those (ε, δ(ε)) curves; its ``B⁻¹`` is the largest of theirs.  Only the ε of
    ``epsilons`` are used, so the curve is a little weaker than the claim (the test stays
    valid, and loses at most the grid's resolution).
    """
    deltas = np.asarray(claim.profile(epsilons), dtype=np.float64)
    keep = deltas < 1.0
    eps, dlt = epsilons[keep], deltas[keep]
    if eps.size == 0:
        return lambda y: np.zeros(np.shape(y))
    up, down = np.exp(eps), np.exp(-eps)

    def inverse(y: np.ndarray) -> np.ndarray:
        col = np.asarray(y, dtype=np.float64).reshape(-1, 1)
        lines = np.maximum(down * (col - dlt), 1.0 - dlt - up * (1.0 - col))
        return np.maximum(0.0, lines.max(axis=1))

    return inverse


def is_gaussian_claim(claim: Any) -> bool:
    """Whether ``claim`` is μ-GDP: a number ``mu`` and a ``tradeoff`` curve."""
    mu = getattr(claim, "mu", None)
    return isinstance(mu, int | float) and callable(getattr(claim, "tradeoff", None))


def claim_inverse_blowup(claim: Any) -> InverseBlowup:
    """A claim's ``B⁻¹``: exact for μ-GDP (:func:`is_gaussian_claim`), else its profile's."""
    if is_gaussian_claim(claim):
        return gaussian_inverse_blowup([float(claim.mu)])
    if not callable(getattr(claim, "profile", None)):
        raise InvalidArgumentError("claim", claim, "a claim with a privacy profile δ(ε)")
    return profile_inverse_blowup(claim)


def gdp_lower_bound(m: int, g: int, v: int, alpha: float) -> float:
    """The largest μ whose curve ``G_μ`` the guesses refute at ``alpha`` (0 when none).

    Two passes of :data:`GRID_POINTS` curves each: the coarse one over ``[0, MU_CAP]``, the
    fine one between the last refuted coarse point and the next.  The answer is a grid point
    that is refuted, so by monotonicity (module docstring) every smaller μ is refuted too;
    it lies below the exact largest refuted μ by less than one fine step.
    """
    _check(m, g, v, alpha)
    lo, hi = 0.0, MU_CAP
    best = 0.0
    for _ in range(2):
        grid = np.linspace(lo, hi, GRID_POINTS)
        hit = refutes(gaussian_inverse_blowup(grid), m, g, v, alpha)
        if not hit[0]:
            return best
        last = int(np.argmin(hit)) - 1 if not hit.all() else GRID_POINTS - 1
        best = float(grid[last])
        if last == GRID_POINTS - 1:
            return best
        lo, hi = grid[last], grid[last + 1]
    return best


def gdp_ceiling(m: int, g: int, alpha: float) -> float:
    """The largest μ ``g`` guesses can certify: all of them correct."""
    return gdp_lower_bound(m, g, g, alpha)


def epsilon_at_delta(mu: float, delta: float) -> float:
    """The smallest ε with δ_{G_μ}(ε) ≤ δ (to 1e-9): μ-GDP read at one δ, for display."""
    if mu <= 0:
        return 0.0
    lo, hi = 0.0, 200.0
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if float(gdp_profile(np.array([mid]), mu)[0]) > delta else (lo, mid)
    return hi


__all__ = [
    "ENVELOPE_EPSILONS",
    "GRID_POINTS",
    "MU_CAP",
    "approx_inverse_blowup",
    "claim_inverse_blowup",
    "epsilon_at_delta",
    "gaussian_inverse_blowup",
    "gdp_ceiling",
    "gdp_lower_bound",
    "is_gaussian_claim",
    "profile_inverse_blowup",
    "refutes",
]
