"""Drawing for the profile audit: scored outputs, and the threshold sets the core counts.

:class:`ScoredDraw` is the profile audit's draw for the core's one counting unit
(:mod:`dpaudit.auditors.core.counting`): outputs of ``M(x)`` are drawn and scored in
blocks of :data:`BLOCK_ROWS` and handed over as their scores; :class:`ScoreAbove` is a
kept set ``{s > t}`` or ``{s ≤ t}`` as a predicate on those score blocks.  The core draws
each unit from ``unit_rng(root_seed, key)``, so the counts do not depend on how the samples
were split or on the number of workers, and memory is flat in the number of samples.

:func:`run_score_unit` returns the scores themselves, for the (smaller) selection stage
and for the trade-off band.

A score may also return several columns, one number per output for each (a training game's
named statistics): a set then names its column.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.auditors.core.guard import checked_sample
from dpaudit.engine.timeout import mechanism_on_input
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


@dataclass(frozen=True)
class ScoredDraw:
    """The core's draw for the profile audit (:class:`~dpaudit.auditors.core.counting.OutputDraw`):
    checked outputs of ``M(x)``, returned as their scores (``columns``: the number of
    columns the score had in selection, None for one)."""

    mechanism: Mechanism
    score: Score
    columns: int | None = None

    def __call__(self, x: tuple[float, ...], rows: int, rng: np.random.Generator) -> np.ndarray:
        """The scores of ``rows`` fresh outputs of ``M(x)``."""
        mech = self.mechanism
        try:
            s = _scores(mech, self.score, np.asarray(x, dtype=np.float64).reshape(mech.input_shape),
                        rows, rng)  # fmt: skip
        except MechanismError:
            raise
        except DPAuditError as exc:  # one picklable type across processes
            raise MechanismError(f"mechanism {mech.name!r}: {exc}") from None
        got = None if s.ndim == 1 else s.shape[1]
        if got != self.columns:
            raise MechanismError(
                f"score returned {got or 1} column(s), not the {self.columns or 1} it had in "
                "selection"
            )
        return s

    def describe(self, x: tuple[float, ...]) -> str:
        """What drawing on ``x`` runs, for messages."""
        return mechanism_on_input(self.mechanism, x)


@dataclass(frozen=True)
class ScoreAbove:
    """The set ``{score[column] > threshold}`` (``above``) or its complement, on score blocks.

    ``threshold`` is of the score's own dtype (taken from its values), so the comparison
    is exact.
    """

    column: int
    threshold: Any
    above: bool

    def __call__(self, scores: np.ndarray) -> np.ndarray:
        """One flag per scored output."""
        s = scores if scores.ndim == 1 else scores[:, self.column]
        return s > self.threshold if self.above else s <= self.threshold


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
