"""Candidate selection of the black-box audit: rank threshold sets by the bound they project.

Every candidate set — threshold × tail (``>``/``<``) × tie handling × which
input is the numerator — of one (pair, score) is scored by
:func:`projected_bound`, the bound it is expected to reach on the final sample
size, with a margin for the number of candidates compared.  Used for *ranking*
only; no confidence statement rests on it (the final estimate runs on fresh
samples).  Its sizes and tuning constants are
:class:`~dpaudit.auditors.blackbox.config.SearchConfig`'s.  Imports nothing above ``auditors/``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpaudit.auditors.blackbox.counting import UnitCounts
from dpaudit.auditors.blackbox.scores import Score, count_at_thresholds, weighted_sums_at_thresholds
from dpaudit.auditors.core.projection import (
    log_ratio,
    log_ratio_se,
    point_projection,
    projected_bound,
)


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
    def from_counts(u: UnitCounts, index: int = 0) -> SideStats:
        """From the merged counts of a selection job, for its score number ``index``."""
        w = u.weighted[index] if u.weighted is not None else None
        if w is None:
            return SideStats(u.greater[index], u.equal[index], u.n)
        return SideStats(u.greater[index], u.equal[index], u.n, w[0], w[1], w[2])


#: The 8 candidate sets of every threshold, in table order: (tail, tie kept, x on top).
_SETS = tuple(
    (tail, q, num_is_x)
    for tail in ("upper", "lower")
    for q in (0.0, 1.0)
    for num_is_x in (True, False)
)


@dataclass(frozen=True)
class CandidateTable:
    """Counts of all ``8·m`` threshold candidates of one (pair, score) on one sample.

    Candidate sets: ``score > t``, ``score ≥ t``, ``score < t``, ``score ≤ t``,
    each with ``x`` or ``x'`` as the numerator input; entry ``r·m + j`` is set
    :data:`_SETS` ``[r]`` at threshold ``j``.  For the two natural orientations
    of a likelihood-ratio score (upper sets over ``x``, lower sets over ``x'``)
    ``den_rate`` holds an importance-sampling estimate of the denominator
    probability from the numerator's own outputs — bounded weights, low noise
    (NaN elsewhere).
    """

    m: int
    num: np.ndarray
    n_num: np.ndarray
    den: np.ndarray
    n_den: np.ndarray
    den_rate: np.ndarray

    @property
    def size(self) -> int:
        """Number of candidate sets."""
        return len(self.num)

    @staticmethod
    def of(thr: np.ndarray, sx: SideStats, sxp: SideStats) -> CandidateTable:
        """The table of one (pair, score) from both inputs' statistics on one sample."""
        m = len(thr)
        nan = np.full(m, np.nan)
        num, n_num, den, n_den, rate = [], [], [], [], []
        for tail, q, num_is_x in _SETS:
            if tail == "upper":
                hx, hxp = sx.greater + q * sx.equal, sxp.greater + q * sxp.equal
            else:
                hx = sx.n - sx.greater - sx.equal + q * sx.equal
                hxp = sxp.n - sxp.greater - sxp.equal + q * sxp.equal
            est = nan
            if num_is_x and tail == "upper" and sx.w_greater is not None:
                assert sx.w_equal is not None
                est = (sx.w_greater + q * sx.w_equal) / sx.n  # ≈ Pr[M(x') ∈ S]
            if not num_is_x and tail == "lower" and sxp.w_greater is not None:
                assert sxp.w_equal is not None
                low = sxp.w_total - sxp.w_greater - sxp.w_equal + q * sxp.w_equal
                est = np.maximum(low, 0.0) / sxp.n  # ≈ Pr[M(x) ∈ S]
            top, bottom = (sx, sxp) if num_is_x else (sxp, sx)
            num.append(hx if num_is_x else hxp)
            den.append(hxp if num_is_x else hx)
            n_num.append(np.full(m, top.n))
            n_den.append(np.full(m, bottom.n))
            rate.append(est)
        return CandidateTable(
            m,
            np.rint(np.concatenate(num)).astype(np.int64),
            np.concatenate(n_num),
            np.rint(np.concatenate(den)).astype(np.int64),
            np.concatenate(n_den),
            np.concatenate(rate),
        )

    def merged(self, other: CandidateTable) -> CandidateTable:
        """This table's counts plus ``other``'s (same candidates, independent samples)."""
        n_num = self.n_num + other.n_num
        # The importance estimates come from the numerator's outputs: weight them by those.
        rate = (self.den_rate * self.n_num + other.den_rate * other.n_num) / np.maximum(n_num, 1)
        return CandidateTable(
            self.m,
            self.num + other.num,
            n_num,
            self.den + other.den,
            self.n_den + other.n_den,
            rate,
        )

    def log_ratio_se(self, idx: int) -> float:
        """Delta-method standard error of entry ``idx``'s log-ratio estimate (counts ≥ 1)."""
        k1, k2 = max(int(self.num[idx]), 1), max(int(self.den[idx]), 1)
        return log_ratio_se(k1, int(self.n_num[idx]), k2, int(self.n_den[idx]))

    def project(
        self,
        n_final: int,
        alpha_side: float,
        delta: float,
        compared: int,
        only: np.ndarray | None = None,
    ) -> np.ndarray:
        """:func:`projected_bound` of every candidate (or of ``only``; −inf elsewhere)."""
        idx = np.arange(self.size) if only is None else np.asarray(only, dtype=np.int64)
        out = np.full(self.size, -np.inf)
        out[idx] = projected_bound(
            self.num[idx],
            self.n_num[idx],
            self.den[idx],
            self.n_den[idx],
            n_final,
            alpha_side,
            delta,
            self.den_rate[idx],
            compared=compared,
        )
        return out

    def leaders(self, values: np.ndarray, top: int) -> list[int]:
        """Indices of the ``top`` best distinct sets by ``values`` (finite values only).

        Two entries with the same tail, orientation and counts are the same set
        on this sample (e.g. ``>`` and ``≥`` at a threshold no output hits).
        """
        out: list[int] = []
        seen: set[tuple[int, int, int]] = set()
        for idx in np.argsort(-values, kind="stable"):
            if len(out) >= top or not np.isfinite(values[idx]):
                break
            r = int(idx) // self.m
            key = (r // 2 * 0 + (r >= 4) * 2 + r % 2, int(self.num[idx]), int(self.den[idx]))
            if key in seen:
                continue
            seen.add(key)
            out.append(int(idx))
        return out

    def ladder(
        self,
        idx: int,
        n_final: int,
        alpha_side: float,
        delta: float,
        rungs: int,
        step: float,
        bar: float | None = None,
    ) -> list[int]:
        """Smaller sets of entry ``idx``'s kind worth re-estimating beside it on the final samples.

        The selection margin must cover the noise of the *selection* sample, which
        is large for small sets; the final sample is usually many times larger, so a
        smaller set the margin could not certify may still end with the larger
        bound (e.g. 20 coordinates of Laplace noise, where the ratio keeps growing
        into the tail while every set's selection estimate is noisy).  The rungs are
        the sets of the same tail, tie handling and orientation whose denominator
        rate is nearest ``m/step^j`` (``m``: that of ``idx``), ``j = 1..rungs``; a
        rung is kept only when, at face value on this table (counts scaled to
        ``n_final``, no margin), it projects above ``bar`` — by default ``idx``'s own
        face value.  The final stage picks the best of them under a Bonferroni
        correction over all sets it re-estimates, so the rungs cost confidence
        width, never validity.

        ``idx``'s face value is biased upwards when ``idx`` won a ranking on these
        counts (it is a maximum), while a rung is picked by its mass alone; a
        lower ``bar`` (e.g. ``idx``'s projection under the ranking's margin) lets
        a rung that only loses by that bias reach the final samples.
        """
        picks = self.ladder_picks(idx, rungs, step)
        face = self.face_projection([idx, *picks], n_final, alpha_side, delta)
        above = face[0] if bar is None else bar
        return [p for p, v in zip(picks, face[1:], strict=True) if v > above]

    def ladder_picks(self, idx: int, rungs: int, step: float) -> list[int]:
        """The rung candidates of :meth:`ladder` before its face-value filter, distinct."""
        r = idx // self.m
        rate = self.den / np.maximum(self.n_den, 1)
        block = rate[r * self.m : (r + 1) * self.m]
        base = float(rate[idx])
        smaller = np.nonzero(block < base)[0]
        if len(smaller) == 0:
            return []
        picks: list[int] = []
        for j in range(1, rungs + 1):
            target = base / step**j
            pick = r * self.m + int(smaller[np.argmin(np.abs(block[smaller] - target))])
            if pick not in picks:
                picks.append(pick)
        return picks

    def face_projection(
        self, idx: Sequence[int], n_final: int, alpha_side: float, delta: float
    ) -> np.ndarray:
        """:func:`point_projection` of entries ``idx`` at face value: counts scaled, no margin."""
        at = np.asarray(idx, dtype=np.int64)
        return point_projection(
            self.num[at] / self.n_num[at],
            self.den[at] / np.maximum(self.n_den[at], 1),
            n_final,
            alpha_side,
            delta,
        )

    def candidate(
        self, pair_index: int, score: Score, thr: np.ndarray, idx: int, value: float, delta: float
    ) -> Candidate:
        """Entry ``idx`` as a candidate ranked by ``value``."""
        r, j = divmod(idx, self.m)
        tail, q, num_is_x = _SETS[r]
        est = log_ratio(
            int(self.num[idx]),
            int(self.n_num[idx]),
            int(self.den[idx]),
            int(self.n_den[idx]),
            delta,
        )
        return Candidate(pair_index, score, float(thr[j]), tail, q, num_is_x, value, est)
