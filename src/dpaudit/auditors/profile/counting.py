"""Work units of the profile audit: sample a chunk, score it, count it against thresholds.

A unit is a picklable value — (mechanism, input, score, thresholds, sample
count, root seed, key) — and :func:`run_count_unit` returns, per threshold
``t``, the number of outputs whose score is ``> t``; counts of several units
merge by addition, so the result does not depend on how the samples were split
or on the number of workers (each unit draws from ``unit_rng(root_seed, key)``).

Inside a unit outputs are drawn and scored in blocks of :data:`BLOCK_ROWS`, and
each block is counted against *all* thresholds at once: sort the block's
scores, then one :func:`numpy.searchsorted` gives ``#{s ≤ t}`` for every
``t``.  Memory is flat in the number of samples (one block at a time), and the
cost is ``O(B log B + T log B)`` per block instead of ``O(B·T)``.

:func:`run_score_unit` returns the scores themselves, for the (smaller)
selection stage.

A score may also return several columns, one number per output for each (a training game's
named statistics): then ``thresholds`` holds one sorted array per column, and the counts of
all columns come back one after the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpaudit.auditors.core.guard import checked_sample
from dpaudit.errors import DPAuditError, MechanismError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.random import unit_rng

#: Outputs drawn and scored at once inside a unit.
BLOCK_ROWS = 1 << 15
#: Outputs per work unit: large enough that process overhead is negligible.
UNIT_ROWS = 1 << 20

#: A score: outputs (rows) ↦ one number per row, high where the output looks like ``M(x)``
#: (or ``(rows, k)``: ``k`` such numbers per row, each a candidate score).
Score = Callable[[np.ndarray], np.ndarray]


def split_samples(n: int) -> list[int]:
    """Unit sizes for ``n`` samples (a function of ``n`` only, so seeds do not move)."""
    full, rest = divmod(n, UNIT_ROWS)
    return [UNIT_ROWS] * full + ([rest] if rest else [])


@dataclass(frozen=True)
class ProfileCountUnit:
    """Draw ``n`` outputs of ``M(x)``; count how many score above each of ``thresholds``.

    ``thresholds`` are sorted and of the score's own dtype (they were taken
    from its values), so comparisons are exact; a tuple of such arrays, one per column, for a
    score of several columns.
    """

    mechanism: Mechanism
    x: tuple[float, ...]
    score: Score
    thresholds: np.ndarray | tuple[np.ndarray, ...]
    n: int
    root_seed: int
    key: tuple[int, ...]


def _scores(mech: Mechanism, score: Score, x: np.ndarray, rows: int, rng: np.random.Generator):
    """``rows`` outputs' scores: ``(rows,)`` for one score, ``(rows, k)`` for ``k`` columns."""
    out = checked_sample(mech, x, rows, rng)
    s = np.asarray(score(out))
    if s.ndim not in (1, 2) or len(s) != rows or s.dtype.kind not in "iuf" or np.isnan(s).any():
        raise MechanismError(
            f"score {getattr(score, 'family', type(score).__name__)!r} returned "
            f"shape {s.shape}, dtype {s.dtype}: expected {rows} numbers (or rows of numbers) "
            "without NaN"
        )
    return s


def _greater(s: np.ndarray, thresholds: np.ndarray | tuple[np.ndarray, ...]) -> np.ndarray:
    """``#{s > t}`` per threshold: one column, or each column against its own thresholds."""
    if not isinstance(thresholds, tuple):
        if s.ndim != 1:
            raise MechanismError(f"score returned {s.shape[1]} columns where one was expected")
        return len(s) - np.searchsorted(np.sort(s), thresholds, side="right")
    cols = s.reshape(len(s), -1)
    if cols.shape[1] != len(thresholds):
        raise MechanismError(
            f"score returned {cols.shape[1]} columns, not the {len(thresholds)} it had in selection"
        )
    return np.concatenate(
        [
            len(cols) - np.searchsorted(np.sort(cols[:, j]), t, side="right")
            for j, t in enumerate(thresholds)
        ]
    )


def run_count_unit(unit: ProfileCountUnit) -> np.ndarray:
    """``#{score > t}`` for each threshold ``t`` over this unit's ``n`` outputs (int64)."""
    mech = unit.mechanism
    rng = unit_rng(unit.root_seed, unit.key)
    x = np.asarray(unit.x, dtype=np.float64).reshape(mech.input_shape)
    total = sum(len(t) for t in unit.thresholds) if isinstance(unit.thresholds, tuple) else None
    greater = np.zeros(total if total is not None else len(unit.thresholds), dtype=np.int64)
    done = 0
    try:
        while done < unit.n:
            rows = min(BLOCK_ROWS, unit.n - done)
            greater += _greater(_scores(mech, unit.score, x, rows, rng), unit.thresholds)
            done += rows
    except MechanismError:
        raise
    except DPAuditError as exc:  # one picklable type across processes
        raise MechanismError(f"mechanism {mech.name!r}: {exc}") from None
    return greater


@dataclass(frozen=True)
class ScoreUnit:
    """Draw ``n`` outputs of ``M(x)`` and return their scores (selection stage)."""

    mechanism: Mechanism
    x: tuple[float, ...]
    score: Score
    n: int
    root_seed: int
    key: tuple[int, ...]


def run_score_unit(unit: ScoreUnit) -> np.ndarray:
    """The scores of ``n`` fresh outputs of ``M(x)``, in drawing order (rows of ``k`` numbers
    for a score of ``k`` columns)."""
    mech = unit.mechanism
    rng = unit_rng(unit.root_seed, unit.key)
    x = np.asarray(unit.x, dtype=np.float64).reshape(mech.input_shape)
    parts = []
    done = 0
    while done < unit.n:
        rows = min(BLOCK_ROWS, unit.n - done)
        parts.append(_scores(mech, unit.score, x, rows, rng))
        done += rows
    return np.concatenate(parts)
