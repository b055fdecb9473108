"""Sampling for the black-box audit: its work units through the engine, and a stage timer.

:class:`Sampler` turns (inputs, sample size, stage) into work units of
:mod:`dpaudit.auditors.blackbox.counting`, runs them with
:func:`dpaudit.engine.executor.run_units` and merges the results per input or
job, so memory is flat in the sample size and results are bit-identical for
any number of workers.  Imports nothing above ``auditors/``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from dpaudit.auditors.blackbox.counting import (
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


@dataclass
class Timer:
    """Wall seconds per stage of one audit (``mark`` after each, ``total`` at the end).

    ``cpu`` holds this process's CPU seconds per stage (work units run in other
    processes when ``workers > 1`` are not in it) and ``drawn`` the mechanism
    outputs drawn per stage when ``mark`` is given the sampler's tally: what the
    ablation benchmark compares with the time numpy needs to draw as many.
    """

    start: float = field(default_factory=time.perf_counter)
    marks: dict[str, float] = field(default_factory=dict)
    last: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)
    drawn: dict[str, int] = field(default_factory=dict)
    last_cpu: float = field(default_factory=time.process_time)
    last_drawn: int = 0

    def __post_init__(self) -> None:
        self.last = self.start

    def mark(self, name: str, drawn: int | None = None) -> None:
        """End stage ``name``; ``drawn``: the sampler's running total of outputs drawn."""
        now, cpu = time.perf_counter(), time.process_time()
        self.marks[name] = round(now - self.last, 4)
        self.cpu[name] = cpu - self.last_cpu
        self.last, self.last_cpu = now, cpu
        if drawn is not None:
            self.drawn[name] = drawn - self.last_drawn
            self.last_drawn = drawn

    def total(self) -> dict[str, float]:
        return {**self.marks, "total": round(time.perf_counter() - self.start, 4)}


@dataclass(frozen=True)
class Sampler:
    """Runs the audit's work units for one mechanism, root seed and executor.

    ``tally[0]`` counts the mechanism outputs drawn so far (all stages);
    ``stage_label[0]`` prefixes every progress line (``stage 3 of 6: ``), set by the
    search as it moves from stage to stage.
    """

    mechanism: Mechanism
    seed: int
    execution: ExecutionConfig
    timeout: float | None
    tally: list[int] = field(default_factory=lambda: [0], compare=False)
    stage_label: list[str] = field(default_factory=lambda: [""], compare=False)

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
        self.tally[0] += n * len(inputs)
        fn = with_timeout(run_output_unit, self.timeout)
        results = run_units(fn, units, self.execution, desc=self.stage_label[0] + desc)
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
        self.tally[0] += n * len(jobs)
        fn = with_timeout(run_count_unit, self.timeout)
        results = run_units(fn, units, self.execution, desc=self.stage_label[0] + desc)
        grouped: list[list[UnitCounts]] = [[] for _ in jobs]
        for j, r in zip(owner, results, strict=True):
            grouped[j].append(r)
        return [UnitCounts.merge(g) for g in grouped]
