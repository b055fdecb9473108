"""What a black-box bound can be expected to reach on DP-Sniper's suite, from exact probabilities.

For the rows whose output distributions have a closed form, this prints the
*ceiling*: the bound ``ln p1_lower − ln p2_upper`` (one-sided Clopper–Pearson
at α/2 each, α = 0.1, as DP-Sniper and dpaudit compute it, one set) that the
most powerful set gives when its final counts come out exactly at their
expectations ``n·p1`` and ``n·p2`` (n = 200M, DP-Sniper's final sample).  A
single run lands around it, with a standard deviation of about
``sqrt(1/k1 + 1/k2)``; a published single run above it was a lucky draw, and
one above the exact ε was a bound that failed (as each may, with probability
≤ α).  The exact ε over DP-Sniper's input pairs is printed beside it.

    .venv/bin/python benchmarks/dpsniper_ceilings.py

Rows (mechanisms as in ``dpsniper_mechanisms.py``; the sets are the most
powerful ones, found by enumeration or by the closed form):

* Laplace, ``Lap(10)``, pair 0 / 1: the set ``y < t`` over a grid of ``t``.
* ReportNoisyMax1, argmax of ``x + Lap(20)`` over 5 entries: every union of
  indices over every pair (probabilities by numerical integration).
* ReportNoisyMax2, argmax of ``x + Exp(20)``: the same, exponential noise.
* ReportNoisyMax3, max of ``x + Lap(20)``: ``y < t``; for ``t ≤ min x`` all five
  noises lie in Laplace's left branch and the ratio is exactly ``e^{5/20}``.
* RAPPOR and one-time RAPPOR: all six differing Bloom bits reported in the
  direction of ``x`` (the ratio is a product over bits).
* SVT1 and SVT2 with c = 1: the output is fixed by the index of the first
  "above" answer (or none), 11 outcomes over 10 queries; every union of outcomes
  over every pair (probabilities by numerical integration over the threshold
  noise).  With c = 1 SVT2's re-drawn threshold is never used, so the two differ
  only in T (0.5 and 1).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import integrate, stats

from dpaudit.auditors.core.statistics import log_ratio_lower_bound

N_FINAL = 200_000_000
ALPHA = 0.1
#: ReportNoisyMax's noise at ε = 0.1: Lap(2/ε) (RNM1) and Exp(2/ε) (RNM2).
LAPLACE_20 = stats.laplace(scale=20.0)
EXPONENTIAL_20 = stats.expon(scale=20.0)


def ceiling(p1: float, p2: float, n: int = N_FINAL, alpha: float = ALPHA) -> float:
    """The bound from counts exactly at expectation."""
    return float(log_ratio_lower_bound(round(n * p1), n, round(n * p2), n, alpha))


def laplace_row() -> tuple[float, float]:
    lap = stats.laplace(scale=10.0)
    ts = np.linspace(-60.0, 0.0, 601)
    return 0.1, max(ceiling(lap.cdf(t), lap.cdf(t - 1.0)) for t in ts)


def _argmax_probabilities(x: np.ndarray, noise: Any = LAPLACE_20) -> np.ndarray:
    """Pr[argmax_i (x_i + noise_i) = i] for each i (i.i.d. noise, a frozen scipy law)."""

    def density(t: float, i: int) -> float:
        others = np.prod([noise.cdf(t - x[j]) for j in range(len(x)) if j != i])
        return float(noise.pdf(t - x[i]) * others)

    return np.array(
        [
            integrate.quad(density, -800, 800, args=(i,), points=[0, 1, 2], limit=500)[0]
            for i in range(len(x))
        ]
    )


RNM_PAIRS = [
    ("1,1,1,1,1", "0,1,1,1,1"),
    ("1,1,1,1,1", "2,1,1,1,1"),
    ("1,1,1,1,1", "2,0,0,0,0"),
    ("1,1,1,1,1", "0,2,2,2,2"),
    ("1,1,1,1,1", "2,2,0,0,0"),
    ("1,1,1,1,1", "2,2,2,2,2"),
    ("1,1,1,1,1", "0,0,0,0,0"),
    ("1,1,0,0,0", "0,0,1,1,1"),
]


def _best_union(pa: np.ndarray, pb: np.ndarray) -> tuple[float, float]:
    """Largest ε and ceiling over every proper union of outcomes, in both directions.

    The most powerful sets at any size are unions in the order of the ratio
    (Neyman–Pearson), but the ceiling also weighs mass: enumerate all unions.
    """
    best_eps, best_ceiling = 0.0, 0.0
    for size in range(1, len(pa)):
        for s in itertools.combinations(range(len(pa)), size):
            p, q = pa[list(s)].sum(), pb[list(s)].sum()
            for num, den in ((p, q), (q, p)):
                best_eps = max(best_eps, math.log(num / den))
                best_ceiling = max(best_ceiling, ceiling(num, den))
    return best_eps, best_ceiling


def _best_over_pairs(
    pairs: list[tuple[str, str]], probabilities: Callable[[np.ndarray], np.ndarray]
) -> tuple[float, float]:
    """:func:`_best_union` maximised over the input pairs (``probabilities(x)`` per input)."""
    rows = [
        _best_union(
            probabilities(np.array(a.split(","), float)),
            probabilities(np.array(b.split(","), float)),
        )
        for a, b in pairs
    ]
    return max(e for e, _ in rows), max(c for _, c in rows)


def rnm1_row() -> tuple[float, float]:
    return _best_over_pairs(RNM_PAIRS, _argmax_probabilities)


def rnm2_row() -> tuple[float, float]:
    return _best_over_pairs(RNM_PAIRS, lambda x: _argmax_probabilities(x, EXPONENTIAL_20))


def rnm3_row() -> tuple[float, float]:
    # Pair 0⁵ / 1⁵, set {y < 0}: Pr = (½)^5 under 0⁵ and (½e^{-1/20})^5 under 1⁵.
    p1 = 0.5**5
    return 5 / 20, ceiling(p1, p1 * math.exp(-5 / 20))


def rappor_row(q_star: float, p_star: float, bits: int = 6) -> tuple[float, float]:
    return bits * math.log(q_star / p_star), ceiling(q_star**bits, p_star**bits)


SVT_PAIRS = [
    ("1,1,1,1,1,1,1,1,1,1", "0,1,1,1,1,1,1,1,1,1"),
    ("1,1,1,1,1,1,1,1,1,1", "2,1,1,1,1,1,1,1,1,1"),
    ("1,1,1,1,1,1,1,1,1,1", "2,0,0,0,0,0,0,0,0,0"),
    ("1,1,1,1,1,1,1,1,1,1", "0,2,2,2,2,2,2,2,2,2"),
    ("1,1,1,1,1,1,1,1,1,1", "2,2,2,2,2,0,0,0,0,0"),
    ("1,1,1,1,1,1,1,1,1,1", "2,2,2,2,2,2,2,2,2,2"),
    ("1,1,1,1,1,1,1,1,1,1", "0,0,0,0,0,0,0,0,0,0"),
    ("1,1,1,1,1,0,0,0,0,0", "0,0,0,0,0,1,1,1,1,1"),
]


def _first_above_probabilities(x: np.ndarray, t: float) -> np.ndarray:
    """Pr[first answer ≥ ρ + t is query j] for j < len(x), and Pr[none] last.

    SVT with c = 1 (Lyu et al. 2017, Alg. 1): ρ ~ Lap(20), query noise Lap(40).
    """
    rho, nu = stats.laplace(scale=20.0), stats.laplace(scale=40.0)

    def density(r: float, j: int) -> float:
        below = nu.cdf(r + t - x)  # Pr[x_i + ν_i < r + t]
        head = float(np.prod(below[:j]))
        return float(rho.pdf(r) * (head * (1.0 - below[j]) if j < len(x) else np.prod(below)))

    return np.array(
        [
            integrate.quad(density, -1500, 1500, args=(j,), points=[-5, 0, 5], limit=500)[0]
            for j in range(len(x) + 1)
        ]
    )


def svt_row(t: float) -> tuple[float, float]:
    return _best_over_pairs(SVT_PAIRS, lambda x: _first_above_probabilities(x, t))


def main() -> int:
    rows = {
        "LaplaceMechanism": laplace_row(),
        "ReportNoisyMax1": rnm1_row(),
        "ReportNoisyMax2": rnm2_row(),
        "ReportNoisyMax3": rnm3_row(),
        # q* = ½f(p+q) + (1−f)q with f 0.75, p 0.45, q 0.55 (Erlingsson et al. 2014, §3.2).
        "Rappor": rappor_row(0.5125, 0.4875),
        # Permanent response only: 1 − f/2 against f/2, f = 0.95.
        "OneTimeRappor": rappor_row(1 - 0.95 / 2, 0.95 / 2),
        "SVT1": svt_row(0.5),
        "SVT2": svt_row(1.0),
    }
    print(f"{'mechanism':18s} {'exact ε (pairs)':>16s} {'ceiling (200M, 0.9)':>20s}")
    for name, (eps, ceil) in rows.items():
        print(f"{name:18s} {eps:16.5f} {ceil:20.5f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
