"""Outputs rounded to a grid their input cannot move: the built-in additive mechanisms' float fix.

``x + n`` computed in float64 rounds to the grid of the result, so which floats
can occur depends on ``x`` (Mironov, CCS 2012, §3): numpy's textbook Laplace is
not ε-DP as a float, whatever its real-valued law.  dpaudit's own additive
mechanisms are reference implementations of the papers' real-valued
mechanisms, so their outputs are rounded to the multiples of a power of two
``Λ = 2^(⌊log₂ b⌋ − 40)`` tied to the noise scale ``b`` alone — the grid step of
Mironov's snapping mechanism, taken far finer than his (he rounds to the power of
two ≥ b and clamps) so that the values move by at most ``Λ/2 ≤ 2⁻⁴¹·b``, which no
set an audit can resolve notices.

Rounding the real ``x + N`` to a fixed grid is post-processing, so it keeps the
real-valued guarantee.  What remains of float arithmetic: ``fl(x + n)`` differs
from ``x + n`` by at most half an ulp, which moves the rounded output by one grid
step with probability about ``2⁻¹²·|y|/b`` — a shift by ``Λ``, not a pattern of low
bits the input controls.  Outputs with ``|y| ≥ 2¹²·b`` are already coarser than
``Λ`` and are left as they are.  The black-box audit's ``representation`` family
(:mod:`dpaudit.auditors.blackbox.representation`) finds the textbook flaw on
unrounded outputs and nothing on these.
"""

from __future__ import annotations

import math

import numpy as np

#: Binary digits of the noise scale the grid keeps: ``Λ = 2^(⌊log₂ b⌋ − GRID_BITS)``.
GRID_BITS = 40


def grid_step(scale: float) -> float:
    """``Λ`` for noise scale ``scale`` (a power of two; ``scale`` > 0 and finite)."""
    return math.ldexp(1.0, math.frexp(scale)[1] - 1 - GRID_BITS)


def round_to_grid(out: np.ndarray, scale: float) -> np.ndarray:
    """Round ``out`` in place to the multiples of :func:`grid_step` (NaN and inf unchanged)."""
    if not (math.isfinite(scale) and 2.0**-960 < scale < 2.0**960):
        return out  # a grid step outside the normal range would not be exact
    step = grid_step(scale)
    # Values of magnitude ≥ 2⁵²·Λ are already multiples of Λ.  Division and
    # multiplication by a power of two are exact, and so is rint.
    fine = np.abs(out) < 2.0**52 * step
    out[fine] = np.rint(out[fine] / step) * step
    return out
