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
* :class:`BFloat16Screen` — PyTorch (extra ``fast``) bfloat16 inputs with
  float32 accumulation (AVX512-BF16/AMX hardware): about twice the float32
  rate.  The bound is coarser (a few candidates per point at small ε), and it
  rests on an assumption about the library's kernel — products accumulated in
  float32 or better — that :meth:`BFloat16Screen.self_check` tests on real
  products before the screen is used.

**Candidates without per-word Python** (bfloat16 screen, whose bound leaves
a few per point: :func:`certified_k_nearest`).  The score columns are split in
``g`` interleaved groups (column ``c`` in group ``c // W``, ``W = width/g``); one
vectorised pass takes the minimum over groups of each of the ``W`` positions,
the ``k``-th smallest of those minima bounds the ``k``-th smallest score from
above (they are ``k`` distinct words), and only the positions whose minimum
passes the threshold are expanded to their ``g`` words.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from dpaudit.errors import InvalidArgumentError

#: Interleaved column groups of a screen (the candidate pass scans width/16 minima).
GROUPS = 16
#: Environment variable choosing the screen: ``auto`` (default), ``float32`` or ``bfloat16``.
SCREEN_ENV = "DPAUDIT_NEAREST_SCREEN"
#: Smallest vocabulary for which ``auto`` uses the bfloat16 screen (below it, float32 is as fast).
BF16_MIN_WORDS = 4096
#: Most neighbours per point the bfloat16 screen is used for (more: float32).
BF16_MAX_K = 8
_U32 = 2.0**-24  # unit roundoff of float32
_U16 = 2.0**-8  # unit roundoff of bfloat16 (8 significant bits)
_PAD_BF16 = 1e30  # score of a padding column in the bfloat16 screen: never a candidate
_TINY = 1e-30  # covers flushed subnormal products (far below any other term)


def _gamma(n: int, u: float) -> float:
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
    limits: Callable[[np.ndarray], np.ndarray],
    k: int,
    groups: int,
    column_words: np.ndarray,
    matrix: np.ndarray,
    points: np.ndarray,
    refine: Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
    | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The exact ``k`` nearest words of each point from one screened score block.

    ``scores`` (points × width, width a multiple of ``groups``) are a screen's
    scores (float32 values or bfloat16 sort keys); ``limits(kth)`` maps the
    ``k``-th smallest group minimum of each row to the row's candidate limit
    (same dtype); ``column_words`` maps columns to word indices (padding
    columns must score above any limit).  ``refine(rows, words, scores)``, if
    given, returns per-candidate lower and upper bounds on the true score
    (with per-word error bounds, tighter than the limit's): a candidate whose
    lower bound exceeds the ``k``-th smallest upper bound of its row is
    dropped.  Returns ``(indices, distances)``, shape ``(n, k)``, nearest
    first, distances in float64.
    """
    n, width = scores.shape
    per_group = width // groups
    if groups == 1:
        minima = scores
    else:
        minima = scores.reshape(n, groups, per_group).min(axis=1)
    limit = limits(kth_smallest_of_rows(minima, k))
    flat = np.flatnonzero(minima <= limit[:, None])
    rows, pos = np.divmod(flat, per_group)
    if groups > 1:  # expand each passing position to its words, as flat indices
        flat = ((rows * width + pos)[:, None] + per_group * np.arange(groups)).ravel()
        flat = flat[scores.reshape(-1)[flat] <= np.repeat(limit[rows], groups)]
        rows, cols = np.divmod(flat, width)
    else:
        cols = pos
    words = column_words[cols]
    if refine is not None:
        lower, upper = refine(rows, words, scores[rows, cols])
        keep = lower <= _kth_per_row(rows, upper, n, k)[rows]
        rows, words = rows[keep], words[keep]
    return rank_candidates(rows, words, k, matrix, points)


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
    if k == 1:
        return values.min(axis=1)
    if k > 4:
        return np.partition(values, k - 1, axis=1)[:, k - 1]
    every = np.arange(len(values))
    taken, saved = [], []
    top = np.inf if values.dtype.kind == "f" else np.iinfo(values.dtype).max
    for _ in range(k - 1):  # argmin passes beat a partition for small k
        i = np.argmin(values, axis=1)
        taken.append(i)
        saved.append(values[every, i].copy())
        values[every, i] = top
    kth = values.min(axis=1)
    for i, v in zip(reversed(taken), reversed(saved), strict=True):
        values[every, i] = v
    return kth


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
        terms = self.norm_max**2 * (1.0 + _U32) + 2.0 * pn * self.norm_max
        return self.sq_error + _gamma(self.augmented.shape[0] + 1, _U32) * terms + _TINY

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
        idx = np.empty((b, top), dtype=np.int64)
        val = np.empty((b, top), dtype=np.float32)
        for j in range(top):  # the top smallest, in order (ties: lower column first)
            idx[:, j] = np.argmin(scores, axis=1)
            val[:, j] = scores[every, idx[:, j]]
            scores[every, idx[:, j]] = np.inf
        scores[every[:, None], idx] = val  # restored for the rows searched again
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


@dataclass(frozen=True, eq=False)
class BFloat16Screen:
    """bfloat16 scores ``c_p + ‖ê_v‖² − 2q̂·ê_v`` (PyTorch) over a whole vocabulary, centred.

    Coordinates are centred at the vocabulary mean ``μ`` (distances do not
    change; norms, hence rounding errors, shrink).  ``ê_v = bf16(e_v − μ)``,
    ``q̂ = bf16(p − μ)``, ``c_p = bf16-rounded-up ‖p − μ‖²`` so that every true
    score ``t_v = c_p − ‖p − μ‖² + D_v`` is ≥ 0 and bfloat16 bit patterns,
    read as int16, sort like the values (negative results of rounding sort
    first, and are always candidates).  Error bound per point, from
    ``p·e − q̂·ê = (p − q̂)·e + q̂·(e − ê)`` and Cauchy–Schwarz, for word ``v``:
    ``B_v = δ_v + 2(‖p − q̂‖·‖e_v‖ + ‖q̂‖·‖e_v − ê_v‖)
    + γ_{d+2}(c_p + ‖ê_v‖² + 2‖q̂‖·‖ê_v‖)`` (``δ_v`` the rounding of ``‖e_v‖²``,
    norms centred), and the output's own rounding ``|s̃ − fl32| ≤ u|s̃|/(1 − u)``
    on top.  The candidate limit uses the maximum over words; candidates are
    then filtered with their own ``B_v`` (a few words with large norms would
    otherwise double the limit for all).
    """

    matrix: np.ndarray
    mean: np.ndarray
    augmented: Any  # torch.Tensor (d + 2, width), bfloat16
    column_words: np.ndarray
    groups: int
    word_bounds: np.ndarray  # (5, V): ‖e_v‖, ‖e_v − ê_v‖, δ_v, ‖ê_v‖, ‖ê_v‖² (centred)
    _buffer: list[Any] = field(default_factory=list, repr=False)  # reused score block

    @classmethod
    def build(cls, matrix: np.ndarray) -> BFloat16Screen:
        """The screen over every word of ``matrix`` (float32, ``(V, d)``)."""
        with _one_torch_thread() as torch:
            return cls._build(torch, matrix)

    @classmethod
    def _build(cls, torch: Any, matrix: np.ndarray) -> BFloat16Screen:
        m64 = matrix.astype(np.float64)
        mean = m64.mean(axis=0)
        centred = m64 - mean
        hat = _to_bf16(torch, centred).double().numpy()
        sq = np.einsum("ij,ij->i", centred, centred)
        sq_hat = _to_bf16(torch, sq).double().numpy()
        v, d = matrix.shape
        groups = GROUPS if v >= 64 * GROUPS else 1  # grouping pays on large vocabularies only
        width = padded_width(v, groups)
        aug = np.zeros((d + 2, width), dtype=np.float64)
        aug[:d, :v] = -2.0 * hat.T  # exact: doubling a bfloat16 value
        aug[d, :v] = sq_hat
        aug[d, v:] = _PAD_BF16
        aug[d + 1, :] = 1.0
        cw = np.full(width, -1, dtype=np.int64)
        cw[:v] = np.arange(v)
        hat_sq = np.einsum("ij,ij->i", hat, hat)
        word_bounds = np.stack(
            [
                np.sqrt(sq),
                np.sqrt(np.einsum("ij,ij->i", centred - hat, centred - hat)),
                np.abs(sq_hat - sq),
                np.sqrt(hat_sq),
                sq_hat,
            ]
        )
        return cls(matrix, mean, _to_bf16(torch, aug).contiguous(), cw, groups, word_bounds)

    @property
    def width(self) -> int:
        """Columns, padding included."""
        return int(self.augmented.shape[1])

    def _query(self, torch: Any, points: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray]:
        """bfloat16 query rows ``[q̂, 1, c_p]`` and, per point, ``(‖p − q̂‖, ‖q̂‖, c_p)``."""
        centred = points.astype(np.float64) - self.mean
        d = centred.shape[1]
        q = np.empty((len(points), d + 2), dtype=np.float64)
        q[:, :d] = centred
        q[:, d] = 1.0
        # Rounded up with room for both roundings (float64 → float32 → bfloat16, each ≤ 2^-8).
        q[:, d + 1] = np.einsum("ij,ij->i", centred, centred) * (1.0 + 2.0**-7)
        qb = _to_bf16(torch, q)
        exact = qb.double().numpy()
        r = centred - exact[:, :d]
        per_point = np.stack(
            [
                np.sqrt(np.einsum("ij,ij->i", r, r)),
                np.sqrt(np.einsum("ij,ij->i", exact[:, :d], exact[:, :d])),
                exact[:, d + 1],
            ]
        )
        return qb, exact, per_point

    @cached_property
    def _word_bound_max(self) -> np.ndarray:
        return self.word_bounds.max(axis=1)

    def bounds(self, per_point: np.ndarray, words: np.ndarray | None = None) -> np.ndarray:
        """``B_v`` for each point and word: a column per word (all words if ``None``).

        With ``words``, ``per_point`` has one column per word (the word's point).
        """
        if words is None:
            return self._bound((x[:, None] for x in per_point), self.word_bounds)
        return self._bound(per_point, self.word_bounds[:, words])

    def _max_bound(self, per_point: np.ndarray) -> np.ndarray:
        """A bound on ``max_v B_v`` per point, from the maxima of the word terms."""
        return self._bound(per_point, self._word_bound_max)

    def _bound(self, per_point: Any, word_terms: np.ndarray) -> np.ndarray:
        rn, qn, c = per_point
        norm, rounding, sq_rounding, hat_norm, hat_sq = word_terms
        gamma = _gamma(self.matrix.shape[1] + 2, _U32)
        return (
            sq_rounding
            + 2.0 * (rn * norm + qn * rounding)
            + gamma * (c + hat_sq + 2.0 * qn * hat_norm)
            + _TINY
        )

    def _scores(self, torch: Any, qb: Any) -> Any:
        b = int(qb.shape[0])
        if not self._buffer or self._buffer[0].shape[0] < b:
            self._buffer[:] = [torch.empty((b, self.width), dtype=torch.bfloat16)]
        out = self._buffer[0][:b]
        torch.mm(qb, self.augmented, out=out)
        return out

    def search(self, points: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact ``k`` nearest words of a block of float32 ``points``."""
        with _one_torch_thread() as torch:
            return self._search(torch, points, k)

    def _search(self, torch: Any, points: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        qb, _, per_point = self._query(torch, points)
        keys = self._scores(torch, qb).view(torch.int16).numpy()
        bound = self._max_bound(per_point)

        def values(k16: np.ndarray) -> np.ndarray:
            x = torch.from_numpy(np.ascontiguousarray(k16, dtype=np.int16))
            return x.view(torch.bfloat16).double().numpy()

        def limits(kth: np.ndarray) -> np.ndarray:
            upper = np.maximum(values(kth), 0.0) / (1.0 - _U16) + bound  # ≥ k-th true score
            t = (upper + bound) * (1.0 - _U16) / (1.0 - 2.0 * _U16)  # largest s̃ that may be below
            tb = _to_bf16(torch, t * (1.0 + 2.0**-7))  # rounded up
            return tb.view(torch.int16).numpy()

        def refine(
            rows: np.ndarray, words: np.ndarray, k16: np.ndarray
        ) -> tuple[np.ndarray, np.ndarray]:
            s = values(k16)
            slack = _U16 * np.abs(s) / (1.0 - _U16) + self.bounds(per_point[:, rows], words)
            # + float64's own grain (≈ 1e-16·D), so a word nearer only in float64 stays in.
            slack += 1e-12 * (1.0 + np.abs(s))
            return s - slack, s + slack

        return certified_k_nearest(
            keys, limits, k, self.groups, self.column_words, self.matrix, points, refine
        )

    def self_check(self, seed: int = 0) -> bool:
        """Whether the library's bfloat16 product obeys the bound on 256 test points.

        The points are vocabulary words plus Gaussian noise of scale 0 to 20
        times the largest norm, so near, middle and far points are all tried,
        in products of 1 to 208 rows; every score of every word is compared
        with its float64 value.
        """
        with _one_torch_thread() as torch:
            return self._self_check(torch, seed)

    def _self_check(self, torch: Any, seed: int) -> bool:
        rng = np.random.default_rng(seed)
        v, d = self.matrix.shape
        scale = self.word_bounds[0].max() * np.repeat([0.0, 0.05, 0.3, 1.0, 3.0, 20.0], 43)[:256]
        base = self.matrix[rng.integers(0, v, size=256)].astype(np.float64)
        pts = (base + scale[:, None] * rng.normal(size=(256, d)) / np.sqrt(d)).astype(np.float32)
        qb, exact, per_point = self._query(torch, pts)
        # Blocks of 1, 7, 40 and 208 rows: a library may pick another kernel for few rows
        # (a search's last block has any size up to the block size).
        got = np.vstack(
            [
                self._scores(torch, qb[a:b])[:, :v].double().numpy()
                for a, b in ((0, 1), (1, 8), (8, 48), (48, 256))
            ]
        )
        centred = pts.astype(np.float64) - self.mean
        cv = self.matrix.astype(np.float64) - self.mean
        # t_v = c_p + ‖e_v − μ‖² − 2(p − μ)·(e_v − μ), float64 (errors ≪ the bound)
        true = exact[:, d + 1, None] + np.einsum("ij,ij->i", cv, cv)[None, :] - 2.0 * centred @ cv.T
        slack = _U16 * np.abs(got) / (1.0 - _U16) + self.bounds(per_point)
        return bool(np.all(np.abs(got - true) <= slack))


def _to_bf16(torch: Any, values: np.ndarray) -> Any:
    """float64 → float32 → bfloat16 tensor (round to nearest even at each step)."""
    return torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32)).to(torch.bfloat16)


def _torch() -> Any:
    import torch

    return torch


@contextmanager
def _one_torch_thread() -> Iterator[Any]:
    """PyTorch limited to one thread inside (restored after), and the module.

    One thread is the per-core design of the audit (parallelism is across
    worker processes), and it keeps the process fork-safe: GNU OpenMP, behind
    PyTorch's threads, hangs a child forked after its thread pool started, and
    the audit's workers are forked.
    """
    torch = _torch()
    previous = torch.get_num_threads()
    if previous != 1:
        torch.set_num_threads(1)
    try:
        yield torch
    finally:
        if previous != 1:
            torch.set_num_threads(previous)


def screen_choice() -> str:
    """The screen the environment asks for: ``auto``, ``float32`` or ``bfloat16``."""
    choice = os.environ.get(SCREEN_ENV, "auto").strip().lower() or "auto"
    if choice not in ("auto", "float32", "bfloat16"):
        raise InvalidArgumentError(SCREEN_ENV, choice, "auto, float32 or bfloat16")
    return choice


@functools.lru_cache(maxsize=1)
def bfloat16_hardware() -> bool:
    """Whether PyTorch is installed and the CPU multiplies bfloat16 natively (AVX512-BF16, AMX)."""
    try:
        torch = _torch()
    except (ImportError, OSError):  # absent, or a build whose libraries are missing
        return False
    cpu = getattr(torch, "cpu", None)
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(cpu, name, lambda: False)()) for name in checks)


def bfloat16_wanted(words: int, k: int) -> bool:
    """Whether a search over ``words`` words for ``k`` neighbours should use the bfloat16 screen.

    ``auto`` uses it for vocabularies of at least :data:`BF16_MIN_WORDS` words on
    bfloat16 hardware; ``bfloat16`` asks for it whatever the size (and fails
    without PyTorch); ``float32`` never.
    """
    choice = screen_choice()
    if choice == "float32" or k > BF16_MAX_K:
        return False
    if choice == "auto":
        return words >= BF16_MIN_WORDS and bfloat16_hardware()
    try:
        _torch()
    except (ImportError, OSError):
        raise InvalidArgumentError(
            SCREEN_ENV, choice, "float32 or auto without PyTorch (pip install 'dpaudit[fast]')"
        ) from None
    return True


def checked_bfloat16_screen(matrix: np.ndarray) -> BFloat16Screen | None:
    """A :class:`BFloat16Screen` that passed its :meth:`~BFloat16Screen.self_check`, else ``None``.

    A failed check is said in a warning; the caller then runs the float32 screen.
    """
    screen = BFloat16Screen.build(matrix)
    if screen.self_check():
        return screen
    warnings.warn(
        "the bfloat16 nearest-word screen exceeded its rounding bound on test points; "
        "using the float32 screen",
        RuntimeWarning,
        stacklevel=2,
    )
    return None
