"""Area under the ROC curve, many score vectors at once.

The AUC is the Mann–Whitney statistic: the probability that a random positive
scores above a random negative, ties counting one half.  With average ranks
``R`` over the pooled scores, ``AUC = (Σ_{positives} R − n₁(n₁+1)/2) / (n₁·n₀)``
(equal to :func:`sklearn.metrics.roc_auc_score`, tested against it).
"""

from __future__ import annotations

import numpy as np

from dpaudit.errors import InvalidArgumentError


def auc_per_row(scores: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """AUC of every row: ``scores`` and boolean ``positive`` of shape ``(R, M)`` → ``(R,)``.

    Higher scores mean "more likely positive".  A row without positives or
    without negatives has no AUC (NaN).  Scores may be ``±inf`` but not NaN.
    """
    from scipy import stats  # lazy: keeps `import dpaudit` light

    s = np.asarray(scores, dtype=np.float64)
    pos = np.asarray(positive, dtype=bool)
    if s.ndim != 2 or pos.shape != s.shape:
        raise InvalidArgumentError(
            "scores/positive", f"<shapes {s.shape} and {pos.shape}>", "two arrays of shape (R, M)"
        )
    if np.isnan(s).any():
        raise InvalidArgumentError("scores", "<array with NaN>", "scores without NaN")
    ranks = stats.rankdata(s, method="average", axis=1)
    n1 = pos.sum(axis=1).astype(np.float64)
    n0 = s.shape[1] - n1
    u = np.where(pos, ranks, 0.0).sum(axis=1) - n1 * (n1 + 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((n1 > 0) & (n0 > 0), u / (n1 * n0), np.nan)


def placement_values(
    positive_scores: np.ndarray, negative_scores: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """DeLong's placement values of one ROC curve (DeLong, DeLong & Clarke-Pearson 1988).

    ``V10[i]``: share of negatives scoring below positive ``i`` (ties ½);
    ``V01[j]``: share of positives scoring above negative ``j`` (ties ½).  Both
    average to the AUC, and ``Var(AUC) ≈ Var(V10)/n₁ + Var(V01)/n₀``; per-element
    values let a caller combine curves that share negatives.
    """
    pos = np.sort(np.asarray(positive_scores, dtype=np.float64))
    neg = np.sort(np.asarray(negative_scores, dtype=np.float64))
    if pos.size == 0 or neg.size == 0:
        raise InvalidArgumentError("scores", "<empty class>", "at least one positive and negative")
    below = np.searchsorted(neg, positive_scores, side="left")
    not_above = np.searchsorted(neg, positive_scores, side="right")
    v10 = (below + 0.5 * (not_above - below)) / neg.size
    pos_below = np.searchsorted(pos, negative_scores, side="left")
    pos_not_above = np.searchsorted(pos, negative_scores, side="right")
    above = pos.size - pos_not_above
    v01 = (above + 0.5 * (pos_not_above - pos_below)) / pos.size
    return v10, v01
