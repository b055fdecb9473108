"""What a proposed set can be counted on to certify: the projection every proposer ranks by.

A proposer (the black-box search, the metric auditor) compares many candidate
sets on its own selection samples and sends the best to certification.  It
ranks them by :func:`projected_bound`, the bound a set is expected to reach on
the final sample size, with a margin for the number of candidates compared.
Ranking only: no confidence statement rests on these numbers (the final bound
is computed by :mod:`dpaudit.auditors.core.certify` on fresh samples).
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper

#: Ranking error: every candidate's log-ratio estimate is lowered by a margin of
#: ``z = Φ⁻¹(1 − SELECTION_ERROR/M)`` of its own standard errors for ``M``
#: candidates compared (the two counts' one-sided Clopper–Pearson deviations at that
#: error, added in quadrature), so that with probability about 1 − SELECTION_ERROR no
#: candidate's conservative ratio exceeds its true ratio: a set wins on a lucky count
#: only if the count beats that multiplicity-adjusted margin, which keeps small tail
#: sets from winning by chance among thousands of correlated candidates.
SELECTION_ERROR = 0.2
#: Candidates per ranking kept for the exact projection after a cheap pre-ranking.
PRERANK = 256


def projected_bound(
    k_num: np.ndarray,
    n_num: np.ndarray,
    k_den: np.ndarray,
    n_den: np.ndarray,
    n_final: int,
    alpha_side: float,
    delta: float = 0.0,
    den_rate: np.ndarray | None = None,
    *,
    compared: int = 1,
) -> np.ndarray:
    """The bound each candidate can be counted on to reach on ``n_final`` fresh samples per input.

    Used only for *ranking*; it carries no confidence statement.  Each count is
    moved by its one-sided Clopper–Pearson deviation at error
    ``SELECTION_ERROR / compared`` (:data:`SELECTION_ERROR`) — numerator down,
    denominator up — and the two log-scale deviations are then shrunk by a common
    factor so that together they lower the log-ratio by their quadrature sum, one
    margin for the ratio rather than one per count.  With ``compared``
    candidates ranked together the margin grows with ``ln(compared)`` the way the
    largest of that many lucky estimates does, so a small set beats a large one
    only when its advantage is real.  (Adding the two deviations instead, each at
    half the error, guards the ratio too but overcharges every set by up to √2:
    at 1/10 of DP-Sniper's sizes that let an 8.8 % set of a weaker pair outrank a
    2.2 % set of SparseVectorTechnique1's worst one, measured 2026-11-28,
    ``docs/tuning.md``.)  Where ``den_rate`` is finite it replaces the denominator's bound:
    an importance-sampling estimate whose noise is already small, so only the
    numerator's deviation counts.  The conservative rates are then scaled to
    ``n_final`` and turned into the Clopper–Pearson bound the final stage would
    compute at ``alpha_side`` — so a set also pays for the width of its own final
    interval, which is what makes large-mass sets win when the ratio is the same.
    """
    k_num = np.asarray(k_num, dtype=np.int64)
    k_den = np.asarray(k_den, dtype=np.int64)
    n_num = np.asarray(n_num, dtype=np.float64)
    n_den = np.asarray(n_den, dtype=np.float64)
    rate = np.full(k_num.shape, np.nan) if den_rate is None else np.asarray(den_rate, float)
    use_is = np.isfinite(rate)
    level = SELECTION_ERROR / max(int(compared), 1)
    out = np.full(k_num.shape, -np.inf)
    # Cheap pre-ranking by normal approximations of the same bounds; exact for the best PRERANK.
    from scipy import stats  # lazy: keeps the CLI's start-up light

    z, zf = float(stats.norm.isf(level)), float(stats.norm.isf(alpha_side))
    k1, k2 = k_num.astype(np.float64), k_den.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        r1 = z / np.sqrt(k1)  # relative deviations of the two counts
        r2 = np.where(use_is, 0.0, z / np.sqrt(k2))
        shrink = _quadrature_share(r1, r2)
    f1 = np.maximum(k1 - shrink * z * np.sqrt(k1), 0.0) / n_num * n_final
    f2 = np.where(use_is, rate, (k2 + shrink * (z * np.sqrt(k2) + z * z)) / n_den) * n_final
    with np.errstate(divide="ignore", invalid="ignore"):
        rough = np.log(np.maximum((f1 - zf * np.sqrt(f1)) / n_final - delta, 0.0)) - np.log(
            (f2 + zf * np.sqrt(f2) + zf * zf) / n_final
        )
    rough[np.isnan(rough)] = -np.inf
    idx = np.argsort(-rough, kind="stable")[:PRERANK]
    idx = idx[np.isfinite(rough[idx])]
    if len(idx) == 0:
        return out
    p1_hat, p2_hat = k_num[idx] / n_num[idx], k_den[idx] / n_den[idx]
    p1 = np.asarray(clopper_pearson_lower(k_num[idx], n_num[idx], level))
    p2 = np.asarray(clopper_pearson_upper(k_den[idx], n_den[idx], level))
    with np.errstate(divide="ignore", invalid="ignore"):
        d1 = np.log(p1_hat) - np.log(p1)  # log-scale deviations, ≥ 0 (inf at a zero bound)
        d2 = np.where(use_is[idx], 0.0, np.log(p2) - np.log(p2_hat))
        shrink = _quadrature_share(d1, d2)
        p1 = np.where(np.isfinite(d1) & (shrink < 1), p1_hat * np.exp(-shrink * d1), p1)
        p2 = np.where(np.isfinite(d2) & (shrink < 1), p2_hat * np.exp(shrink * d2), p2)
    p2 = np.where(use_is[idx], rate[idx], p2)
    out[idx] = point_projection(p1, p2, n_final, alpha_side, delta)
    return out


def _quadrature_share(d1: np.ndarray, d2: np.ndarray) -> np.ndarray:
    """``√(d1² + d2²) / (d1 + d2)``: both deviations scaled by it add up to their quadrature sum.

    1 (the deviations added whole) where either is infinite — a count of zero, whose
    log-ratio has no standard error to combine — or both are zero.
    """
    total = d1 + d2
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.hypot(d1, d2) / total
    return np.where(np.isfinite(share) & (total > 0), share, 1.0)


def point_projection(
    p_num: np.ndarray, p_den: np.ndarray, n_final: int, alpha_side: float, delta: float = 0.0
) -> np.ndarray:
    """The final bound of sets with rates ``p_num``/``p_den``: counts scaled to ``n_final``.

    Fed with selection rates at face value (no margin) it says whether a set is
    worth re-estimating at all (:meth:`CandidateTable.ladder`), never which of two
    sets competing for one slot is better; :func:`projected_bound` feeds it the
    margin-adjusted rates.
    """
    K1 = np.floor(np.asarray(p_num, dtype=np.float64) * n_final)
    K2 = np.clip(np.ceil(np.asarray(p_den, dtype=np.float64) * n_final), 0, n_final)
    lo = np.asarray(clopper_pearson_lower(K1, n_final, alpha_side))
    hi = np.asarray(clopper_pearson_upper(K2, n_final, alpha_side))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(np.maximum(lo - delta, 0.0)) - np.log(hi)


def log_ratio(k1: int, n1: int, k2: int, n2: int, delta: float) -> float:
    p1, p2 = k1 / n1, k2 / n2
    if p1 - delta <= 0:
        return -math.inf
    if p2 == 0:
        return math.inf
    return math.log(p1 - delta) - math.log(p2)


def log_ratio_se(k1: int, n1: int, k2: int, n2: int) -> float:
    """Delta-method standard error of ``ln(k1/n1) − ln(k2/n2)`` (``k1, k2 ≥ 1``).

    ``sqrt((1 − p1)/k1 + (1 − p2)/k2)``: the spread of one log-ratio estimate from
    its own counts, e.g. what two runs that certify the same set differ by.
    """
    return math.sqrt(max(1 / k1 - 1 / n1, 0.0) + max(1 / k2 - 1 / n2, 0.0))
