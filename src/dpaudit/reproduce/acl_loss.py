"""The loss of the ACL 2022 sanity-check attack: exact value and confidence bounds.

The attack (Habernal, ACL 2022, §4) rounds each output coordinate at 0.5 and
takes a majority vote; its empirical loss is ``max_g |ln(f0g/f1g)|`` over the
2×2 table of true vs guessed input.  Here: the **exact loss** the empirical
one converges to with infinitely many runs (additive mechanisms: exact
per-coordinate rounding probabilities from
:func:`dpaudit.auditors.sanity.decision_set.attack_decision_set`, then a binomial
majority vote, ties voting 0 as numpy's round-half-to-even in the reference),
an upper confidence bound on it (Clopper–Pearson, Bonferroni over eight
one-sided bounds) and the delta-method standard error used to compare our loss
with a published one.  Used by :mod:`dpaudit.reproduce.habernal2022_fig2`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.auditors.sanity.decision_set import attack_decision_set
from dpaudit.mechanisms import make_mechanism


def exact_attack_loss(mechanism: str, epsilon: float, dim: int) -> float | None:
    """The MLE loss the attack converges to with infinitely many runs, or None if unknown.

    Additive mechanisms: exact per-coordinate rounding probabilities q0, q1
    (on the sampler's 32-bit uniform grid), then the majority vote's
    probabilities ``P(Bin(n, q) > ⌊n/2⌋)`` (a tie votes 0).  A mechanism whose
    analytic ε is 0 (random bits) has loss 0 for every attack.
    """
    mech = make_mechanism(mechanism, epsilon=epsilon, dim=dim)
    truth = mech.truth()
    if truth is not None and truth.true_epsilon == 0.0:
        return 0.0
    if not mech.is_additive:
        return None
    d0, d1 = attack_decision_set(mech, 0.0), attack_decision_set(mech, 1.0)
    if d0 is None or d1 is None:
        return None
    log_votes = [_log_vote_probabilities(dim, d.probability) for d in (d0, d1)]
    loss = 0.0
    for g in (0, 1):
        a, b = log_votes[0][g], log_votes[1][g]
        if math.isinf(a) and math.isinf(b):
            continue  # a guess that never occurs carries no evidence (as in the MLE)
        if math.isinf(a) or math.isinf(b):
            return math.inf
        loss = max(loss, abs(a - b))
    return loss


def exact_unit(cell: tuple[str, float, int]) -> float | None:
    """Work unit for the executor: the exact attack loss of one (mechanism, ε, n) cell."""
    return exact_attack_loss(*cell)


def _log_vote_probabilities(n: int, q: float) -> tuple[float, float]:
    """``(ln P(vote 0), ln P(vote 1))`` for ``n`` coordinates each 1 with probability ``q``."""
    if q <= 0.0:
        return 0.0, -math.inf
    if q >= 1.0:
        return -math.inf, 0.0
    k = np.arange(n + 1)
    logpmf = stats.binom.logpmf(k, n, q)
    half = n // 2  # counts > n/2 vote 1; a tie (n even, count = n/2) votes 0
    return float(special.logsumexp(logpmf[: half + 1])), float(
        special.logsumexp(logpmf[half + 1 :])
    )


def loss_upper_bound(counts: np.ndarray, runs: int, confidence: float) -> float:
    """Upper confidence bound on the attack's exact loss ``max_g |ln(p0g/p1g)|``.

    Each of the four proportions gets both one-sided Clopper–Pearson bounds at
    ``(1 − confidence)/8`` (Bonferroni), so all hold together with probability
    ≥ ``confidence`` and the max of the interval ends bounds the max loss.
    """
    alpha = (1.0 - confidence) / 8.0
    upper = 0.0
    for g in (0, 1):
        k0, k1 = int(counts[0][g]), int(counts[1][g])
        lo0, hi0 = clopper_pearson_lower(k0, runs, alpha), clopper_pearson_upper(k0, runs, alpha)
        lo1, hi1 = clopper_pearson_lower(k1, runs, alpha), clopper_pearson_upper(k1, runs, alpha)
        with np.errstate(divide="ignore"):
            upper = max(upper, float(np.log(hi0) - np.log(lo1)), float(np.log(hi1) - np.log(lo0)))
    return upper


def loss_standard_error(counts: np.ndarray, runs: int, other_runs: int) -> float | None:
    """Delta-method standard error of ``ours − published`` for the guess that gives our loss.

    ``Var ln(f0g/f1g) ≈ (1−p0)/(N p0) + (1−p1)/(N p1)``; the published value's
    variance is the same with its own number of runs.  None when a count is 0.
    """
    best_g, best = None, -1.0
    for g in (0, 1):
        k0, k1 = int(counts[0][g]), int(counts[1][g])
        if k0 == 0 or k1 == 0:
            continue
        loss = abs(math.log(k0 / k1))
        if loss > best:
            best_g, best = g, loss
    if best_g is None:
        return None
    p0, p1 = counts[0][best_g] / runs, counts[1][best_g] / runs
    shape = (1 - p0) / p0 + (1 - p1) / p1
    return math.sqrt(shape / runs + shape / other_runs)
