"""The bfloat16 screen of the exact nearest-word search (PyTorch, extra ``fast``), and its use.

A bfloat16 product with float32 accumulation runs at about twice the float32
rate on CPUs with AVX512-BF16 or AMX; its rounding-error bound is coarser, so
a few candidates per point are then ranked in float64 exactly as in
:mod:`dpaudit.analysis.nearest_search`, and the words drawn are the same as
with the float32 screen.  The environment variable
``DPAUDIT_NEAREST_SCREEN`` (``auto``, ``float32``, ``bfloat16``) chooses.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.analysis.nearest_search import (
    GROUPS,
    TINY,
    U16,
    U32,
    certified_k_nearest,
    gamma,
    padded_width,
)
from dpaudit.errors import InvalidArgumentError

#: Environment variable choosing the screen: ``auto`` (default), ``float32`` or ``bfloat16``.
SCREEN_ENV = "DPAUDIT_NEAREST_SCREEN"
#: Smallest vocabulary for which ``auto`` uses the bfloat16 screen (below it, float32 is as fast).
BF16_MIN_WORDS = 4096
#: Most neighbours per point the bfloat16 screen is used for (more: float32).
BF16_MAX_K = 8
_PAD_BF16 = 1e30  # score of a padding column in the bfloat16 screen: never a candidate


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
    on top.  Candidate limits use the maxima of these terms: over the 1 % of
    words with the largest norms, placed in the first ``split`` positions of
    every column group (:func:`_column_layout`), and over the others for the
    other positions; candidates are then filtered with their own ``B_v``.
    """

    matrix: np.ndarray
    mean: np.ndarray
    augmented: Any  # torch.Tensor (d + 2, width), bfloat16
    column_words: np.ndarray
    groups: int
    split: int  # positions below it hold the words of largest norm (see _column_layout)
    word_bounds: np.ndarray  # (5, V): ‖e_v‖, ‖e_v − ê_v‖, δ_v, ‖ê_v‖, ‖ê_v‖² (centred)
    class_max: np.ndarray  # (2, 5): word_bounds' maxima over the other positions, over all
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
        words_aug = np.empty((d + 2, v), dtype=np.float64)
        words_aug[:d] = -2.0 * hat.T  # exact: doubling a bfloat16 value
        words_aug[d] = sq_hat
        words_aug[d + 1] = 1.0
        cw, groups, split, wide = _column_layout(sq)
        aug = np.zeros((d + 2, len(cw)), dtype=np.float64)
        aug[d] = _PAD_BF16
        aug[d + 1] = 1.0
        real = cw >= 0
        aug[:, real] = words_aug[:, cw[real]]
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
        narrow = np.setdiff1d(np.arange(v), wide)
        class_max = np.stack(
            [word_bounds[:, narrow].max(axis=1), word_bounds.max(axis=1)]
        )  # (regular positions, all words)
        return cls(
            matrix,
            mean,
            _to_bf16(torch, aug).contiguous(),
            cw,
            groups,
            split,
            word_bounds,
            class_max,
        )

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

    def bounds(self, per_point: np.ndarray, words: np.ndarray | None = None) -> np.ndarray:
        """``B_v`` for each point and word: a column per word (all words if ``None``).

        With ``words``, ``per_point`` has one column per word (the word's point).
        """
        if words is None:
            return self._bound((x[:, None] for x in per_point), self.word_bounds)
        return self._bound(per_point, self.word_bounds[:, words])

    def _bound(self, per_point: Any, word_terms: np.ndarray) -> np.ndarray:
        rn, qn, c = per_point
        norm, rounding, sq_rounding, hat_norm, hat_sq = word_terms
        g = gamma(self.matrix.shape[1] + 2, U32)
        return (
            sq_rounding
            + 2.0 * (rn * norm + qn * rounding)
            + g * (c + hat_sq + 2.0 * qn * hat_norm)
            + TINY
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
        narrow = self._bound(per_point, self.class_max[0])  # words outside the first positions
        wide = self._bound(per_point, self.class_max[1])  # any word

        def values(k16: np.ndarray) -> np.ndarray:
            x = torch.from_numpy(np.ascontiguousarray(k16, dtype=np.int16))
            return x.view(torch.bfloat16).double().numpy()

        def as_key(t: np.ndarray) -> np.ndarray:
            return _to_bf16(torch, t * (1.0 + 2.0**-7)).view(torch.int16).numpy()  # rounded up

        def limits(kth: np.ndarray, kth_wide: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            # ≥ the k-th smallest true score: the k words behind the k smallest minima
            upper = np.maximum(values(kth), 0.0) / (1.0 - U16) + np.where(kth_wide, wide, narrow)
            grow = (1.0 - U16) / (1.0 - 2.0 * U16)  # largest s̃ whose true score may be below
            return as_key((upper + narrow) * grow), as_key((upper + wide) * grow)

        def refine(
            rows: np.ndarray, words: np.ndarray, k16: np.ndarray
        ) -> tuple[np.ndarray, np.ndarray]:
            s = values(k16)
            slack = U16 * np.abs(s) / (1.0 - U16) + self.bounds(per_point[:, rows], words)
            # + float64's own grain (≈ 1e-16·D), so a word nearer only in float64 stays in.
            slack += 1e-12 * (1.0 + np.abs(s))
            return s - slack, s + slack

        return certified_k_nearest(
            keys, limits, k, self.groups, self.column_words, self.matrix, points, refine, self.split
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
        real = np.flatnonzero(self.column_words >= 0)
        order = real[np.argsort(self.column_words[real])]  # the column of each word
        got = np.vstack(
            [
                self._scores(torch, qb[a:b]).double().numpy()[:, order]
                for a, b in ((0, 1), (1, 8), (8, 48), (48, 256))
            ]
        )
        centred = pts.astype(np.float64) - self.mean
        cv = self.matrix.astype(np.float64) - self.mean
        # t_v = c_p + ‖e_v − μ‖² − 2(p − μ)·(e_v − μ), float64 (errors ≪ the bound)
        true = exact[:, d + 1, None] + np.einsum("ij,ij->i", cv, cv)[None, :] - 2.0 * centred @ cv.T
        slack = U16 * np.abs(got) / (1.0 - U16) + self.bounds(per_point)
        return bool(np.all(np.abs(got - true) <= slack))


def _column_layout(sq_norms: np.ndarray) -> tuple[np.ndarray, int, int, np.ndarray]:
    """Columns of the bfloat16 screen: column → word (−1: padding), groups, split, wide words.

    With ``g`` groups of ``W`` positions, column ``c`` is position ``c mod W`` of
    group ``c // W``.  The 1 % of words with the largest norms (whose error
    bounds are the largest, up to twice the others' on GloVe), the *wide*
    words, fill the first ``split`` positions of every group, so the other
    positions get a limit from the other words' bounds; the rest follow in
    word order, padding last.
    """
    v = len(sq_norms)
    if v < 64 * GROUPS:  # grouping pays on large vocabularies only
        return np.arange(v), 1, 0, np.empty(0, dtype=np.int64)
    width = padded_width(v, GROUPS)
    per_group = width // GROUPS
    split = -(-v // (100 * GROUPS))
    by_norm = np.argsort(-sq_norms, kind="stable")
    wide = by_norm[: GROUPS * split]
    positions = np.arange(width) % per_group
    cw = np.full(width, -1, dtype=np.int64)
    cw[positions < split] = wide
    rest = np.flatnonzero(positions >= split)
    others = np.sort(by_norm[GROUPS * split :])
    cw[rest[: len(others)]] = others
    return cw, GROUPS, split, wide


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
