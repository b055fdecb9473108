"""From jointly certified probability bounds to bounds on every privacy parameter at once.

The certification (:func:`dpaudit.auditors.core.certify.certify`) gives, for each
of the ``K`` proposed sets, ``p1_lower ≤ Pr[M(a) ∈ S]`` and
``p2_upper ≥ Pr[M(b) ∈ S]``, all ``2K`` bounds holding together with
probability ``≥ 1 − α``.  On that event every quantity below is a valid lower
bound *simultaneously*, for every ε of the grid, every Rényi order and μ,
because each is a fixed, monotone function of those bounds — no further
Bonferroni split is needed for the grid (the split pays for the sets, which
are the only random statements):

* ``δ_lcb(ε) = max_S p1_lower − e^ε·p2_upper``: (ε, δ)-DP implies
  ``p1 ≤ e^ε p2 + δ`` for every set (Dwork & Roth 2014, Def. 2.4), so
  ``δ(ε) ≥ p1 − e^ε p2 ≥ δ_lcb(ε)``;
* ``μ_lcb = max_S Φ⁻¹(p1_lower) − Φ⁻¹(p2_upper)``: for the test rejecting
  ``b`` on ``S``, FPR = p2 and FNR = 1 − p1, and μ-GDP requires
  ``FNR ≥ Φ(Φ⁻¹(1 − FPR) − μ)``, i.e. ``μ ≥ Φ⁻¹(1 − FPR) − Φ⁻¹(FNR)``, which
  only falls when FPR or FNR grow (Nasr et al., USENIX Security 2023, §3);
* ``ε_lcb(α) = max_S D_α(Ber(p1_lower) ‖ Ber(p2_upper))`` for
  ``p1_lower > p2_upper``: Rényi divergence shrinks under post-processing
  (the indicator of S), and the binary divergence increases in p1 above p2 and
  decreases in p2 below p1 (it is convex in each argument with its minimum 0
  at p1 = p2; van Erven & Harremoës 2014, Thms. 1 and 12).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from dpaudit.analysis.privacy_conversions import binary_renyi
from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.auditors.profile.result import ProfilePoint, RenyiPoint
from dpaudit.claims import RenyiDP, ZeroConcentratedDP
from dpaudit.verdicts import Verdict


def ceiling(epsilons: np.ndarray, n: int, error: float) -> np.ndarray:
    """The largest certifiable δ(ε): all ``n`` hits under one input, none under the other."""
    top = float(clopper_pearson_lower(n, n, error))
    bottom = float(clopper_pearson_upper(0, n, error))
    return top - np.exp(epsilons) * bottom


def profile_points(
    bounds: tuple[np.ndarray, np.ndarray],
    estimates: tuple[np.ndarray, np.ndarray],
    epsilons: np.ndarray,
    claimed: np.ndarray,
    top: np.ndarray,
) -> tuple[ProfilePoint, ...]:
    """One :class:`ProfilePoint` per ε from the sets' bounds ``(p1_lower, p2_upper)``.

    ``estimates`` are the point estimates ``(p̂1, p̂2)`` of the same sets on the
    same final samples; ``top`` is :func:`ceiling` on the grid.
    """
    lo, hi = bounds
    p1, p2 = estimates
    scale = np.exp(epsilons)[:, None]
    certified = lo[None, :] - scale * hi[None, :]  # (ε, set)
    best = np.argmax(certified, axis=1)
    estimate = (p1[None, :] - scale * p2[None, :]).max(axis=1)
    points = []
    for i, eps in enumerate(epsilons):
        k = int(best[i])
        value = float(certified[i, k])
        slack = float((p1[k] - lo[k]) + scale[i, 0] * (hi[k] - p2[k]))
        if value > claimed[i]:
            verdict = Verdict.VIOLATION
        elif top[i] <= claimed[i]:
            verdict = Verdict.INCONCLUSIVE
        else:
            verdict = Verdict.NO_VIOLATION_FOUND
        points.append(
            ProfilePoint(
                epsilon=float(eps),
                claimed_delta=float(claimed[i]),
                delta_lower_bound=max(value, 0.0),
                delta_estimate=max(float(estimate[i]), 0.0),
                detectable_excess=slack,
                ceiling=max(float(top[i]), 0.0),
                set_index=k if value > 0 else None,
                verdict=verdict,
            )
        )
    return tuple(points)


def gdp_bound(p1: np.ndarray, p2: np.ndarray) -> tuple[float, int | None]:
    """``max(0, max_S Φ⁻¹(p1) − Φ⁻¹(p2))`` and the set attaining the maximum over S.

    Every mechanism is μ-GDP only for μ ≥ 0, so a negative maximum is reported as the
    vacuous bound 0 rather than as a "μ ≥ −0.1" that reads like a finding; ``−inf`` and
    None without evidence (no set with a positive lower bound on p1).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = np.where(p1 > 0, special.ndtri(p1) - special.ndtri(p2), -np.inf)
    k = int(np.argmax(mu))
    return (max(0.0, float(mu[k])), k) if math.isfinite(mu[k]) else (-math.inf, None)


def gdp_ceiling(n: int, error: float) -> float:
    """The largest μ these sample sizes could certify (all hits vs none)."""
    top = float(clopper_pearson_lower(n, n, error))
    bottom = float(clopper_pearson_upper(0, n, error))
    return float(special.ndtri(top) - special.ndtri(bottom))


def claimed_renyi(claim: Any, order: float) -> float | None:
    """The claim's ε(α), or None when it makes no Rényi statement."""
    if isinstance(claim, RenyiDP | ZeroConcentratedDP):
        return claim.epsilon_at(order)
    return None


def renyi_points(
    lo: np.ndarray, hi: np.ndarray, orders: tuple[float, ...], claim: Any
) -> tuple[RenyiPoint, ...]:
    """One :class:`RenyiPoint` per order from the sets' certified bounds."""
    points = []
    for a in orders:
        d = np.where(lo > hi, binary_renyi(a, lo, hi), 0.0)
        k = int(np.argmax(d))
        value = float(d[k])
        claimed = claimed_renyi(claim, a)
        bad = claimed is not None and value > claimed
        points.append(
            RenyiPoint(
                order=float(a),
                epsilon_lower_bound=value,
                claimed=claimed,
                set_index=k if value > 0 else None,
                verdict=Verdict.of(bad),
            )
        )
    return tuple(points)
