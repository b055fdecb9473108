"""The DKW band: a certifier of the whole trade-off curve of the threshold tests on a score.

Beside the Clopper–Pearson certifier (:mod:`.certify`, one statement per set), this one
certifies every threshold at once, so it needs no selection stage: the profile auditor uses
it for a claim's trade-off curve (:mod:`dpaudit.auditors.profile.tradeoff` draws the
scores), and any auditor with two samples of one score can.

For a fixed score ``s`` (high where an output looks like ``M(x)``), the test
"decide x when ``s(y) > t``" has type-I error ``α(t) = Pr[s(M(x')) > t]`` and
type-II error ``β(t) = Pr[s(M(x)) ≤ t]``; the mirrored test ("decide x' when
``s ≤ t``") has the two swapped.  Both are one minus, or equal to, an empirical
CDF of the scores, so the Dvoretzky–Kiefer–Wolfowitz inequality with
Massart's constant (Ann. Probab. 1990, Thm. 1; holds for any distribution,
discrete ones included),

    Pr[ sup_t |F̂_n(t) − F(t)| > w ] ≤ 2·exp(−2 n w²),

bounds both CDFs at once, at error ``α/2`` each: with probability ``≥ 1 − α``
every threshold, in both directions, has ``|α̂(t) − α(t)| ≤ w`` and
``|β̂(t) − β(t)| ≤ w`` with ``w = √(ln(4/α)/(2n))``.  No selection is needed —
the band covers *all* thresholds — so the scores are drawn once, fresh.

A claim with trade-off curve ``T`` (μ-GDP: ``T_μ``, Dong, Roth & Su, JRSS-B
2022, Def. 2.7) says that *every* test has ``β ≥ T(α)``.  On the band's event
the threshold test at ``t`` has ``α ≤ α̂ + w`` and ``β ≤ β̂ + w``; ``T`` is
non-increasing, so ``β̂(t) + w < T(α̂(t) + w)`` refutes the claim.  The curve
``(α̂ + w, β̂ + w)`` is therefore the *certified* trade-off curve: the true
optimal curve lies on or below it everywhere (the upper-right edge of the
band; the lower-left edge ``(α̂ − w, β̂ − w)`` bounds the threshold tests' own
curve from below and certifies nothing about the claim).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpaudit.errors import InvalidArgumentError
from dpaudit.validation import check_int, check_probability_open

#: Thresholds kept for the stored curve (quantiles of the pooled scores, both tails dense).
CURVE_POINTS = 1024


def candidate_thresholds(
    scores_x: np.ndarray, scores_x_prime: np.ndarray, count: int
) -> np.ndarray:
    """Up to ``count`` distinct thresholds: pooled quantiles, log-spaced towards both tails."""
    pooled = np.sort(np.concatenate([scores_x, scores_x_prime]))
    n = len(pooled)
    tail = np.geomspace(1.0 / n, 0.5, max(count // 2, 1))
    levels = np.concatenate([tail, 1.0 - tail])
    index = np.clip(np.floor(levels * n).astype(np.int64), 0, n - 1)
    return np.unique(pooled[index])


def exceed_fractions(scores: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """``#{s > t}/n`` for each threshold (sorted scores + searchsorted)."""
    s = np.sort(scores)
    return (len(s) - np.searchsorted(s, thresholds, side="right")) / len(s)


def dkw_width(n: int, error: float) -> float:
    """``w = √(ln(2/error)/(2n))``: ``sup_t |F̂_n − F| ≤ w`` with probability ``≥ 1 − error``."""
    check_int("n", n, minimum=1)
    check_probability_open("error", error)
    return math.sqrt(math.log(2.0 / error) / (2.0 * n))


@dataclass(frozen=True)
class TradeoffBand:
    """The threshold tests' errors ``(α̂(t), β̂(t))`` at ``thresholds``, and the band's half-width.

    With probability ``≥ confidence`` the true errors of every threshold test,
    in both directions, lie within ``width`` of these estimates (module
    docstring).  ``samples`` outputs per input were scored.
    """

    thresholds: tuple[float, ...]
    type_one: tuple[float, ...]
    type_two: tuple[float, ...]
    width: float
    confidence: float
    samples: int

    def certified(self) -> tuple[np.ndarray, np.ndarray]:
        """The certified curve ``(min(α̂ + w, 1), min(β̂ + w, 1))``: the optimal curve lies below."""
        a = np.minimum(np.asarray(self.type_one) + self.width, 1.0)
        b = np.minimum(np.asarray(self.type_two) + self.width, 1.0)
        return a, b

    def lower_edge(self) -> tuple[np.ndarray, np.ndarray]:
        """``(max(α̂ − w, 0), max(β̂ − w, 0))``: the band's other edge (drawn, not a bound)."""
        a = np.maximum(np.asarray(self.type_one) - self.width, 0.0)
        b = np.maximum(np.asarray(self.type_two) - self.width, 0.0)
        return a, b

    def claim_gap(self, tradeoff: Callable[[np.ndarray], np.ndarray]) -> float:
        """``max_t T(α̂ + w) − (β̂ + w)`` over both directions: ``> 0`` refutes the claim ``T``."""
        a, b = self.certified()
        gaps = np.concatenate([tradeoff(a) - b, tradeoff(b) - a])  # mirrored test: roles swap
        return float(gaps.max())


def band_from_scores(
    scores_x: np.ndarray, scores_x_prime: np.ndarray, confidence: float, points: int = CURVE_POINTS
) -> TradeoffBand:
    """The :class:`TradeoffBand` of fresh scores of ``M(x)`` and ``M(x')`` (``n`` each)."""
    check_probability_open("confidence", confidence)
    n = len(scores_x)
    if n == 0 or len(scores_x_prime) != n:
        raise InvalidArgumentError(
            "scores_x_prime", len(scores_x_prime), f"as many scores as scores_x ({n}), at least 1"
        )
    thr = candidate_thresholds(scores_x, scores_x_prime, points)
    alpha = exceed_fractions(scores_x_prime, thr)
    beta = 1.0 - exceed_fractions(scores_x, thr)
    width = dkw_width(n, (1.0 - confidence) / 2.0)  # two CDFs, union bound
    return TradeoffBand(
        tuple(float(t) for t in thr),
        tuple(alpha.tolist()),
        tuple(beta.tolist()),
        width,
        confidence,
        n,
    )


__all__ = [
    "CURVE_POINTS",
    "TradeoffBand",
    "band_from_scores",
    "candidate_thresholds",
    "dkw_width",
    "exceed_fractions",
]
