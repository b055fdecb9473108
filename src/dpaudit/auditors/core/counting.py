"""The one counting unit of the final stage: fresh outputs of one input, counted against events.

An auditor proposes statements ``Pr[M(a) ∈ S] > e^ε·Pr[M(b) ∈ S] + δ``
(:mod:`dpaudit.auditors.core.proposal`); the core counts each ``S`` on fresh outputs of ``a``
and ``b`` here, and nowhere else for an auditor that proposes through
:mod:`dpaudit.auditors.core.procedure`.  What the core needs from the auditor is:

* an :class:`OutputDraw` — a picklable ``draw(x, rows, rng) -> block`` that runs the
  mechanism on input ``x`` and returns ``rows`` outputs in the auditor's encoding (an array
  of outcome codes, a list of strings, rows of numbers), checking what the foreign code
  returned;
* the :class:`Stream` of each input — the input and its stream key, from which every work
  unit's generator is derived by the plan's :class:`Generators` rule, so that the counts
  are bit-identical for any number of workers;
* the events — picklable predicates ``event(block) -> mask`` of one flag per output.

A draw may also define ``opened()``, a context manager each unit runs inside (a word
mechanism limits BLAS to one thread per unit there, once, not per block).  An event may
read a *feature* of the outputs (a trained score): it then has ``feature`` (a callable on
the block) and ``on(values)``, and the unit computes each distinct feature once per block
for every event that reads it.  An event may also keep the outputs on its boundary at
random (a threshold set with randomised ties, DP-Sniper's rule): it then has
``tie_probability`` ``q`` and ``ties(values)``, and the unit adds ``Binomial(#ties, q)``
drawn from its own generator after its last block, event by event in order.

Each :class:`EventUnit` draws its outputs in blocks (memory is flat in the sample size),
evaluates every event that involves its input on each block, once, and returns the hits;
hits merge by addition.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from dpaudit.auditors.core.certify import FinalCounts
from dpaudit.engine.config import ExecutionConfig
from dpaudit.engine.executor import run_units
from dpaudit.engine.timeout import with_timeout
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.random import unit_rng

__all__ = [
    "EventUnit",
    "FinalPlan",
    "FinalUnits",
    "Generators",
    "OutputDraw",
    "SeedListGenerators",
    "Stream",
    "UnitGenerators",
    "count_final",
    "final_execution",
    "final_units",
    "run_event_unit",
]


class OutputDraw(Protocol):
    """How the core draws outputs of one input (picklable; the auditor's encoding)."""

    def __call__(self, x: Any, rows: int, rng: np.random.Generator) -> Any:
        """``rows`` outputs of the mechanism on ``x``, drawn with ``rng``, checked."""
        ...

    def describe(self, x: Any) -> str:
        """What drawing on ``x`` runs, for messages (a slow or failing unit names it)."""
        ...


class Generators(Protocol):
    """The rule that turns a work unit's key into its generator."""

    def generator(self, key: tuple[int, ...]) -> np.random.Generator:
        """The generator of the unit with ``key``."""
        ...


@dataclass(frozen=True)
class UnitGenerators:
    """``unit_rng(root_seed, key)``: PCG64 spawned from the audit's root seed (the default)."""

    root_seed: int

    def generator(self, key: tuple[int, ...]) -> np.random.Generator:
        """The generator of the unit with ``key`` under :attr:`root_seed`."""
        return unit_rng(self.root_seed, key)


@dataclass(frozen=True)
class SeedListGenerators:
    """``np.random.default_rng(list(key))``: the key already holds the audit's seed."""

    def generator(self, key: tuple[int, ...]) -> np.random.Generator:
        """The generator seeded by the whole key."""
        return np.random.default_rng(list(key))


@dataclass(frozen=True)
class Stream:
    """One input whose fresh outputs are drawn, and the key of its stream."""

    x: Any
    key: tuple[int, ...]


@dataclass(frozen=True)
class FinalPlan:
    """How the final samples are drawn: the draw, the streams, the sizes, the generator rule.

    ``samples``: outputs per stream.  ``unit_samples``: outputs per work unit, unit ``c`` of
    a stream drawing from ``key + (c,)``; ``None`` draws each stream in one unit from its
    own key.  ``block_samples``: outputs per call of the draw inside a unit (``None``: the
    whole unit in one call).  ``in_process``: draw in this process, unstored, whatever the
    execution says (a sampler that cannot be pickled, as a user's text function).
    ``timeout``: seconds a unit may run before the audit stops, naming it (None: no limit).
    """

    draw: OutputDraw
    streams: tuple[Stream, ...]
    samples: int
    generators: Generators
    unit_samples: int | None = None
    block_samples: int | None = None
    in_process: bool = False
    desc: str = "final"
    timeout: float | None = None

    def __post_init__(self) -> None:
        for name in ("samples", "unit_samples", "block_samples"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or int(value) < 1):
                raise InvalidArgumentError(name, value, "an integer >= 1")
        if not self.streams:
            raise InvalidArgumentError("streams", self.streams, "at least one input stream")

    def unit_sizes(self) -> list[int]:
        """The sizes of one stream's units (a function of the sizes only)."""
        if self.unit_samples is None:
            return [self.samples]
        full, rest = divmod(self.samples, self.unit_samples)
        return [self.unit_samples] * full + ([rest] if rest else [])


@dataclass(frozen=True)
class EventUnit:
    """Draw ``n`` outputs of ``x`` in blocks and count each of ``events`` on them."""

    draw: OutputDraw
    x: Any
    events: tuple[Any, ...]
    n: int
    key: tuple[int, ...]
    generators: Generators
    block: int | None = None

    def describe(self) -> str:
        """What this unit samples (:class:`~dpaudit.engine.timeout.DescribedUnit`)."""
        return self.draw.describe(self.x)


def run_event_unit(unit: EventUnit) -> np.ndarray:
    """Work-unit function (module level, picklable): the hits of each event, as int64."""
    opened = getattr(unit.draw, "opened", None)
    with opened() if callable(opened) else nullcontext():
        return _count_events(unit)


def _count_events(unit: EventUnit) -> np.ndarray:
    rng = unit.generators.generator(unit.key)
    hits = np.zeros(len(unit.events), dtype=np.int64)
    ties = np.zeros(len(unit.events), dtype=np.int64)
    random_ties = [getattr(e, "tie_probability", None) is not None for e in unit.events]
    reads = [getattr(e, "feature", None) for e in unit.events]  # looked up once, not per block
    step = unit.block or unit.n
    done = 0
    while done < unit.n:
        rows = min(step, unit.n - done)
        block = unit.draw(unit.x, rows, rng)
        features: dict[int, Any] = {}  # a feature several events read is computed once
        for j, (event, feature) in enumerate(zip(unit.events, reads, strict=True)):
            if feature is None:
                values, mask = block, np.asarray(event(block))
            else:
                values = features.get(id(feature))
                if values is None:
                    values = features[id(feature)] = feature(block)
                mask = np.asarray(event.on(values))
            if mask.shape != (rows,):
                raise MechanismError(
                    f"event {j} of {unit.describe()} gave {mask.shape} flags for {rows} outputs"
                )
            hits[j] += int(np.count_nonzero(mask))
            if random_ties[j]:
                ties[j] += int(np.count_nonzero(event.ties(values)))
        done += rows
    for j, event in enumerate(unit.events):
        if random_ties[j]:  # each output on the boundary kept with probability q
            hits[j] += int(rng.binomial(ties[j : j + 1], event.tie_probability)[0])
    return hits


@dataclass(frozen=True)
class FinalUnits:
    """The work units of one final count, and how their hits make each statement's counts.

    ``owner[i]``: the stream of unit ``i``; ``slots``: per statement, the position of its
    event among each of its two streams' events.
    """

    plan: FinalPlan
    units: tuple[EventUnit, ...]
    owner: tuple[int, ...]
    slots: tuple[tuple[int, int, int, int], ...]

    def merge(self, results: Sequence[np.ndarray]) -> tuple[FinalCounts, ...]:
        """The statements' counts from the units' hits (in unit order; integer sums)."""
        if len(results) != len(self.units):
            raise InvalidArgumentError("results", len(results), f"{len(self.units)} unit results")
        hits: dict[int, np.ndarray] = {}
        for s, r in zip(self.owner, results, strict=True):
            hits[s] = hits[s] + r if s in hits else np.array(r, dtype=np.int64)
        n = self.plan.samples
        return tuple(
            FinalCounts(int(hits[a][i]), n, int(hits[b][j]), n) for a, i, b, j in self.slots
        )


def final_units(plan: FinalPlan, statements: Sequence[tuple[int, int, Any]]) -> FinalUnits:
    """The units that count each ``(numerator stream, denominator stream, event)`` statement.

    Only streams some statement names are drawn; on each, every distinct event (by
    identity) of the statements that name it is counted once, on the same outputs.
    """
    n_streams = len(plan.streams)
    events: list[list[Any]] = [[] for _ in range(n_streams)]
    slot: dict[tuple[int, int], int] = {}
    for a, b, event in statements:
        for s in (a, b):
            if not 0 <= s < n_streams:
                raise InvalidArgumentError("stream", s, f"an index in [0, {n_streams})")
            if (s, id(event)) not in slot:
                slot[(s, id(event))] = len(events[s])
                events[s].append(event)
    units, owner = [], []
    sizes = plan.unit_sizes()
    for s, stream in enumerate(plan.streams):
        if not events[s]:
            continue
        for c, size in enumerate(sizes):
            key = stream.key if plan.unit_samples is None else (*stream.key, c)
            units.append(
                EventUnit(
                    plan.draw, stream.x, tuple(events[s]), size, key, plan.generators,
                    plan.block_samples,
                )
            )  # fmt: skip
            owner.append(s)
    slots = tuple((a, slot[(a, id(e))], b, slot[(b, id(e))]) for a, b, e in statements)
    return FinalUnits(plan, tuple(units), tuple(owner), slots)


def count_final(
    plan: FinalPlan,
    statements: Sequence[tuple[int, int, Any]],
    execution: ExecutionConfig | None = None,
) -> tuple[FinalCounts, ...]:
    """The final counts of each ``(numerator stream, denominator stream, event)`` statement
    (:func:`final_units`, run through the engine)."""
    work = final_units(plan, statements)
    fn = with_timeout(run_event_unit, plan.timeout)
    results = run_units(fn, work.units, final_execution(plan, execution), desc=plan.desc)
    return work.merge(results)


def final_execution(plan: FinalPlan, execution: ExecutionConfig | None) -> ExecutionConfig:
    """How ``plan``'s units run: in this process when the plan says so, else ``execution``."""
    if plan.in_process:
        return ExecutionConfig(workers=1)
    return execution or ExecutionConfig()
