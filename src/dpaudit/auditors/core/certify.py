"""Certification: the one place where a proposed output set becomes a valid ε lower bound.

Every auditor is a *proposer*: with any heuristic, on any samples of its own,
it chooses ``K`` statements "``Pr[M(x) ∈ S] > e^c·Pr[M(x') ∈ S] + δ``", each an
ordered input pair and a set ``S``.  This module turns the counts of those sets
on *fresh* final samples — independent of everything that chose them — into
bounds that hold simultaneously:

* each statement gets one-sided Clopper–Pearson bounds ``p1_lower`` on
  ``Pr[M(x) ∈ S]`` and ``p2_upper`` on ``Pr[M(x') ∈ S]``, both at error
  ``α/(2K)`` (:func:`split_error`: Bonferroni over the ``K`` statements and
  their two estimates; no independence between the statements is needed, so
  they may share samples);
* its bound is ``ln(p1_lower − δ) − ln(p2_upper)`` (``−inf`` when
  ``p1_lower ≤ δ``), valid because (ε, δ)-DP implies ``p1 ≤ e^ε p2 + δ`` for
  every set (Dwork & Roth 2014, Def. 2.4; for δ = 0 it is DP-Sniper's bound,
  Bichsel et al., S&P 2021, eq. 9);
* with probability at least ``1 − α`` all ``K`` bounds hold at once, so the
  largest of them, and the verdict of each, holds at confidence ``1 − α``.

The verdict of a statement compares its bound with the loss the claim allows
for its pair (:func:`verdict_for`): ε for pure DP, ε for (ε, δ)-DP (δ enters the
bound), ε·d(x, x') for a metric claim.  Choosing among any number of
candidates *before* the final samples are drawn costs no confidence; only the
``K`` statements re-estimated on them are paid for here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.errors import InvalidArgumentError
from dpaudit.verdicts import Verdict
from dpaudit.witness import ProbabilityEstimate


@dataclass(frozen=True)
class FinalCounts:
    """Hits of one proposed set ``S`` on fresh final samples, oriented as the statement is.

    ``hits_x`` of ``samples_x`` outputs of ``M(x)`` (the numerator) and
    ``hits_x_prime`` of ``samples_x_prime`` outputs of ``M(x')`` fell in ``S``.
    """

    hits_x: int
    samples_x: int
    hits_x_prime: int
    samples_x_prime: int

    def __post_init__(self) -> None:
        for name, hits, n in (
            ("hits_x", self.hits_x, self.samples_x),
            ("hits_x_prime", self.hits_x_prime, self.samples_x_prime),
        ):
            if n < 1 or not 0 <= hits <= n:
                raise InvalidArgumentError(name, hits, f"a count in [0, {n}] (n ≥ 1)")


@dataclass(frozen=True)
class Certificate:
    """The certified bound of one statement: ``ln(p1.bound − δ) − ln(p2.bound)``.

    ``p1`` is the lower bound on ``Pr[M(x) ∈ S]``, ``p2`` the upper bound on
    ``Pr[M(x') ∈ S]``, each at error ``p1.bound_error`` (``α/(2K)``);
    ``statements`` is ``K``.  The bound may be ``−inf`` (no evidence at all).
    """

    p1: ProbabilityEstimate
    p2: ProbabilityEstimate
    lower_bound: float
    delta: float
    statements: int


def split_error(alpha: float, statements: int) -> float:
    """Error of each one-sided bound when ``statements`` statements hold jointly at ``1 − alpha``.

    ``alpha / (2·statements)``: Bonferroni over the statements and the two
    probability estimates of each.
    """
    if not 0.0 < alpha < 1.0:
        raise InvalidArgumentError("alpha", alpha, "a probability in (0, 1)")
    if isinstance(statements, bool) or not isinstance(statements, int) or statements < 1:
        raise InvalidArgumentError("statements", statements, "an integer >= 1")
    return alpha / (2 * statements)


def certify_one(
    counts: FinalCounts, error: float, delta: float = 0.0, statements: int = 1
) -> Certificate:
    """The certificate of one statement whose two bounds are each taken at ``error``.

    ``error`` comes from :func:`split_error` over all the statements certified
    together (``statements`` records how many, for the witness).
    """
    p1 = float(clopper_pearson_lower(counts.hits_x, counts.samples_x, error))
    p2 = float(clopper_pearson_upper(counts.hits_x_prime, counts.samples_x_prime, error))
    with np.errstate(divide="ignore"):
        bound = float(np.log(max(p1 - delta, 0.0)) - np.log(p2))
    return Certificate(
        p1=ProbabilityEstimate(counts.hits_x, counts.samples_x, p1, "lower", error),
        p2=ProbabilityEstimate(counts.hits_x_prime, counts.samples_x_prime, p2, "upper", error),
        lower_bound=bound,
        delta=delta,
        statements=statements,
    )


def certify(
    counts: Sequence[FinalCounts], confidence: float, delta: float = 0.0
) -> tuple[Certificate, ...]:
    """Certificates of all ``K = len(counts)`` statements, holding jointly at ``confidence``."""
    if not counts:
        raise InvalidArgumentError("counts", counts, "at least one statement to certify")
    error = split_error(1.0 - confidence, len(counts))
    return tuple(certify_one(c, error, delta, len(counts)) for c in counts)


def best(certificates: Sequence[Certificate]) -> int:
    """Index of the largest bound (the first on ties)."""
    bounds = [c.lower_bound for c in certificates]
    return max(range(len(bounds)), key=bounds.__getitem__)


def verdict_for(lower_bound: float, allowed_loss: float) -> Verdict:
    """VIOLATION exactly when the certified bound exceeds the loss the claim allows the pair.

    ``allowed_loss = inf`` (a pair the claim does not constrain) is *outside the claim*.
    """
    if math.isinf(allowed_loss) and allowed_loss > 0:
        return Verdict.OUTSIDE_CLAIM
    return Verdict.from_bound(lower_bound, allowed_loss)
