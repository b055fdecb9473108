"""Pairs of clipped vectors breaking ADePT's claimed sensitivity (Habernal, EMNLP 2021, §6, Fig. 1).

ADePT clips the encoder output ``r`` to norm ``C`` (Krishna et al. 2021, Eq. 9:
``f(r) = r · min(1, C/‖r‖₂)``) and calibrates Laplace noise to an L1
sensitivity of ``2C`` (their Theorem 3.2).  The true L1 sensitivity of L2
clipping is ``2C√n`` (Habernal 2021, Theorem 5.1), so pairs of clipped
vectors whose L1 distance exceeds ``2C`` are exactly the inputs the claimed
guarantee does not cover.  This module estimates, per dimension ``n``, the
fraction of such pairs among random pairs, with an exact (Clopper–Pearson)
two-sided interval — one interval per dimension, not simultaneous over dims.

Sampling follows the authors' simulation code: ``pairs`` independent pairs
(2·pairs vectors) per dimension, each coordinate uniform on ``(−C, C)`` or
normal with mean 0 and standard deviation ``0.1·C`` (``normal_scale="std"``,
what the published figure used).  The paper's text says *variance* ``0.1·C``;
``normal_scale="variance"`` gives that reading (std ``√(0.1·C)``).  Note that
the two readings coincide at the published ``C = 10`` (std 1 either way); they
differ for any other C (e.g. C = 1: std 0.1 vs 0.316).  A pair
violates when ``‖f(r1) − f(r2)‖₁ > claim`` (strict).

Floating point: with L1 clipping no pair can violate in exact arithmetic
(``‖f(r1) − f(r2)‖₁ ≤ ‖f(r1)‖₁ + ‖f(r2)‖₁ ≤ 2C``), but a rounded distance can
exceed ``2C`` by a few ulps.  Distances in ``(claim, claim·(1 + boundary_rtol)]``
(default ``rtol = 1e-9``, far above the ≈ n·2⁻⁵² rounding error and far below
any real excess) are therefore reported separately as ``boundary`` and not
counted as violations; ``violating + boundary`` is the raw strict count.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpaudit.auditors.core.statistics import clopper_pearson_interval
from dpaudit.engine.executor import ExecutionConfig, run_units
from dpaudit.errors import InvalidArgumentError
from dpaudit.random import stable_hash, unit_rng
from dpaudit.validation import check_int, check_positive, check_probability_open, check_seed

DISTRIBUTIONS = ("uniform", "normal")
NORMAL_SCALES = ("std", "variance")
#: Largest dimension accepted (the reference went up to 255).
MAX_DIM = 1 << 16
#: Doubles per sampled array in one unit (≈ 4 MB), so memory stays bounded.
_UNIT_VALUES = 1 << 19
_SEED_TAG = stable_hash("dpaudit.simulate-sensitivity")


@dataclass(frozen=True)
class DimensionResult:
    """Violation count for one dimension ``dim``; ``ci`` is the two-sided exact interval."""

    dim: int
    pairs: int
    violating: int
    violating_fraction: float
    ci: tuple[float, float]
    boundary: int


@dataclass(frozen=True)
class SensitivitySimulationResult:
    """All parameters of the simulation and one :class:`DimensionResult` per dimension."""

    distribution: str
    normal_scale: str | None
    sampling_std: float | None
    bound: float
    clip_norm: float
    claimed_sensitivity: float
    pairs: int
    seed: int
    confidence: float
    boundary_rtol: float
    results: tuple[DimensionResult, ...]
    seconds: float


@dataclass(frozen=True)
class _Unit:
    dim: int
    chunk: int
    pairs: int
    seed: int
    distribution: str
    scale: float
    bound: float
    clip_norm: float
    claim: float
    rtol: float


def vector_norms(r: np.ndarray, p: float) -> np.ndarray:
    """Row-wise ``‖r‖_p`` for ``p >= 1`` (``inf`` allowed) of a 2-D array."""
    if p == 2:
        return np.sqrt(np.einsum("ij,ij->i", r, r))
    if p == 1:
        return np.abs(r).sum(axis=1)
    if math.isinf(p):
        return np.abs(r).max(axis=1)
    return np.linalg.norm(r, ord=p, axis=1)


def clip_rows(r: np.ndarray, bound: float, p: float = 2.0) -> np.ndarray:
    """ADePT's clipping ``f(r) = r · min(1, C/‖r‖_p)`` row-wise (Krishna et al. 2021, Eq. 9)."""
    norms = vector_norms(r, p)
    factor = np.ones_like(norms)
    np.divide(bound, norms, out=factor, where=norms > bound)
    return r * factor[:, None]


def l1_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise L1 distance."""
    return np.abs(a - b).sum(axis=1)


def _draw(unit: _Unit, rng: np.random.Generator) -> np.ndarray:
    shape = (unit.pairs, unit.dim)
    if unit.distribution == "uniform":
        return rng.uniform(-unit.bound, unit.bound, size=shape)
    return rng.normal(0.0, unit.scale, size=shape)


def _run_unit(unit: _Unit) -> np.ndarray:
    """Counts ``[pairs, violating, boundary]`` for one chunk of pairs in one dimension."""
    rng = unit_rng(unit.seed, (_SEED_TAG, unit.dim, unit.chunk))
    first = clip_rows(_draw(unit, rng), unit.bound, unit.clip_norm)
    second = clip_rows(_draw(unit, rng), unit.bound, unit.clip_norm)
    d = l1_distances(first, second)
    strict = d > unit.claim
    violating = d > unit.claim * (1.0 + unit.rtol)
    v = int(np.count_nonzero(violating))
    return np.array([unit.pairs, v, int(np.count_nonzero(strict)) - v], dtype=np.int64)


def parse_dims(text: str) -> tuple[int, ...]:
    """Parse ``"1-64"``, ``"1,2,8"`` or ``"1-8,16"`` into sorted unique dimensions."""
    dims: set[int] = set()
    allowed = f"dimensions like 1-64, 1,2,8 or 1-8,16 with values in [1, {MAX_DIM}]"
    for part in str(text).split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not m:
            raise InvalidArgumentError("dims", text, allowed)
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if not 1 <= lo <= hi <= MAX_DIM:
            raise InvalidArgumentError("dims", text, allowed)
        dims.update(range(lo, hi + 1))
    return tuple(sorted(dims))


def _check_clip_norm(p: float) -> float:
    try:
        v = float(p)
    except (TypeError, ValueError):
        raise InvalidArgumentError("clip_norm", p, "a number >= 1 or inf") from None
    if math.isnan(v) or v < 1:
        raise InvalidArgumentError("clip_norm", p, "a number >= 1 or inf")
    return v


def _plan_units(
    dim_list: Sequence[int],
    pairs: int,
    seed: int,
    distribution: str,
    scale: float,
    bound: float,
    clip_norm: float,
    claim: float,
    rtol: float,
) -> list[_Unit]:
    """The work units: per dimension, chunks of at most ``_UNIT_VALUES // d`` pairs (≥ 256)."""
    units = []
    for d in dim_list:
        per_chunk = max(256, _UNIT_VALUES // d)
        for chunk, start in enumerate(range(0, pairs, per_chunk)):
            units.append(
                _Unit(
                    dim=int(d),
                    chunk=chunk,
                    pairs=min(per_chunk, pairs - start),
                    seed=seed,
                    distribution=distribution,
                    scale=scale,
                    bound=bound,
                    clip_norm=clip_norm,
                    claim=claim,
                    rtol=rtol,
                )
            )
    return units


def _per_dimension(
    dim_list: Sequence[int], units: list[_Unit], counts: Sequence[np.ndarray], confidence: float
) -> list[DimensionResult]:
    """Sum the units' (pairs, violations, boundary) counts per dimension, with an interval each."""
    totals: dict[int, np.ndarray] = {d: np.zeros(3, dtype=np.int64) for d in dim_list}
    for unit, c in zip(units, counts, strict=True):
        totals[unit.dim] += c
    results = []
    for d in dim_list:
        n, v, b = (int(x) for x in totals[d])
        lo, hi = clopper_pearson_interval(v, n, confidence)
        results.append(DimensionResult(d, n, v, v / n, (float(lo), float(hi)), b))
    return results


def simulate_sensitivity(
    dims: Sequence[int] | str = "1-64",
    *,
    distribution: str = "uniform",
    pairs: int = 10_000,
    bound: float = 10.0,
    clip_norm: float = 2.0,
    claimed_sensitivity: float | None = None,
    normal_scale: str = "std",
    seed: int = 0,
    confidence: float = 0.95,
    boundary_rtol: float = 1e-9,
    execution: ExecutionConfig | None = None,
) -> SensitivitySimulationResult:
    """Fraction of random pairs of clipped vectors whose L1 distance exceeds the claim, per dim.

    ``bound`` is the clipping bound C; ``claimed_sensitivity`` defaults to ADePT's
    ``2C``.  One work unit per (dim, chunk of pairs); see the module docstring.
    ``execution`` chooses the executor (backend, workers), as in the auditors.
    """
    dim_list = parse_dims(dims) if isinstance(dims, str) else tuple(dims)
    if not dim_list:
        raise InvalidArgumentError("dims", dims, "at least one dimension")
    for d in dim_list:
        check_int("dims", d, minimum=1, maximum=MAX_DIM)
    if distribution not in DISTRIBUTIONS:
        raise InvalidArgumentError("distribution", distribution, " or ".join(DISTRIBUTIONS))
    if normal_scale not in NORMAL_SCALES:
        raise InvalidArgumentError("normal_scale", normal_scale, " or ".join(NORMAL_SCALES))
    pairs = check_int("pairs", pairs, minimum=1)
    bound = check_positive("bound", bound)
    p = _check_clip_norm(clip_norm)
    claim = 2.0 * bound if claimed_sensitivity is None else claimed_sensitivity
    claim = check_positive("claimed_sensitivity", claim)
    seed = check_seed(seed)
    confidence = check_probability_open("confidence", confidence)
    rtol = float(boundary_rtol)
    if not 0.0 <= rtol < 1e-3:
        raise InvalidArgumentError("boundary_rtol", boundary_rtol, "a number in [0, 0.001)")
    std = None
    if distribution == "normal":
        std = 0.1 * bound if normal_scale == "std" else math.sqrt(0.1 * bound)

    units = _plan_units(dim_list, pairs, seed, distribution, std or 0.0, bound, p, claim, rtol)
    start_time = time.perf_counter()
    counts = run_units(_run_unit, units, execution, desc="simulate-sensitivity")
    seconds = time.perf_counter() - start_time

    results = _per_dimension(dim_list, units, counts, confidence)
    return SensitivitySimulationResult(
        distribution=distribution,
        normal_scale=normal_scale if distribution == "normal" else None,
        sampling_std=std,
        bound=bound,
        clip_norm=p,
        claimed_sensitivity=claim,
        pairs=pairs,
        seed=seed,
        confidence=confidence,
        boundary_rtol=rtol,
        results=tuple(results),
        seconds=seconds,
    )
