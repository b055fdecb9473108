"""White-box scores of a Dirac canary from every step's privatised gradient (DP-SGD traces).

The white-box adversary of Nasr et al. (USENIX Security 2023, §4.2) sees each step's noisy
clipped gradient sum.  Along a gradient canary's own coordinate, no other record writes, so
that coordinate divided by the clipping norm C and the canary's sign is, per step,

    x_t = b_t + z_t,   b_t = 1 if the canary was in step t's batch,   z_t ~ N(0, σ²)

when the code does what its accountant assumes (Poisson sampling at rate q, fresh Gaussian
noise of scale σC at every step).  Each score below is high where the canary looks included;
each is a valid statistic whatever the code really does — a score that fits the code badly
costs power, never validity — and the auditor pays a Bonferroni share for every score it
tries:

* ``sum`` — ``Σ_t x_t`` (Nasr et al. 2023's statistic for Dirac canaries);
* ``likelihood-ratio`` — ``Σ_t ln(1 − q + q·exp((x_t − ½)/σ²))``: the log-likelihood ratio of
  "in" to "out" under the assumed algorithm (Neyman–Pearson optimal there);
* ``range`` — ``max_t x_t − min_t x_t``: with the noise drawn once and reused, an absent
  canary's coordinate is constant, an included one jumps by 1;
* ``noiseless-steps`` — the number of steps where ``x_t`` is 1 to within 10⁻⁶: a step that
  adds no noise shows an included canary's clipped gradient exactly.
"""

from __future__ import annotations

import numpy as np

#: The scores :func:`trace_scores` returns, in this order.
TRACE_SCORES = ("sum", "likelihood-ratio", "range", "noiseless-steps")
#: How close to 1 a step's value must be to count as noiseless.
NOISELESS_TOLERANCE = 1e-6


def trace_scores(trace: np.ndarray, sampling_rate: float, noise_multiplier: float) -> dict:
    """Every score of :data:`TRACE_SCORES` for each column of ``trace`` (steps × canaries).

    ``trace`` is already divided by the clipping norm and signed by each canary's sign;
    ``sampling_rate`` and ``noise_multiplier`` are the ones the likelihood ratio assumes.
    """
    x = np.asarray(trace, dtype=np.float64)
    q, var = float(sampling_rate), float(noise_multiplier) ** 2
    lr = np.logaddexp(np.log1p(-q) if q < 1 else -np.inf, np.log(q) + (x - 0.5) / var)
    return {
        "sum": x.sum(axis=0),
        "likelihood-ratio": lr.sum(axis=0),
        "range": x.max(axis=0) - x.min(axis=0),
        "noiseless-steps": (np.abs(x - 1.0) <= NOISELESS_TOLERANCE).sum(axis=0).astype(float),
    }


__all__ = ["NOISELESS_TOLERANCE", "TRACE_SCORES", "trace_scores"]
