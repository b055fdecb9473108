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
Threshold sets of ``s`` are then ranked and re-estimated like every
other family's, so choosing it costs the final bound nothing.

**Projection on the columns that differ.**  Many coordinates of few values each
(RAPPOR's 20 report bits: about 2^20 rows) are not discrete as whole rows,
although the ratio often depends on a few columns only (the bits where the two
inputs' Bloom filters differ; the others are identically distributed and
independent of them).  When whole rows fail the test above, the table is built
on a projection instead: every column of at most :data:`MAX_COLUMN_VALUES`
values whose two training distributions differ (chi-square homogeneity test,
p < :data:`COLUMN_P_VALUE` after Bonferroni over the columns) is a candidate;
the strongest go in, one by one, while the projected rows stay discrete.  The
columns are chosen on training outputs only, so the projection is part of the
attack and costs the final bound nothing; a column left out only makes the
attack weaker.

Rows are identified by a 64-bit hash of their float64 bit patterns (vectorised;
a collision merely merges two rows into one score, which changes the attack,
never its validity).  Imports nothing above ``auditors/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.auditors.blackbox.scores import TrainingData

#: Most distinct training rows for the family to be tried.
MAX_ROWS = 4096
#: Least average number of training outputs per distinct row.
MIN_SEEN = 16
#: Most distinct training values of a column for it to enter a projection.
MAX_COLUMN_VALUES = 16
#: Family-wise level of the per-column homogeneity tests that choose a projection.
COLUMN_P_VALUE = 1e-3
#: Most output columns examined for a projection (one test per column).
MAX_PROJECTED_COLUMNS = 4096
#: Rows looked at first to rule out a continuous column / continuous whole rows cheaply.
_PEEK_ROWS = 4096
_PEEK_ROWS_WHOLE = 65536
#: 64-bit offsets, one per output coordinate (fixed: the hash is part of the attack).
_OFFSETS = np.random.default_rng(0x5EED).integers(1, 2**63, size=4096, dtype=np.uint64)


def row_keys(outputs: np.ndarray) -> np.ndarray:
    """One uint64 key per output row (equal rows, equal keys; −0.0 and 0.0 equal).

    Every coordinate's float64 bit pattern is mixed on its own (SplitMix64's
    finaliser, offset by a per-column constant) before the columns are summed:
    small integers stored as floats differ only in their top 12 bits, and a
    plain multiply-and-sum of such patterns keeps only those 12 bits (RAPPOR's
    123 000 distinct 20-bit rows fell on 4 096 keys).
    """
    y = np.asarray(outputs)
    y = np.array(y.reshape(len(y), -1), dtype=np.float64, copy=True)
    y += 0.0  # −0.0 → 0.0
    z = y.view(np.uint64)
    d = z.shape[1]
    offsets = np.resize(_OFFSETS, d) if d > len(_OFFSETS) else _OFFSETS[:d]
    with np.errstate(over="ignore"):
        z += offsets
        z ^= z >> np.uint64(30)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(27)
        z *= np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
        keys = z.sum(axis=1, dtype=np.uint64)
    return keys


def _flat(rows: np.ndarray) -> np.ndarray:
    y = np.asarray(rows)
    return y.reshape(len(y), -1)


def _key_counts(
    data: TrainingData, columns: tuple[int, ...] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    rows = data.rows if columns is None else _flat(data.rows)[:, list(columns)]
    keys, inverse = np.unique(row_keys(rows), return_inverse=True)
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
    #: Output columns the rows are projected on (``None``: whole rows).
    columns: tuple[int, ...] | None = None

    family = "histogram"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        if self.columns is not None:
            outputs = _flat(outputs)[:, list(self.columns)]
        k = row_keys(outputs)
        at = np.minimum(np.searchsorted(self.keys, k), len(self.keys) - 1)
        return np.where(self.keys[at] == k, self.values[at], np.float32(0.0)).astype(np.float32)

    def describe(self) -> str:
        """Formula of the score."""
        what = (
            "the whole output row y"
            if self.columns is None
            else f"y projected on output columns {list(self.columns)} (flattened indices)"
        )
        return (
            f"empirical ln Pr[M(a) = y] − ln Pr[M(b) = y] of {what} from "
            "training counts (+½ each; unseen rows 0); a, b = score_inputs"
        )

    def parameters(self) -> dict[str, Any]:
        """The frozen table size and projection (the table itself is in the pickled score)."""
        out: dict[str, Any] = {"family": self.family, "rows": len(self.keys)}
        if self.columns is not None:
            out["columns"] = list(self.columns)
        return out


def differing_columns(data_x: TrainingData, data_x_prime: TrainingData) -> list[int]:
    """Discrete output columns whose distributions under ``x`` and ``x'`` differ, strongest first.

    A column qualifies when its training values number at most
    :data:`MAX_COLUMN_VALUES` and a chi-square homogeneity test of its value
    counts under the two inputs gives p < :data:`COLUMN_P_VALUE` divided by the
    number of columns tested.  Returns flattened column indices.
    """
    from scipy import stats  # here, not at import: the CLI starts without scipy

    ax, ap = _flat(data_x.rows), _flat(data_x_prime.rows)
    if ax.shape[1] > MAX_PROJECTED_COLUMNS:
        return []
    tested: list[tuple[float, int]] = []
    n_tested = 0
    for j in range(ax.shape[1]):
        # A look at the first rows rules out continuous columns without sorting them all.
        if len(np.unique(ax[:_PEEK_ROWS, j])) > MAX_COLUMN_VALUES:
            continue
        values, inverse = np.unique(np.concatenate([ax[:, j], ap[:, j]]), return_inverse=True)
        if len(values) > MAX_COLUMN_VALUES:
            continue
        n_tested += 1
        if len(values) < 2:
            continue
        inverse = inverse.ravel()
        table = np.stack(
            [
                np.bincount(inverse[: len(ax)], weights=data_x.counts, minlength=len(values)),
                np.bincount(inverse[len(ax) :], weights=data_x_prime.counts, minlength=len(values)),
            ]
        )
        table = table[:, table.sum(axis=0) > 0]
        statistic, p_value, *_ = stats.chi2_contingency(table, correction=False)
        tested.append((float(p_value), j) if np.isfinite(statistic) else (1.0, j))
    level = COLUMN_P_VALUE / max(n_tested, 1)
    # Strongest first: the smallest p-value (ties: the lower column).
    return [j for p, j in sorted(tested) if p < level]


def _table(
    data_x: TrainingData, data_x_prime: TrainingData, columns: tuple[int, ...] | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted row keys and both inputs' training counts per key."""
    kx, cx = _key_counts(data_x, columns)
    kp, cp = _key_counts(data_x_prime, columns)
    keys = np.union1d(kx, kp)
    ax = np.zeros(len(keys))
    ap = np.zeros(len(keys))
    ax[np.searchsorted(keys, kx)] = cx
    ap[np.searchsorted(keys, kp)] = cp
    return keys, ax, ap


_Table = tuple[np.ndarray, np.ndarray, np.ndarray]


def _projection(
    data_x: TrainingData, data_x_prime: TrainingData
) -> tuple[tuple[int, ...], _Table] | None:
    """The most differing columns whose projected rows stay discrete, with their table."""
    chosen: tuple[tuple[int, ...], _Table] | None = None
    total = float(data_x.counts.sum() + data_x_prime.counts.sum())
    for j in differing_columns(data_x, data_x_prime):
        trial = (*chosen[0], j) if chosen else (j,)
        table = _table(data_x, data_x_prime, trial)
        if not _is_discrete(len(table[0]), total):
            break
        chosen = (trial, table)
    return chosen


def train_histogram(
    data_x: TrainingData, data_x_prime: TrainingData, *, only_if_discrete: bool = False
) -> HistogramScore | None:
    """The empirical log-ratio table of ``M(x)`` against ``M(x')`` from their training outputs.

    Whole rows when they look discrete (:func:`looks_discrete`), else rows projected
    on the discrete columns that differ between the inputs (see the module
    docstring).  With ``only_if_discrete``, ``None`` where neither is discrete;
    without it, whole rows then.
    """
    total = float(data_x.counts.sum() + data_x_prime.counts.sum())
    # The first rows alone hold too many distinct rows when the outputs are continuous.
    few = len(np.unique(row_keys(data_x.rows[:_PEEK_ROWS_WHOLE]))) <= MAX_ROWS
    whole = _table(data_x, data_x_prime, None) if few else None
    columns: tuple[int, ...] | None = None
    table = whole
    if whole is None or not _is_discrete(len(whole[0]), total):
        projected = _projection(data_x, data_x_prime)
        if projected is not None:
            columns, table = projected
        elif only_if_discrete:
            return None
    keys, ax, ap = table if table is not None else _table(data_x, data_x_prime, None)
    nx, np_ = float(data_x.counts.sum()), float(data_x_prime.counts.sum())
    s = np.log((ax + 0.5) / (nx + 0.5)) - np.log((ap + 0.5) / (np_ + 0.5))
    return HistogramScore(keys, np.round(s, 6).astype(np.float32), columns)
