"""Sampling for the black-box audit: its work units through the engine, and a stage timer.

:class:`Sampler` turns (inputs, sample size, stage) into work units of
:mod:`dpaudit.auditors.blackbox.counting`, runs them with
:func:`dpaudit.engine.executor.run_units` and merges the results per input or
job, so memory is flat in the sample size and results are bit-identical for
any number of workers.  Imports nothing above ``auditors/``.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpaudit.auditors.blackbox.counting import (
    UNIT_ELEMENTS,
    CountUnit,
    OutputUnit,
    UnitCounts,
    run_count_unit,
    run_output_unit,
    split_samples,
)
from dpaudit.auditors.blackbox.scores import Score, TrainingData
from dpaudit.engine.executor import ExecutionConfig, run_units
from dpaudit.engine.timeout import with_timeout
from dpaudit.mechanisms.base import Mechanism

#: Output values (rows × output size, float64) one batch of training pairs may hold at
#: once (128 MB), or as many as keep every worker busy when that is more.  Drawing
#: every pair's training outputs in one call held them all (14 pairs × 2 inputs ×
#: 1.34M rows × 10 values): a box audit of PrefixSum at DP-Sniper's sizes peaked at
#: 6.5 GB that way and at 1.25 GB in batches (measured 2026-11-28, ``docs/tuning.md``).
TRAINING_BATCH_ELEMENTS = 1 << 24


@dataclass
class Timer:
    """Wall seconds per stage of one audit (``mark`` after each, ``total`` at the end).

    ``cpu`` holds this process's CPU seconds per stage (work units run in other
    processes when ``workers > 1`` are not in it) and ``drawn`` the mechanism
    outputs each stage drew, when ``mark`` is given them (read from the sampler's
    :class:`Tally` around the stage): what the ablation benchmark compares with
    the time numpy needs to draw as many.
    """

    start: float = field(default_factory=time.perf_counter)
    marks: dict[str, float] = field(default_factory=dict)
    last: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)
    drawn: dict[str, int] = field(default_factory=dict)
    last_cpu: float = field(default_factory=time.process_time)

    def __post_init__(self) -> None:
        self.last = self.start

    def mark(self, name: str, drawn: int | None = None) -> None:
        """End stage ``name``; ``drawn``: the mechanism outputs it drew."""
        now, cpu = time.perf_counter(), time.process_time()
        self.marks[name] = round(now - self.last, 4)
        self.cpu[name] = cpu - self.last_cpu
        self.last, self.last_cpu = now, cpu
        if drawn is not None:
            self.drawn[name] = drawn

    def total(self) -> dict[str, float]:
        return {**self.marks, "total": round(time.perf_counter() - self.start, 4)}


@dataclass
class Tally:
    """What one sampler has drawn: its one mutable part, kept apart from its settings.

    ``drawn`` counts the mechanism outputs drawn so far (all stages): a stage's cost
    is the difference around its run.  ``label`` prefixes every progress line
    (``stage 3 of 6 (rank): ``), set by the search as it moves from stage to stage.
    """

    drawn: int = 0
    label: str = ""

    def since(self, before: int) -> int:
        """Outputs drawn since the tally read ``before``."""
        return self.drawn - before


@dataclass(frozen=True)
class Sampler:
    """Runs the audit's work units for one mechanism, root seed and executor.

    Its settings are fixed; what it has drawn is counted in ``tally`` (a
    :class:`Tally`, one per sampler).
    """

    mechanism: Mechanism
    seed: int
    execution: ExecutionConfig
    timeout: float | None
    tally: Tally = field(default_factory=Tally, compare=False)

    def outputs(
        self,
        inputs: list[tuple[float, ...]],
        n: int,
        stage: int,
        desc: str,
        streams: Sequence[int] | None = None,
    ) -> list[TrainingData]:
        """``n`` outputs of every input (compressed when discrete).

        ``streams``: each input's random stream within ``stage`` (default its
        position in ``inputs``), so that outputs drawn in several calls are those
        of one.
        """
        mech = self.mechanism
        compress = mech.output_kind in ("binary", "categorical")
        units, owner = [], []
        for i, x in enumerate(inputs):
            stream = i if streams is None else streams[i]
            for c, size in enumerate(split_samples(n, mech)):
                units.append(OutputUnit(mech, x, size, self.seed, (stage, stream, c), compress))
                owner.append(i)
        self.tally.drawn += n * len(inputs)
        fn = with_timeout(run_output_unit, self.timeout)
        results = run_units(fn, units, self.execution, desc=self.tally.label + desc)
        grouped: list[list[TrainingData]] = [[] for _ in inputs]
        for i, r in zip(owner, results, strict=True):
            grouped[i].append(r)
        return [TrainingData.merge(g, compress) for g in grouped]

    def pair_outputs(
        self,
        pairs: Sequence[tuple[tuple[float, ...], tuple[float, ...]]],
        n: int,
        stage: int,
        desc: str,
    ) -> Iterator[tuple[TrainingData, TrainingData]]:
        """``n`` outputs of both inputs of every pair ``(x, x')``, pair by pair.

        Drawn in batches of pairs that hold at most :data:`TRAINING_BATCH_ELEMENTS`
        output values (more when the workers need more units to stay busy), so
        memory is flat in the number of pairs; a caller that keeps only what it
        computes from each pair never holds them all.  The outputs are those of
        one :meth:`outputs` call on ``[x₁, …, x_m, x′₁, …, x′_m]`` (stream ``k`` for
        pair ``k``'s ``x``, ``m + k`` for its ``x′``) whatever the batch size.
        """
        m = len(pairs)
        values = 2 * n * max(1, math.prod(self.mechanism.output_shape))
        workers = self.execution.workers or os.cpu_count() or 1
        per = max(1, max(TRAINING_BATCH_ELEMENTS, workers * UNIT_ELEMENTS) // values)
        for start in range(0, m, per):
            batch = pairs[start : start + per]
            b = len(batch)
            what = desc if b == m else f"{desc} (pairs {start + 1}-{start + b} of {m})"
            data = self.outputs(
                [x for x, _ in batch] + [xp for _, xp in batch],
                n,
                stage,
                what,
                streams=[*range(start, start + b), *range(m + start, m + start + b)],
            )
            for k in range(b):
                yield data[k], data[b + k]

    def counts(
        self,
        jobs: list[tuple[tuple[float, ...], tuple[Score, ...], tuple[np.ndarray, ...]]],
        n: int,
        stage: int,
        desc: str,
        importance_signs: list[tuple[int, ...]] | None = None,
    ) -> list[UnitCounts]:
        """Stream ``n`` samples per job (input, scores, thresholds); merged counts per job."""
        mech = self.mechanism
        units, owner = [], []
        for j, (x, scores, thresholds) in enumerate(jobs):
            signs = None if importance_signs is None else importance_signs[j]
            for c, size in enumerate(split_samples(n, mech)):
                key = (stage, j, c)
                units.append(CountUnit(mech, x, scores, thresholds, size, self.seed, key, signs))
                owner.append(j)
        self.tally.drawn += n * len(jobs)
        fn = with_timeout(run_count_unit, self.timeout)
        results = run_units(fn, units, self.execution, desc=self.tally.label + desc)
        grouped: list[list[UnitCounts]] = [[] for _ in jobs]
        for j, r in zip(owner, results, strict=True):
            grouped[j].append(r)
        return [UnitCounts.merge(g) for g in grouped]
