"""The one-run audit's test: how many correct membership guesses (ε, δ)-DP allows.

Steinke, Nasr & Jagielski ("Privacy Auditing with One (1) Training Run", NeurIPS 2023):
``m`` canaries are each included in the training set independently with probability 1/2
(``S ∈ {−1, +1}^m``); after training, an auditor guesses ``T_i ∈ {−1, 0, +1}`` for each
(0 = abstain), ``r`` guesses in all, ``v`` of them correct.  If the training algorithm is
(ε, δ)-DP with respect to adding or removing one record, then (their Thm. 5.2, the form
their Algorithm/appendix evaluates):

    P[v correct or more] ≤ β + 2mδ · max_{1 ≤ i ≤ v} P[v − i ≤ B < v] / i,

``β = P[B ≥ v]``, ``B ~ Binomial(r, e^ε/(1 + e^ε))`` — the number of correct guesses of
ε-DP randomised response on ``r`` bits.  For δ = 0 only ``β`` remains (their Thm. 3.1): the
guesses are stochastically dominated by randomised response.  The bound holds for any guess
rule that is a function of the released model (the guesses may be adaptive and the
canaries' effects dependent); it needs the inclusion bits drawn independently and uniformly,
which the auditor does itself.

:func:`p_value` is that bound; :func:`epsilon_lower_bound` inverts it: the largest ε whose
p-value is at most ``alpha`` (the p-value rises with ε, so every smaller ε is rejected too),
the one-sided bound "ε ≥ ε_lcb with confidence 1 − α".  A caller who tries several numbers
of guesses pays for each (Bonferroni, ``alpha / tries``): choosing the best ``r`` after
seeing the scores and reporting it at ``alpha`` would overstate the confidence.
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.errors import InvalidArgumentError

#: ε above which the bisection stops (randomised response accuracy 1 − 2e-22).
EPSILON_CAP = 50.0


def _check_counts(m: int, r: int, v: int) -> None:
    for name, value in (("m", m), ("r", r), ("v", v)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise InvalidArgumentError(name, value, "an integer")
    if not 0 <= v <= r <= m or m < 1:
        raise InvalidArgumentError("counts", (m, r, v), "0 ≤ v ≤ r ≤ m, m ≥ 1")


def p_value(m: int, r: int, v: int, epsilon: float, delta: float = 0.0) -> float:
    """Largest chance of ``v`` or more correct of ``r`` guesses under (ε, δ)-DP, ``m`` canaries."""
    _check_counts(m, r, v)
    if not (math.isfinite(epsilon) and epsilon >= 0):
        raise InvalidArgumentError("epsilon", epsilon, "a finite number >= 0")
    if not 0.0 <= delta <= 1.0:
        raise InvalidArgumentError("delta", delta, "a probability in [0, 1]")
    if v == 0:
        return 1.0
    from scipy import stats  # here, not at the top: the core's procedure imports this module

    q = 1.0 / (1.0 + math.exp(-epsilon))
    beta = float(stats.binom.sf(v - 1, r, q))
    if delta == 0.0:
        return min(beta, 1.0)
    # P[v − i ≤ B < v] = cdf(v − 1) − cdf(v − i − 1), for i = 1..v at once.
    below = stats.binom.cdf(v - 1, r, q) - stats.binom.cdf(v - 1 - np.arange(1, v + 1), r, q)
    spread = float(np.max(below / np.arange(1, v + 1)))
    return min(beta + 2.0 * m * delta * spread, 1.0)


def epsilon_lower_bound(m: int, r: int, v: int, alpha: float, delta: float = 0.0) -> float:
    """The largest ε with ``p_value(m, r, v, ε, δ) ≤ alpha`` (0 when none, to 1e-9 in ε)."""
    if not 0.0 < alpha < 1.0:
        raise InvalidArgumentError("alpha", alpha, "a probability in (0, 1)")
    if p_value(m, r, v, 0.0, delta) > alpha:
        return 0.0
    if p_value(m, r, v, EPSILON_CAP, delta) <= alpha:
        return EPSILON_CAP
    lo, hi = 0.0, EPSILON_CAP
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        if p_value(m, r, v, mid, delta) <= alpha:
            lo = mid
        else:
            hi = mid
    return lo


def epsilon_ceiling(m: int, r: int, alpha: float, delta: float = 0.0) -> float:
    """The largest bound ``r`` guesses can give: all of them correct."""
    return epsilon_lower_bound(m, r, r, alpha, delta)


__all__ = ["EPSILON_CAP", "epsilon_ceiling", "epsilon_lower_bound", "p_value"]
