"""Sampling for the black-box audit: its work units through the engine, and a stage timer.

:class:`Sampler` turns (inputs, sample size, stage) into work units of
:mod:`dpaudit.audit.blackbox.counting`, runs them with
:func:`dpaudit.engine.executor.run_units` and merges the results per input or
job, so memory is flat in the sample size and results are bit-identical for
any number of workers.  Imports nothing above ``audit/``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from dpaudit.audit.blackbox.counting import (
    CountUnit,
    OutputUnit,
    UnitCounts,
    run_count_unit,
    run_output_unit,
    split_samples,
)
from dpaudit.audit.blackbox.scores import Score, TrainingData
from dpaudit.engine.executor import ExecutionConfig, run_units
from dpaudit.engine.timeout import with_timeout
from dpaudit.mechanisms.base import Mechanism


@dataclass
class Timer:
    """Wall seconds per stage of one audit (``mark`` after each, ``total`` at the end)."""

    start: float = field(default_factory=time.perf_counter)
    marks: dict[str, float] = field(default_factory=dict)
    last: float = 0.0

    def __post_init__(self) -> None:
        self.last = self.start

    def mark(self, name: str) -> None:
        now = time.perf_counter()
        self.marks[name] = round(now - self.last, 4)
        self.last = now

    def total(self) -> dict[str, float]:
        return {**self.marks, "total": round(time.perf_counter() - self.start, 4)}


@dataclass(frozen=True)
class Sampler:
    """Runs the audit's work units for one mechanism, root seed and executor."""

    mechanism: Mechanism
    seed: int
    execution: ExecutionConfig
    timeout: float | None

    def outputs(
        self, inputs: list[tuple[float, ...]], n: int, stage: int, desc: str
    ) -> list[TrainingData]:
        """``n`` outputs of every input (compressed when discrete)."""
        mech = self.mechanism
        compress = mech.output_kind in ("binary", "categorical")
        units, owner = [], []
        for i, x in enumerate(inputs):
            for c, size in enumerate(split_samples(n, mech)):
                units.append(OutputUnit(mech, x, size, self.seed, (stage, i, c), compress))
                owner.append(i)
        fn = with_timeout(run_output_unit, self.timeout)
        results = run_units(fn, units, self.execution, desc=desc)
        grouped: list[list[TrainingData]] = [[] for _ in inputs]
        for i, r in zip(owner, results, strict=True):
            grouped[i].append(r)
        return [TrainingData.merge(g, compress) for g in grouped]

    def counts(
        self,
        jobs: list[tuple[tuple[float, ...], tuple[Score, ...], tuple[np.ndarray, ...]]],
        n: int,
        stage: int,
        desc: str,
        tie_probabilities: list[tuple[float, ...]] | None = None,
        importance_signs: list[tuple[int, ...]] | None = None,
    ) -> list[UnitCounts]:
        """Stream ``n`` samples per job (input, scores, thresholds); merged counts per job."""
        mech = self.mechanism
        units, owner = [], []
        for j, (x, scores, thresholds) in enumerate(jobs):
            ties = None if tie_probabilities is None else tie_probabilities[j]
            signs = None if importance_signs is None else importance_signs[j]
            for c, size in enumerate(split_samples(n, mech)):
                key = (stage, j, c)
                units.append(
                    CountUnit(mech, x, scores, thresholds, size, self.seed, key, ties, signs)
                )
                owner.append(j)
        fn = with_timeout(run_count_unit, self.timeout)
        results = run_units(fn, units, self.execution, desc=desc)
        grouped: list[list[UnitCounts]] = [[] for _ in jobs]
        for j, r in zip(owner, results, strict=True):
            grouped[j].append(r)
        return [UnitCounts.merge(g) for g in grouped]
