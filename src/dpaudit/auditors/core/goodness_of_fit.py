"""Does a declared discrete output law match the real sampler's counts? A pooled χ² test.

Exact truth is only as good as the law it is computed from.  A law read from
a library's code (:mod:`dpaudit.adapters.mldp_exact`) or declared by a
mechanism (``output_log_probs``) is therefore tested against counts of the
real sampler, like any declared density
(:mod:`dpaudit.auditors.core.declarations`): Pearson's χ² goodness-of-fit test
(Pearson, Phil. Mag. 1900) on bins of outcomes pooled, in order of declared
probability, until each bin expects at least :data:`MIN_EXPECTED` draws
(Cochran, Biometrics 1954, the rule that keeps the χ² approximation sound).
The bins depend on the declared law only, never on the counts.  An outcome the
law calls impossible that the sampler produced is a mismatch by itself
(p-value 0).  A correct law is flagged with probability at most the test's α
(up to the χ² approximation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpaudit.errors import InvalidArgumentError

#: Smallest expected count of a pooled bin.
MIN_EXPECTED = 5.0


@dataclass(frozen=True)
class LawFit:
    """χ² statistic, degrees of freedom, p-value, and draws the law calls impossible."""

    statistic: float
    dof: int
    p_value: float
    impossible: int
    draws: int

    def describe(self) -> str:
        """``χ² = s on k dof, p = …`` (and the impossible draws, if any)."""
        text = f"χ² = {self.statistic:.4g} on {self.dof} dof, p = {self.p_value:.3g}"
        if self.impossible:
            text += f"; {self.impossible} of {self.draws} draws have declared probability 0"
        return text


def pooled_bins(probabilities: np.ndarray, draws: int) -> list[np.ndarray]:
    """Outcome indices pooled in decreasing declared probability, each bin expecting ≥ 5 draws.

    Outcomes of probability 0 are left out; a last bin short of the minimum
    joins the one before it.
    """
    p = np.asarray(probabilities, dtype=np.float64)
    order = np.argsort(-p, kind="stable")
    order = order[p[order] > 0]
    bins: list[np.ndarray] = []
    start, acc = 0, 0.0
    expected = p[order] * draws
    for i, e in enumerate(expected):
        acc += e
        if acc >= MIN_EXPECTED:
            bins.append(order[start : i + 1])
            start, acc = i + 1, 0.0
    if start < len(order):
        tail = order[start:]
        bins[-1:] = [np.concatenate([bins[-1], tail])] if bins else [tail]
    return bins


def pooled_chi_square(counts: np.ndarray, log_probs: np.ndarray) -> LawFit:
    """Pearson's χ² of ``counts`` (draws per outcome) against the law ``exp(log_probs)``."""
    from scipy import stats  # lazy: keeps the CLI's start-up light

    counts = np.asarray(counts, dtype=np.int64)
    lp = np.asarray(log_probs, dtype=np.float64)
    if counts.shape != lp.shape or counts.ndim != 1:
        raise InvalidArgumentError("counts", counts.shape, f"one count per outcome {lp.shape}")
    n = int(counts.sum())
    p = np.exp(lp)
    impossible = int(counts[p == 0].sum())
    if n == 0:
        return LawFit(0.0, 0, 1.0, 0, 0)
    bins = pooled_bins(p, n)
    observed = np.array([counts[b].sum() for b in bins], dtype=np.float64)
    expected = np.array([p[b].sum() for b in bins]) * n
    # Rescale to the draws the law calls possible, so impossible ones are judged on their own.
    expected *= observed.sum() / max(expected.sum(), 1e-300)
    dof = len(bins) - 1
    stat = float(np.sum((observed - expected) ** 2 / np.maximum(expected, 1e-300)))
    p_value = float(stats.chi2.sf(stat, dof)) if dof > 0 else 1.0
    return LawFit(stat, dof, 0.0 if impossible else p_value, impossible, n)
