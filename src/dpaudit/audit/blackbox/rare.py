"""Rare-event candidates for the black-box search (issue 25, item 3): building blocks only.

Outputs of probability 10⁻³–10⁻⁶ under one input and (near) zero under the
other are where black-box auditors are blind (Wang et al., CCS 2024): the
0.5 % rule of :mod:`dpaudit.audit.blackbox.atoms` never sees an exact value
that carries 10⁻³ of a column.  Two detectors, both meant to run on selection
samples only (the final certification on fresh samples stays the core's):

* :func:`repeated_values` — exact values seen at least ``min_repeats`` times in
  a column whose other values are (almost all) distinct.  A continuous float64
  draw repeats an exact value with probability ~0, so a value repeated ≥ k
  times in such a column is an atom, however light.
* :func:`beyond_support` — per coordinate, how many of ``a``'s outputs fall
  strictly outside ``b``'s observed range [min, max].

NOT YET WIRED into :mod:`dpaudit.audit.blackbox.stages` (no stage, no
``SearchConfig`` switch): see the report of branch ``rare``.  Imports nothing
above ``audit/``.
"""

from __future__ import annotations

import numpy as np

#: Least repeats of one exact value for it to count as a rare atom.
MIN_REPEATS = 5
#: Least share of distinct values among a column's other outputs for it to count as continuous.
CONTINUOUS_SHARE = 0.9


def repeated_values(column: np.ndarray, min_repeats: int = MIN_REPEATS) -> tuple[float, ...]:
    """Exact values repeated ≥ ``min_repeats`` times in an otherwise continuous ``column``.

    Returns ``()`` when the column is not continuous (fewer than
    :data:`CONTINUOUS_SHARE` of the outputs off the repeated values are
    distinct): there every value repeats and the ordinary atom rule applies.
    """
    if min_repeats < 2:
        raise ValueError(f"min_repeats must be ≥ 2, got {min_repeats}")
    values, counts = np.unique(np.asarray(column).ravel(), return_counts=True)
    heavy = counts >= min_repeats
    rest = int(counts[~heavy].sum())
    if rest == 0 or int((~heavy).sum()) < CONTINUOUS_SHARE * rest:
        return ()
    return tuple(float(v) for v in values[heavy])


def beyond_support(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per coordinate, the number of rows of ``a`` strictly outside ``b``'s observed range."""
    a2 = np.asarray(a, dtype=float).reshape(len(a), -1)
    b2 = np.asarray(b, dtype=float).reshape(len(b), -1)
    lo, hi = b2.min(axis=0), b2.max(axis=0)
    return ((a2 < lo) | (a2 > hi)).sum(axis=0)
