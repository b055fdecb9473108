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

#: Ranking error: every candidate's selection counts are replaced by one-sided
#: Clopper–Pearson bounds (numerator hits down, denominator hits up) at error
#: ``SELECTION_ERROR / (2·M)`` for ``M`` candidates compared, so that with
#: probability ≥ 1 − SELECTION_ERROR no candidate's conservative ratio exceeds its
#: true ratio: a set wins on a lucky count only if the count beats that
#: multiplicity-adjusted margin, which keeps small tail sets from winning by
#: chance among thousands of correlated candidates.
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

    Used only for *ranking*; it carries no confidence statement.  The selection
    counts are replaced by one-sided Clopper–Pearson bounds — numerator down,
    denominator up — at error ``SELECTION_ERROR / (2·compared)``
    (:data:`SELECTION_ERROR`): with ``compared`` candidates ranked together, the
    margin grows with ``ln(compared)`` the way the largest of that many lucky
    counts does, so a small set beats a large one only when its advantage is
    real.  Where ``den_rate`` is finite it replaces the denominator's bound: an
    importance-sampling estimate whose noise is already small.  The
    conservative rates are then scaled to ``n_final`` and turned into the
    Clopper–Pearson bound the final stage would compute at ``alpha_side`` — so
    a set also pays for the width of its own final interval, which is what
    makes large-mass sets win when the ratio is the same.
    """
    k_num = np.asarray(k_num, dtype=np.int64)
    k_den = np.asarray(k_den, dtype=np.int64)
    n_num = np.asarray(n_num, dtype=np.float64)
    n_den = np.asarray(n_den, dtype=np.float64)
    rate = np.full(k_num.shape, np.nan) if den_rate is None else np.asarray(den_rate, float)
    use_is = np.isfinite(rate)
    level = SELECTION_ERROR / (2.0 * max(int(compared), 1))
    out = np.full(k_num.shape, -np.inf)
    # Cheap pre-ranking by normal approximations of the same bounds; exact for the best PRERANK.
    from scipy import stats  # lazy: keeps the CLI's start-up light

    z, zf = float(stats.norm.isf(level)), float(stats.norm.isf(alpha_side))
    k1, k2 = k_num.astype(np.float64), k_den.astype(np.float64)
    f1 = np.maximum(k1 - z * np.sqrt(k1), 0.0) / n_num * n_final
    f2 = np.where(use_is, rate, (k2 + z * np.sqrt(k2) + z * z) / n_den) * n_final
    with np.errstate(divide="ignore", invalid="ignore"):
        rough = np.log(np.maximum((f1 - zf * np.sqrt(f1)) / n_final - delta, 0.0)) - np.log(
            (f2 + zf * np.sqrt(f2) + zf * zf) / n_final
        )
    rough[np.isnan(rough)] = -np.inf
    idx = np.argsort(-rough, kind="stable")[:PRERANK]
    idx = idx[np.isfinite(rough[idx])]
    if len(idx) == 0:
        return out
    p1 = np.asarray(clopper_pearson_lower(k_num[idx], n_num[idx], level))
    p2 = np.asarray(clopper_pearson_upper(k_den[idx], n_den[idx], level))
    p2 = np.where(use_is[idx], rate[idx], p2)
    out[idx] = point_projection(p1, p2, n_final, alpha_side, delta)
    return out


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
