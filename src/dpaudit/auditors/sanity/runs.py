"""The runs of the sanity check: the attack's guesses, drawn fused or through the sampler.

One run gives the mechanism the constant input ``x_bit^n`` and guesses the bit back by
rounding each output coordinate and taking a majority vote
(:mod:`dpaudit.auditors.sanity.check` states the experiment and the fused path).
:class:`SanityDraw` hands the guesses of a block of runs to the core's one counting unit
(:mod:`dpaudit.auditors.core.counting`), which counts the events :class:`GuessIs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.auditors.core.guard import checked_sample
from dpaudit.auditors.sanity.decision_set import DecisionSet
from dpaudit.engine.timeout import mechanism_label
from dpaudit.mechanisms.base import Mechanism

__all__ = ["GuessIs", "SanityDraw"]

_U64_MAX = np.uint64(0xFFFF_FFFF_FFFF_FFFF)


def _count_dtype(n: int) -> type[np.unsignedinteger[Any]]:
    if n < 256:
        return np.uint8
    return np.uint16 if n < 65536 else np.uint32


def _votes(counts: np.ndarray, n: int, tie_rule: str, rng: np.random.Generator) -> np.ndarray:
    """Each run's majority vote (True: 1), given its count of coordinates rounded to 1."""
    half = n // 2
    guess = counts > half
    if n % 2 == 0 and tie_rule != "half-even":
        tied = counts == half
        if tie_rule == "half-up":
            guess |= tied
        else:
            # A fair coin per tie: the number voting 1 is Binomial(#ties, ½).  Which of the
            # tied runs they are changes no count the check uses, so the first ones are taken.
            ones = int(rng.binomial(int(np.count_nonzero(tied)), 0.5))
            guess[np.flatnonzero(tied)[:ones]] = True
    return guess


def _fused_guesses(
    decision: DecisionSet, n: int, rows: int, rng: np.random.Generator, tie_rule: str
) -> np.ndarray:
    """The votes of ``rows`` runs (one block), drawing ``n`` 32-bit uniforms per run."""
    if decision.constant:
        return np.full(rows, decision.first)  # counts are 0 or n: no tie, nothing to draw
    m = n * rows
    raw = rng.integers(0, _U64_MAX, size=(m + 1) // 2, dtype=np.uint64, endpoint=True)
    # Layout (coordinate, run): summing over axis 0 adds contiguous rows (fast for any n).
    k = raw.view(np.uint32)[:m].reshape(n, rows)
    interval = decision.cyclic_interval()
    if interval is not None:
        lo, width = interval
        np.subtract(k, np.uint32(lo), out=k)  # wraps modulo 2^32
        hit = k < np.uint32(width)
    else:
        crossings = np.searchsorted(np.asarray(decision.flips, dtype=np.uint32), k, side="right")
        hit = (crossings & 1) != int(decision.first)
    return _votes(hit.sum(axis=0, dtype=_count_dtype(n)), n, tie_rule, rng)


def _generic_guesses(
    mech: Mechanism, x: np.ndarray, rows: int, rng: np.random.Generator, tie_rule: str
) -> np.ndarray:
    """The votes of ``rows`` runs (one block) of ``mech.sample``."""
    m = int(np.prod(mech.output_shape, dtype=np.int64))
    out = checked_sample(mech, x, rows, rng).reshape(rows, m)
    counts = (out >= 0.5).sum(axis=1, dtype=_count_dtype(m))  # NaN >= 0.5 is False: rounds to 0
    return _votes(counts, m, tie_rule, rng)


# ------------------------------------------------------------ draws and events
@dataclass(frozen=True)
class SanityDraw:
    """The core's draw for the sanity check (:class:`~dpaudit.auditors.core.counting.OutputDraw`):
    the attack's guess of each run on the constant input ``x_bit^n``.

    ``decisions`` (one per input): the fused path's exact decision sets; None runs the
    mechanism's sampler.
    """

    mechanism: Mechanism
    tie_rule: str
    decisions: tuple[DecisionSet, DecisionSet] | None

    def __call__(self, x_bit: int, rows: int, rng: np.random.Generator) -> np.ndarray:
        """``rows`` runs' guesses (True: the attack guesses 1)."""
        mech = self.mechanism
        if self.decisions is not None:
            n = int(np.prod(mech.output_shape, dtype=np.int64))
            return _fused_guesses(self.decisions[x_bit], n, rows, rng, self.tie_rule)
        x = np.full(mech.input_shape, float(x_bit))
        return _generic_guesses(mech, x, rows, rng, self.tie_rule)

    def describe(self, x_bit: int) -> str:
        """What drawing on ``x_bit^n`` runs, for messages."""
        return f"mechanism {mechanism_label(self.mechanism)!r} on input all {x_bit}"


@dataclass(frozen=True)
class GuessIs:
    """The event "the attack guesses ``bit``", on blocks of guesses."""

    bit: int

    def __call__(self, guesses: np.ndarray) -> np.ndarray:
        """One flag per run."""
        return guesses if self.bit else ~guesses
