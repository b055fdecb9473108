"""Work units of the black-box audit: sample a chunk, score it, return mergeable counts.

Each unit is a picklable value — (mechanism, input, scores, thresholds, sample
count, root seed, key) — and :func:`run_count_unit` turns it into counts that
merge by addition.  A unit draws from its own generator
``unit_rng(root_seed, key)`` (:mod:`dpaudit.random`), so results are
bit-identical whatever the number of workers.  Inside a unit, outputs are
produced and scored in blocks of about :data:`BLOCK_ELEMENTS` numbers, so memory
is flat in the number of samples and the working set stays in cache.

Every block is checked (:func:`dpaudit.auditors.core.guard.checked_sample`): a
mechanism that raises, or returns NaN/inf (unless it declares a NaN policy), a
wrong shape or a non-numeric dtype stops the audit with a
:class:`~dpaudit.errors.MechanismError` naming the mechanism, the input and the
problem.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpaudit.auditors.blackbox.scores import (
    Score,
    TrainingData,
    compress_rows,
    count_at_thresholds,
    weighted_sums_at_thresholds,
)
from dpaudit.auditors.core.guard import checked_sample
from dpaudit.engine.timeout import mechanism_on_input
from dpaudit.errors import DPAuditError, MechanismError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.random import unit_rng

#: Numbers (rows × output size) per block inside a unit: small enough to stay in cache.
BLOCK_ELEMENTS = 1 << 14
#: Numbers per work unit: large enough that process overhead is negligible.
UNIT_ELEMENTS = 1 << 23


def block_rows(mechanism: Mechanism) -> int:
    """Rows per block for this mechanism's output size."""
    size = int(np.prod(mechanism.output_shape, dtype=np.int64)) or 1
    return max(256, BLOCK_ELEMENTS // size)


def unit_rows(mechanism: Mechanism) -> int:
    """Rows per work unit for this mechanism's output size."""
    size = int(np.prod(mechanism.output_shape, dtype=np.int64)) or 1
    return max(block_rows(mechanism), UNIT_ELEMENTS // size)


def split_samples(n: int, mechanism: Mechanism) -> list[int]:
    """Split ``n`` samples into unit sizes (a function of ``n`` and the output size only)."""
    per_unit = unit_rows(mechanism)
    full, rest = divmod(n, per_unit)
    return [per_unit] * full + ([rest] if rest else [])


@dataclass(frozen=True)
class CountUnit:
    """Sample ``n`` outputs of ``M(x)`` and count them against each score's thresholds
    (the search's stages; the final sets are counted by the core,
    :mod:`dpaudit.auditors.blackbox.final`)."""

    mechanism: Mechanism
    x: tuple[float, ...]
    scores: tuple[Score, ...]
    thresholds: tuple[np.ndarray, ...]
    n: int
    root_seed: int
    key: tuple[int, ...]
    importance_signs: tuple[int, ...] | None = None

    def describe(self) -> str:
        """What this unit samples, for messages (:class:`~dpaudit.engine.timeout.DescribedUnit`)."""
        return mechanism_on_input(self.mechanism, self.x)


@dataclass(frozen=True)
class UnitCounts:
    """Per score: ``#{s > T_j}``, ``#{s = T_j}``, and optionally weighted sums.

    ``weighted`` (selection stage, likelihood-ratio scores): per score
    the sums of the importance weights ``w = e^{−σ·s}`` over ``s > T_j``, over
    ``s = T_j``, and in total (see :func:`weighted_sums_at_thresholds`).
    """

    n: int
    greater: tuple[np.ndarray, ...]
    equal: tuple[np.ndarray, ...]
    weighted: tuple[tuple[np.ndarray, np.ndarray, float] | None, ...] | None = None

    @staticmethod
    def merge(parts: list[UnitCounts]) -> UnitCounts:
        """Sum unit results (in unit order; addition is exact for integers)."""
        first = parts[0]
        greater = tuple(sum(p.greater[i] for p in parts) for i in range(len(first.greater)))
        equal = tuple(sum(p.equal[i] for p in parts) for i in range(len(first.equal)))
        weighted = None
        if first.weighted is not None:
            weighted = tuple(
                None
                if first.weighted[i] is None
                else (
                    sum(p.weighted[i][0] for p in parts),  # type: ignore[index]
                    sum(p.weighted[i][1] for p in parts),  # type: ignore[index]
                    float(sum(p.weighted[i][2] for p in parts)),  # type: ignore[index]
                )
                for i in range(len(first.weighted))
            )
        return UnitCounts(sum(p.n for p in parts), greater, equal, weighted)


def run_count_unit(unit: CountUnit) -> UnitCounts:
    """Work-unit function (module level, picklable) for the engine's ``run_units``."""
    try:
        return _count(unit)
    except MechanismError:
        raise
    except DPAuditError as exc:  # re-raised as one picklable type across processes
        raise MechanismError(f"mechanism {unit.mechanism.name!r}: {exc}") from None


def _count(unit: CountUnit) -> UnitCounts:
    mech = unit.mechanism
    rng = unit_rng(unit.root_seed, unit.key)
    x = np.asarray(unit.x, dtype=np.float64).reshape(mech.input_shape)
    greater = [np.zeros(len(t), dtype=np.int64) for t in unit.thresholds]
    equal = [np.zeros(len(t), dtype=np.int64) for t in unit.thresholds]
    signs = unit.importance_signs or (0,) * len(unit.scores)
    w_greater = [np.zeros(len(t)) for t in unit.thresholds]
    w_equal = [np.zeros(len(t)) for t in unit.thresholds]
    w_total = [0.0 for _ in unit.thresholds]
    step = block_rows(mech)
    done = 0
    while done < unit.n:
        rows = min(step, unit.n - done)
        out = checked_sample(mech, x, rows, rng)
        scored: dict[int, np.ndarray] = {}  # a score given for several sets runs once
        for i, (score, thr) in enumerate(zip(unit.scores, unit.thresholds, strict=True)):
            s = scored.get(id(score))
            if s is None:
                s = scored[id(score)] = score(out)
            if len(thr) == 1:  # one threshold: plain comparisons are cheaper
                greater[i][0] += int(np.count_nonzero(s > thr[0]))
                equal[i][0] += int(np.count_nonzero(s == thr[0]))
            else:
                g, e = count_at_thresholds(s, thr)
                greater[i] += g
                equal[i] += e
            if signs[i]:
                wg, we, wt = weighted_sums_at_thresholds(s, thr, signs[i])
                w_greater[i] += wg
                w_equal[i] += we
                w_total[i] += wt
        done += rows
    weighted = None
    if unit.importance_signs is not None:
        weighted = tuple(
            (w_greater[i], w_equal[i], w_total[i]) if signs[i] else None for i in range(len(signs))
        )
    return UnitCounts(unit.n, tuple(greater), tuple(equal), weighted)


@dataclass(frozen=True)
class OutputUnit:
    """Sample ``n`` outputs of ``M(x)`` for the training stage (compressed if discrete)."""

    mechanism: Mechanism
    x: tuple[float, ...]
    n: int
    root_seed: int
    key: tuple[int, ...]
    compress: bool

    def describe(self) -> str:
        """What this unit samples, for messages (:class:`~dpaudit.engine.timeout.DescribedUnit`)."""
        return mechanism_on_input(self.mechanism, self.x)


def run_output_unit(unit: OutputUnit) -> TrainingData:
    """Work-unit function returning the outputs themselves (rows with multiplicities)."""
    mech = unit.mechanism
    rng = unit_rng(unit.root_seed, unit.key)
    x = np.asarray(unit.x, dtype=np.float64).reshape(mech.input_shape)
    step = max(block_rows(mech), 1 << 14)
    parts: list[TrainingData] = []
    done = 0
    while done < unit.n:
        rows = min(step, unit.n - done)
        out = checked_sample(mech, x, rows, rng)
        if unit.compress:
            parts.append(compress_rows(out))
        else:
            parts.append(TrainingData(out, np.ones(rows, dtype=np.int64)))
        done += rows
    return TrainingData.merge(parts, unit.compress)
