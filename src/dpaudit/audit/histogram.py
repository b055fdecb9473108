"""The ``histogram`` attack family: the empirical log-ratio of whole (discrete) output rows.

When a mechanism's outputs take few distinct values — SVT's answer vectors in
``{-1, 0, 1}^k``, ReportNoisyMax's index, a truncated geometric count — the
most powerful sets are unions of single outputs ranked by
``Pr[M(x) = y] / Pr[M(x') = y]`` (Neyman–Pearson on a finite space).  A
classifier on the raw numbers only reaches the sets its functional form can
draw (a linear score orders SVT's answers by their sum).  This family
estimates the ratio row by row from the training sample,

    s(y) = ln((c_x(y) + ½)/(n_x + ½)) − ln((c_x'(y) + ½)/(n_x' + ½)),

``c`` the training counts (the ½ keeps rows seen under one input finite);
rows never seen in training score 0.  It is trained only when the training
outputs look discrete (:func:`looks_discrete`: at most
:data:`MAX_ROWS` distinct rows, each seen :data:`MIN_SEEN` times on average).
Threshold sets of ``s`` are then ranked, validated and re-estimated like every
other family's, so choosing it costs the final bound nothing.

Rows are identified by a 64-bit hash of their float64 bit patterns (vectorised;
a collision merely merges two rows into one score, which changes the attack,
never its validity).  Imports nothing above ``audit/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.audit.scores import TrainingData

#: Most distinct training rows for the family to be tried.
MAX_ROWS = 4096
#: Least average number of training outputs per distinct row.
MIN_SEEN = 16
#: Odd 64-bit multipliers, one per output coordinate (fixed: the hash is part of the attack).
_MULTIPLIERS = np.random.default_rng(0x5EED).integers(1, 2**63, size=4096, dtype=np.uint64) | 1


def row_keys(outputs: np.ndarray) -> np.ndarray:
    """One uint64 key per output row (equal rows, equal keys; −0.0 and 0.0 equal)."""
    y = np.asarray(outputs)
    y = np.array(y.reshape(len(y), -1), dtype=np.float64, copy=True)
    y += 0.0  # −0.0 → 0.0
    bits = y.view(np.uint64)
    d = bits.shape[1]
    mult = np.resize(_MULTIPLIERS, d) if d > len(_MULTIPLIERS) else _MULTIPLIERS[:d]
    with np.errstate(over="ignore"):
        keys = (bits * mult).sum(axis=1, dtype=np.uint64)
        keys ^= keys >> np.uint64(31)
        keys *= np.uint64(0x9E3779B97F4A7C15)
        keys ^= keys >> np.uint64(29)
    return keys


def _key_counts(data: TrainingData) -> tuple[np.ndarray, np.ndarray]:
    keys, inverse = np.unique(row_keys(data.rows), return_inverse=True)
    counts = np.bincount(inverse.ravel(), weights=data.counts, minlength=len(keys))
    return keys, counts


def _is_discrete(n_keys: int, total: float) -> bool:
    return n_keys <= MAX_ROWS and total >= MIN_SEEN * n_keys


def looks_discrete(data_x: TrainingData, data_x_prime: TrainingData) -> bool:
    """Whether both inputs' training outputs hold few distinct rows, each seen often."""
    keys = np.unique(np.concatenate([_key_counts(data_x)[0], _key_counts(data_x_prime)[0]]))
    return _is_discrete(len(keys), float(data_x.counts.sum() + data_x_prime.counts.sum()))


@dataclass(frozen=True)
class HistogramScore:
    """Frozen row → empirical log-ratio table (sorted keys, float32 scores)."""

    keys: np.ndarray
    values: np.ndarray

    family = "histogram"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        k = row_keys(outputs)
        at = np.minimum(np.searchsorted(self.keys, k), len(self.keys) - 1)
        return np.where(self.keys[at] == k, self.values[at], np.float32(0.0)).astype(np.float32)

    def describe(self) -> str:
        """Formula of the score."""
        return (
            "empirical ln Pr[M(a) = y] − ln Pr[M(b) = y] of the whole output row y from "
            "training counts (+½ each; unseen rows 0); a, b = score_inputs"
        )

    def parameters(self) -> dict[str, Any]:
        """The frozen table size (the table itself is in the pickled score)."""
        return {"family": self.family, "rows": len(self.keys)}


def train_histogram(
    data_x: TrainingData, data_x_prime: TrainingData, *, only_if_discrete: bool = False
) -> HistogramScore | None:
    """The empirical log-ratio table of ``M(x)`` against ``M(x')`` from their training outputs.

    With ``only_if_discrete``, ``None`` where :func:`looks_discrete` would say no (the
    rows are hashed once for both decisions).
    """
    kx, cx = _key_counts(data_x)
    kp, cp = _key_counts(data_x_prime)
    keys = np.union1d(kx, kp)
    if only_if_discrete and not _is_discrete(len(keys), float(cx.sum() + cp.sum())):
        return None
    ax = np.zeros(len(keys))
    ap = np.zeros(len(keys))
    ax[np.searchsorted(keys, kx)] = cx
    ap[np.searchsorted(keys, kp)] = cp
    nx, np_ = float(cx.sum()), float(cp.sum())
    s = np.log((ax + 0.5) / (nx + 0.5)) - np.log((ap + 0.5) / (np_ + 0.5))
    return HistogramScore(keys, np.round(s, 6).astype(np.float32))
