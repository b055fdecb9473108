"""The fused path of the sanity check: exactly which 32-bit uniforms make a coordinate round to 1.

For an additive mechanism ``M(x) = x + T(U)`` (``mech.is_additive``) the
rounding attack's per-coordinate decision ``[x + T(u) >= 0.5]`` is a function
of the uniform ``u`` alone.  :func:`attack_decision_set` finds the set of grid
points ``u_k = (k + 1/2)·2⁻³²`` whose decision is 1 by evaluating the
mechanism's own ``noise_from_uniform`` in float64: on a coarse grid, then by
bisection to the single grid point where the decision flips, then checked at
2¹⁸ further points (None when they disagree: the caller samples instead).  See
:mod:`dpaudit.auditors.sanity.check` for how the set is used.  Imports only
``mechanisms/`` (the mechanism's declared transform) and the error types.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from dpaudit.errors import DPAuditError, MechanismError
from dpaudit.mechanisms.base import Mechanism

#: Coarse grid of 2^18 cells of 2^14 points, plus 2^18 check points.
_COARSE_BITS = 18
_CHECK_POINTS = 1 << 18
_MAX_FLIPS = 64
_GRID = 1 << 32


@dataclass(frozen=True)
class DecisionSet:
    """Exactly which 32-bit uniforms ``k`` make one coordinate round to 1.

    The decision starts as ``first`` at ``k = 0`` and flips at every entry of
    ``flips`` (sorted, each in ``1..2³²−1``).
    """

    first: bool
    flips: tuple[int, ...]

    @property
    def probability(self) -> float:
        """Probability that one coordinate rounds to 1 (exact for the 32-bit grid)."""
        edges = [0, *self.flips, _GRID]
        on = self.first
        mass = 0
        for lo, hi in itertools.pairwise(edges):
            if on:
                mass += hi - lo
            on = not on
        return mass / _GRID

    @property
    def constant(self) -> bool:
        """True when every uniform gives the same decision."""
        return not self.flips

    def cyclic_interval(self) -> tuple[int, int] | None:
        """``(lo, width)`` with decision 1 iff ``(k − lo) mod 2³² < width``, if one exists."""
        f = self.flips
        if len(f) == 1:
            return (f[0], _GRID - f[0]) if not self.first else (0, f[0])
        if len(f) == 2:
            return (f[0], f[1] - f[0]) if not self.first else (f[1], _GRID - f[1] + f[0])
        return None

    def contains(self, k: np.ndarray) -> np.ndarray:
        """Vectorised membership test for integer ``k`` (any integer dtype)."""
        k = np.asarray(k, dtype=np.int64)
        crossings = np.searchsorted(np.asarray(self.flips, dtype=np.int64), k, side="right")
        return (crossings % 2 == 1) ^ self.first


def _uniform_at(k: np.ndarray) -> np.ndarray:
    """Grid uniform ``(k + 1/2)·2⁻³²``; exact in float64 and strictly inside (0, 1)."""
    return (np.asarray(k, dtype=np.float64) + 0.5) * 2.0**-32


def _decide(mech: Mechanism, x_value: float, k: np.ndarray) -> np.ndarray:
    """The attack's per-coordinate decision ``x + T(u_k) >= 0.5``, as the sampler computes it."""
    u = _uniform_at(k)
    try:
        noise = mech.noise_from_uniform(u)
    except DPAuditError:
        raise
    except Exception as exc:
        raise MechanismError(
            f"mechanism {mech.name!r}: noise_from_uniform raised "
            f"{type(exc).__name__}: {exc} (input: all {x_value:g})"
        ) from exc
    noise = np.asarray(noise)
    if noise.shape != u.shape or noise.dtype.kind != "f":
        raise MechanismError(
            f"mechanism {mech.name!r}: noise_from_uniform returned {noise.dtype} of shape "
            f"{noise.shape} for {u.shape} uniforms: expected floats of the same shape"
        )
    if np.isinf(noise).any() or (not mech.allows_nan_output and np.isnan(noise).any()):
        raise MechanismError(
            f"mechanism {mech.name!r}: noise_from_uniform returned NaN or inf inside (0, 1) "
            f"(input: all {x_value:g})"
        )
    # The same float64 operations as the sampler: x + noise, then its output rounding.
    out = mech.round_output(noise + x_value)
    return out >= 0.5  # NaN (declared policy) rounds to 0, as in the generic attack


def attack_decision_set(mech: Mechanism, x_value: float) -> DecisionSet | None:
    """Exact decision set of the rounding attack for an additive mechanism on input ``x_value``.

    Returns None when the transform has structure finer than the coarse grid
    (the verification at extra points disagrees) or flips more than 64 times;
    the caller then falls back to sampling.
    """
    step = _GRID >> _COARSE_BITS
    coarse = np.append(np.arange(0, _GRID, step, dtype=np.int64), _GRID - 1)
    d = _decide(mech, x_value, coarse)
    cells = np.flatnonzero(d[:-1] != d[1:])
    if cells.size > _MAX_FLIPS:
        return None
    lo = coarse[cells].copy()  # decision there: d[cells]
    hi = coarse[cells + 1].copy()  # decision there: the opposite
    left = d[cells]
    while cells.size and np.any(hi - lo > 1):
        mid = (lo + hi) // 2
        same = _decide(mech, x_value, mid) == left
        lo = np.where(same, mid, lo)
        hi = np.where(same, hi, mid)
    result = DecisionSet(first=bool(d[0]), flips=tuple(int(v) for v in hi))
    # Verify: around every flip, and at fixed pseudo-random points (independent of the audit seed).
    probe = np.random.default_rng(0x5A17C).integers(0, _GRID, _CHECK_POINTS, dtype=np.int64)
    near = np.concatenate([hi + o for o in (-2, -1, 0, 1)]) if cells.size else np.empty(0)
    probe = np.concatenate([probe, np.clip(near, 0, _GRID - 1).astype(np.int64)])
    if not np.array_equal(_decide(mech, x_value, probe), result.contains(probe)):
        return None
    return result
