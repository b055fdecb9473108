"""Candidate selection of the black-box audit: rank threshold sets by the bound they project.

Every candidate set — threshold × tail (``>``/``<``) × tie handling × which
input is the numerator — of one (pair, score) is scored by
:func:`projected_bound`, the bound it is expected to reach on the final sample
size.  Used for *ranking* only; no confidence statement rests on it (the final
estimate runs on fresh samples).  Imports nothing above ``audit/``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.audit.counting import UnitCounts
from dpaudit.audit.scores import Score, count_at_thresholds, weighted_sums_at_thresholds
from dpaudit.audit.statistics import clopper_pearson_lower, clopper_pearson_upper

#: The selection ranks candidates with estimates shrunk by about one standard
#: error (one-sided Clopper–Pearson at this error), against the winner's curse.
SELECTION_SHRINK = 0.16
#: Candidates per (pair, score) kept for the exact projection after a cheap pre-ranking.
PRERANK = 256


@dataclass(frozen=True)
class Candidate:
    """A fully specified threshold attack on one pair, as ranked by the selection."""

    pair_index: int
    score: Score
    threshold: float
    tail: str  # "upper" or "lower"
    tie_probability: float
    numerator_is_x: bool
    projected: float
    selection_estimate: float
    target_mass: float | None = None


@dataclass(frozen=True)
class SideStats:
    """Selection statistics of one input's outputs against a threshold grid.

    ``greater``/``equal``: counts of ``s > T_j`` / ``s = T_j`` among ``n`` outputs.
    For likelihood-ratio scores also the sums of the importance weights
    ``e^{∓s}`` over the same sets and in total, which estimate the *other*
    input's probability of those sets (:func:`weighted_sums_at_thresholds`).
    """

    greater: np.ndarray
    equal: np.ndarray
    n: int
    w_greater: np.ndarray | None = None
    w_equal: np.ndarray | None = None
    w_total: float = 0.0

    @staticmethod
    def of(scores: np.ndarray, thr: np.ndarray, counts: np.ndarray, sign: int) -> SideStats:
        """From in-memory scores of (possibly compressed) rows."""
        weights = None if np.all(counts == 1) else counts
        g, e = count_at_thresholds(scores, thr, weights)
        n = int(counts.sum())
        if not sign:
            return SideStats(g, e, n)
        wg, we, wt = weighted_sums_at_thresholds(scores, thr, sign, counts.astype(np.float64))
        return SideStats(g, e, n, wg, we, wt)

    @staticmethod
    def from_counts(u: UnitCounts) -> SideStats:
        """From the merged counts of a selection job (one score)."""
        w = u.weighted[0] if u.weighted is not None else None
        if w is None:
            return SideStats(u.greater[0], u.equal[0], u.n)
        return SideStats(u.greater[0], u.equal[0], u.n, w[0], w[1], w[2])


def rank_candidates(
    pair_index: int,
    score: Score,
    thr: np.ndarray,
    sx: SideStats,
    sxp: SideStats,
    n_final: int,
    alpha_side: float,
    delta: float,
    top: int,
) -> list[Candidate]:
    """All threshold candidates of one (pair, score), best ``top`` by projected final bound.

    Candidate sets: ``score > t``, ``score ≥ t``, ``score < t``, ``score ≤ t``,
    each with ``x`` or ``x'`` as the numerator input.  For the two natural
    orientations of a likelihood-ratio score (upper sets over ``x``, lower sets
    over ``x'``) the denominator probability is estimated by importance
    weighting the numerator's own outputs — bounded weights, low noise.
    """
    m = len(thr)
    nan = np.full(m, np.nan)
    rows = []  # (tail, q, numerator is x, hits num, n num, hits den, n den, IS den rate)
    for tail in ("upper", "lower"):
        for q in (0.0, 1.0):
            if tail == "upper":
                hx, hxp = sx.greater + q * sx.equal, sxp.greater + q * sxp.equal
            else:
                hx = sx.n - sx.greater - sx.equal + q * sx.equal
                hxp = sxp.n - sxp.greater - sxp.equal + q * sxp.equal
            is_x = is_xp = nan
            if tail == "upper" and sx.w_greater is not None and sx.w_equal is not None:
                is_x = (sx.w_greater + q * sx.w_equal) / sx.n  # ≈ Pr[M(x') ∈ S]
            if tail == "lower" and sxp.w_greater is not None and sxp.w_equal is not None:
                low = sxp.w_total - sxp.w_greater - sxp.w_equal + q * sxp.w_equal
                is_xp = np.maximum(low, 0.0) / sxp.n  # ≈ Pr[M(x) ∈ S]
            rows.append((tail, q, True, hx, sx.n, hxp, sxp.n, is_x))
            rows.append((tail, q, False, hxp, sxp.n, hx, sx.n, is_xp))
    num = np.rint(np.concatenate([r[3] for r in rows])).astype(np.int64)
    den = np.rint(np.concatenate([r[5] for r in rows])).astype(np.int64)
    n_num = np.concatenate([np.full(m, r[4]) for r in rows])
    n_den = np.concatenate([np.full(m, r[6]) for r in rows])
    den_rate = np.concatenate([r[7] for r in rows])
    proj = projected_bound(num, n_num, den, n_den, n_final, alpha_side, delta, den_rate)
    order = np.argsort(-proj, kind="stable")
    out: list[Candidate] = []
    seen: set[tuple[Any, ...]] = set()
    for idx in order:
        if len(out) >= top or not np.isfinite(proj[idx]):
            break
        r, j = divmod(int(idx), m)
        tail, q, num_is_x = rows[r][0], rows[r][1], rows[r][2]
        key = (float(thr[j]), tail, q, num_is_x)
        if key in seen:
            continue
        seen.add(key)
        est = log_ratio(num[idx], n_num[idx], den[idx], n_den[idx], delta)
        out.append(
            Candidate(pair_index, score, float(thr[j]), tail, q, num_is_x, float(proj[idx]), est)
        )
    return out


def projected_bound(
    k_num: np.ndarray,
    n_num: np.ndarray,
    k_den: np.ndarray,
    n_den: np.ndarray,
    n_final: int,
    alpha_side: float,
    delta: float = 0.0,
    den_rate: np.ndarray | None = None,
) -> np.ndarray:
    """The bound each candidate is expected to reach on ``n_final`` fresh samples per input.

    Selection counts are first shrunk by about one standard error (numerator
    down, denominator up, one-sided Clopper–Pearson at :data:`SELECTION_SHRINK`)
    so that lucky small counts do not win.  Where ``den_rate`` is given (finite)
    it replaces the denominator's counted rate and no shrinking is applied: it is
    an importance-sampling estimate whose noise is already small.  The rates are
    scaled to ``n_final`` and turned into the Clopper–Pearson bound the final
    stage would compute.  Used only for *ranking*; it carries no confidence
    statement.
    """
    k_num = np.asarray(k_num, dtype=np.int64)
    k_den = np.asarray(k_den, dtype=np.int64)
    n_num = np.asarray(n_num, dtype=np.float64)
    n_den = np.asarray(n_den, dtype=np.float64)
    rate = np.full(k_num.shape, np.nan) if den_rate is None else np.asarray(den_rate, float)
    use_is = np.isfinite(rate)
    out = np.full(k_num.shape, -np.inf)
    # Cheap pre-ranking by the plain estimate; exact projection for the best PRERANK only.
    with np.errstate(divide="ignore", invalid="ignore"):
        p2_plain = np.where(use_is, rate, np.maximum(k_den, 1) / n_den)
        rough = np.log(k_num / n_num) - np.log(np.maximum(p2_plain, 0.5 / n_final))
        rough -= 2.0 / np.sqrt(np.maximum(k_num, 1))
    rough[k_num == 0] = -np.inf
    rough[np.isnan(rough)] = -np.inf
    idx = np.argsort(-rough, kind="stable")[:PRERANK]
    idx = idx[np.isfinite(rough[idx])]
    if len(idx) == 0:
        return out
    p1 = np.asarray(clopper_pearson_lower(k_num[idx], n_num[idx], SELECTION_SHRINK))
    p2 = np.asarray(clopper_pearson_upper(k_den[idx], n_den[idx], SELECTION_SHRINK))
    sel = use_is[idx]
    p1 = np.where(sel, k_num[idx] / n_num[idx], p1)
    p2 = np.where(sel, rate[idx], p2)
    K1 = np.floor(p1 * n_final)
    K2 = np.clip(np.ceil(p2 * n_final), 0, n_final)
    lo = np.asarray(clopper_pearson_lower(K1, n_final, alpha_side))
    hi = np.asarray(clopper_pearson_upper(K2, n_final, alpha_side))
    with np.errstate(divide="ignore", invalid="ignore"):
        out[idx] = np.log(np.maximum(lo - delta, 0.0)) - np.log(hi)
    return out


def log_ratio(k1: int, n1: int, k2: int, n2: int, delta: float) -> float:
    p1, p2 = k1 / n1, k2 / n2
    if p1 - delta <= 0:
        return -math.inf
    if p2 == 0:
        return math.inf
    return math.log(p1 - delta) - math.log(p2)
