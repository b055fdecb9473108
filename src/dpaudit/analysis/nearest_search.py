"""Exact nearest-word search: a fast low-precision screen, a certified error bound, then float64.

**What "nearest" means.**  For a point ``p`` (float32 coordinates, like the
vocabulary's vectors ``e_v``) the ``k`` nearest words are the ``k`` smallest
``D_v = Σ_j (e_vj − p_j)²`` evaluated in float64 (:func:`exact_sq_distances`),
ties to the lower word index.  Every search here returns exactly that, whatever
screen ran, so a seeded audit gives the same words with or without the
optional fast screen.

**How.**  A *screen* scores every word at once with one matrix product,
``s̃_v ≈ t_v = D_v + c_p`` (``c_p`` the same for all words of the point), and
states a bound ``B_p`` with ``|s̃_v − t_v| ≤ B_p`` from the arithmetic it uses
(Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1:
``|fl(Σ x_i y_i) − Σ x_i y_i| ≤ γ_n Σ |x_i y_i|``, ``γ_n = nu/(1 − nu)``, in any
summation order).  If ``m`` is the ``k``-th smallest screened score, each of
the true ``k`` nearest words has ``s̃_v ≤ m + 2B_p``; those *candidates* (one
or a few per point) are rescored in float64.  Two screens:

* :class:`Float32Screen` — numpy/BLAS float32, always available: scores
  ``‖e_v‖² − 2p·e_v``; the bound is tiny (≈ 1e-3), so the ``k`` smallest
  scores are the only candidates for almost every point (``k + 1`` argmin
  passes tell).
* :class:`~dpaudit.analysis.bfloat16_screen.BFloat16Screen` — PyTorch (extra
  ``fast``) bfloat16 inputs with float32 accumulation (AVX512-BF16/AMX
  hardware): about twice the float32 rate.  The bound is coarser (a few
  candidates per point at small ε), and it rests on an assumption about the
  library's kernel — products accumulated in float32 or better — that its
  ``self_check`` tests on real products before the screen is used.

**Candidates without per-word Python** (bfloat16 screen, whose bound leaves
a few per point: :func:`certified_k_nearest`).  The score columns are split in
``g`` interleaved groups (column ``c`` in group ``c // W``, ``W = width/g``); one
vectorised pass takes the minimum over groups of each of the ``W`` positions,
the ``k``-th smallest of those minima bounds the ``k``-th smallest score from
above (they are ``k`` distinct words), and only the positions whose minimum
passes the threshold are expanded to their ``g`` words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: Interleaved column groups of a screen (the candidate pass scans width/16 minima).
GROUPS = 16
#: Unit roundoff of float32 and of bfloat16 (8 significant bits).
U32 = 2.0**-24
U16 = 2.0**-8
#: Added to every bound: covers flushed subnormal products (far below any other term).
TINY = 1e-30


def gamma(n: int, u: float) -> float:
    """Higham's ``γ_n = nu/(1 − nu)``: relative error bound of an ``n``-term float sum."""
    return n * u / (1.0 - n * u)


def exact_sq_distances(
    matrix: np.ndarray, points: np.ndarray, rows: np.ndarray, words: np.ndarray
) -> np.ndarray:
    """``Σ_j (matrix[words] − points[rows])²`` in float64: what every search ranks by."""
    diff = matrix[words].astype(np.float64) - points[rows].astype(np.float64)
    return np.einsum("ij,ij->i", diff, diff)


def padded_width(width: int, groups: int) -> int:
    """``width`` rounded up to a multiple of ``groups``."""
    return -(-width // groups) * groups


def certified_k_nearest(
    scores: np.ndarray,
    limits: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    k: int,
    groups: int,
    column_words: np.ndarray,
    matrix: np.ndarray,
    points: np.ndarray,
    refine: Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    split: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """The exact ``k`` nearest words of each point from one screened score block.

    ``scores`` (points × width, width a multiple of ``groups``) are bfloat16
    sort keys; ``column_words`` maps columns to word indices (padding columns
    must score above any limit).  Positions below ``split`` hold the words
    with the largest error bounds.  ``limits(kth, wide)`` gets, per row, the
    ``k``-th smallest group minimum and whether one of the ``k`` smallest lies
    in those positions, and returns the row's candidate limits for the other
    positions and for them.  ``refine(rows, words, scores)`` returns
    per-candidate lower and upper bounds on the true score (per-word error
    bounds, tighter than the limits'): a candidate whose lower bound exceeds
    the ``k``-th smallest upper bound of its row is dropped.  Returns
    ``(indices, distances)``, shape ``(n, k)``, nearest first, distances in
    float64.
    """
    n, width = scores.shape
    per_group = width // groups
    minima = scores if groups == 1 else scores.reshape(n, groups, per_group).min(axis=1)
    limit, wide_limit = limits(*_kth_smallest_and_where(minima, k, split))
    passing = minima <= limit[:, None]
    if split:
        passing[:, :split] = minima[:, :split] <= wide_limit[:, None]
    rows, pos = np.divmod(np.flatnonzero(passing), per_group)
    row_limit = np.where(pos < split, wide_limit[rows], limit[rows])
    if groups > 1:  # expand each passing position to its words, as flat indices
        flat = ((rows * width + pos)[:, None] + per_group * np.arange(groups)).ravel()
        flat = flat[scores.reshape(-1)[flat] <= np.repeat(row_limit, groups)]
        rows, cols = np.divmod(flat, width)
    else:
        cols = pos
    words = column_words[cols]
    lower, upper = refine(rows, words, scores[rows, cols])
    keep = lower <= _kth_per_row(rows, upper, n, k)[rows]
    return rank_candidates(rows[keep], words[keep], k, matrix, points)


def _kth_smallest_and_where(
    values: np.ndarray, k: int, split: int
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k``-th smallest of each row, and whether a column below ``split`` is in the ``k``."""
    if k > 4:
        kth = np.partition(values, k - 1, axis=1)[:, k - 1]
        return kth, np.full(len(values), split > 0)
    cols, smallest = _smallest_columns(values, k)  # argmin passes beat a partition for small k
    return smallest[:, -1], np.any(cols < split, axis=1)


def _smallest_columns(values: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Columns and values of the ``count`` smallest of each row, in order, by argmin passes.

    Ties go to the lower column; ``values`` is left as it was.
    """
    every = np.arange(len(values))
    top = np.iinfo(values.dtype).max if values.dtype.kind == "i" else np.inf
    cols = np.empty((len(values), count), dtype=np.int64)
    smallest = np.empty((len(values), count), dtype=values.dtype)
    for j in range(count):
        cols[:, j] = np.argmin(values, axis=1)
        smallest[:, j] = values[every, cols[:, j]]
        values[every, cols[:, j]] = top
    values[every[:, None], cols] = smallest
    return cols, smallest


def rank_candidates(
    rows: np.ndarray, words: np.ndarray, k: int, matrix: np.ndarray, points: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest among candidate ``(row, word)`` pairs, by float64 distance.

    ``rows`` ascend and every point has at least ``k`` candidates, among them
    its true ``k`` nearest words.  Ties go to the lower word index.
    """
    n = len(points)
    dist = exact_sq_distances(matrix, points, rows, words)
    if k <= 4:  # k rounds of a per-row minimum (rows ascend), ties to the lower word
        starts = np.searchsorted(rows, np.arange(n))
        last = np.iinfo(np.int64).max
        out_w = np.empty((n, k), dtype=np.int64)
        out_d = np.empty((n, k), dtype=np.float64)
        left = dist.copy()
        for j in range(k):
            best = np.minimum.reduceat(left, starts)
            word = np.minimum.reduceat(np.where(left == best[rows], words, last), starts)
            out_w[:, j], out_d[:, j] = word, best
            if j + 1 < k:
                left[words == word[rows]] = np.inf
        return out_w, np.sqrt(out_d)
    order = np.lexsort((words, dist, rows))
    rows, words, dist = rows[order], words[order], dist[order]
    take = np.searchsorted(rows, np.arange(n))[:, None] + np.arange(k)
    return words[take], np.sqrt(dist[take])


def kth_smallest_of_rows(values: np.ndarray, k: int) -> np.ndarray:
    """The ``k``-th smallest of each row of a 2-D array (``values`` is left as it was)."""
    return _kth_smallest_and_where(values, k, 0)[0]


def _kth_per_row(rows: np.ndarray, values: np.ndarray, n: int, k: int) -> np.ndarray:
    """The ``k``-th smallest of ``values`` within each row (``rows`` ascending, ≥ k per row)."""
    starts = np.searchsorted(rows, np.arange(n))
    first = np.minimum.reduceat(values, starts)
    if k == 1:
        return first
    if k == 2:  # the minimum again if it occurs twice, else the smallest above it
        at_min = values == first[rows]
        twice = np.add.reduceat(at_min.astype(np.int64), starts) >= 2
        above = np.minimum.reduceat(np.where(at_min, np.inf, values), starts)
        return np.where(twice, first, above)
    order = np.lexsort((values, rows))
    return values[order][starts + k - 1]


@dataclass(frozen=True, eq=False)
class Float32Screen:
    """Float32 scores ``‖e_v‖² − 2p·e_v`` (BLAS) over some columns of a vocabulary.

    ``augmented`` is ``(d + 1, width)``: rows ``−2e_vᵀ`` (exact in float32) and
    ``fl32(‖e_v‖²)``.  ``norm_max`` bounds ``‖e_v‖`` and ``sq_error`` bounds
    ``|fl32(‖e_v‖²) − ‖e_v‖²|`` over all words, so ``B_p = sq_error +
    γ_{d+2}(norm_max² + 2‖p‖·norm_max)`` (≈ 1e-3 for GloVe).  With a bound
    that small the ``k + 1`` smallest scores, found by ``k + 1`` argmin passes
    (numpy's fastest reduction over float32), settle almost every point: if
    the ``(k+1)``-th is above the ``k``-th plus ``2B_p``, the ``k`` smallest
    are the only candidates; other points are searched for every word within
    the limit.
    """

    augmented: np.ndarray
    column_words: np.ndarray
    norm_max: float
    sq_error: float

    @classmethod
    def build(cls, matrix: np.ndarray) -> Float32Screen:
        """The screen over every word of ``matrix`` (float32, ``(V, d)``)."""
        sq64 = np.einsum("ij,ij->i", matrix.astype(np.float64), matrix.astype(np.float64))
        sq32 = sq64.astype(np.float32)
        aug = np.ascontiguousarray(np.vstack([-2.0 * matrix.T, sq32[None, :]]), dtype=np.float32)
        return cls(
            aug,
            np.arange(matrix.shape[0]),
            norm_max=float(np.sqrt(sq64.max())),
            sq_error=float(np.abs(sq32.astype(np.float64) - sq64).max()),
        )

    @property
    def width(self) -> int:
        """Number of columns (words)."""
        return int(self.augmented.shape[1])

    def columns(self, words: np.ndarray) -> Float32Screen:
        """The screen over ``words`` only (indices into its columns), in that order."""
        aug = np.ascontiguousarray(self.augmented[:, words])
        return Float32Screen(aug, self.column_words[words], self.norm_max, self.sq_error)

    def bound(self, points: np.ndarray) -> np.ndarray:
        """``B_p`` per point: the stored squared norm's rounding + float32 accumulation."""
        p64 = points.astype(np.float64)
        pn = np.sqrt(np.einsum("ij,ij->i", p64, p64))
        terms = self.norm_max**2 * (1.0 + U32) + 2.0 * pn * self.norm_max
        return self.sq_error + gamma(self.augmented.shape[0] + 1, U32) * terms + TINY

    def search(
        self,
        points: np.ndarray,
        k: int,
        matrix: np.ndarray,
        out: np.ndarray,
        width: int | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Exact ``k`` nearest of a block of float32 ``points`` over the first ``width`` columns.

        ``out`` is a reusable float32 buffer of at least ``len(points) × width`` numbers.
        """
        w = self.width if width is None else width
        b = len(points)
        aug = np.empty((b, points.shape[1] + 1), dtype=np.float32)
        aug[:, :-1] = points
        aug[:, -1] = 1.0
        scores = np.matmul(aug, self.augmented[:, :w], out=out[: b * w].reshape(b, w))
        every = np.arange(b)
        top = min(k + 1, w)
        idx, val = _smallest_columns(scores, top)
        t64 = val[:, k - 1].astype(np.float64) + 2.0 * self.bound(points)
        t32 = t64.astype(np.float32)
        limit = np.where(t32 < t64, np.nextafter(t32, np.float32(np.inf)), t32)
        settled = val[:, top - 1] > limit if top > k else np.ones(b, dtype=bool)
        rows = np.repeat(every[settled], k)
        cols = idx[settled, :k].ravel()
        again = np.flatnonzero(~settled)
        if len(again):
            r, c = np.nonzero(scores[again] <= limit[again, None])
            order = np.argsort(np.concatenate([rows, again[r]]), kind="stable")
            rows = np.concatenate([rows, again[r]])[order]
            cols = np.concatenate([cols, c])[order]
        return rank_candidates(rows, self.column_words[cols], k, matrix, points)
