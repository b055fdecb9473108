"""Rare-event proposals for the black-box search (issue 25, item 3).

Outputs of probability 10⁻³–10⁻⁶ under one input and (near) zero under the
other are where black-box auditors are blind (Wang et al., "Curator Attack",
CCS 2024): a linear or classifier score never isolates them, and the 0.5 % rule
of :mod:`dpaudit.auditors.blackbox.atoms` never sees an exact value that carries
10⁻³ of a column.  This module finds them on the *training* outputs (selection
samples; the final certification on fresh samples stays the core's) and freezes
them into one extra score per pair, :class:`RareSetScore`, 1 on the found
outputs and 0 elsewhere; the ranking stage then weighs its set against every
other candidate, on fresh selection outputs, like any family's.

The rule, one for exact repeats (light atoms) and tiny regions alike: in a
column of ``n`` continuous draws, ``k`` consecutive order statistics spanning
less than ``τ`` times the local spacing happen with probability about
``n·τ^(k−1)/(k−1)!`` (the spacings are nearly i.i.d. exponential); at
``k = 5`` and ``τ = 10⁻⁴`` that is < 10⁻¹¹ for ``n = 10⁷``, so such a cluster
is a point mass or a tiny region of high density, not noise.  A cluster enters
the set only if the other input's training outputs hit it at most
:data:`MAX_OTHER_SHARE` as often.  Discrete outputs are left to the histogram
family.  Imports nothing above ``audit/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: Least points in a cluster (``k``).
MIN_REPEATS = 5
#: Most a cluster's span may be, as a share of the local mean spacing (``τ``).
SPAN_SHARE = 1e-4
#: Neighbours on each side the local mean spacing is taken over.
LOCAL_WINDOW = 50
#: Least share of distinct values for a column to count as continuous.
CONTINUOUS_SHARE = 0.5
#: Least ranking hits (under one input) for a rare set to be sent to certification.
RARE_MIN_HITS = 3
#: Most clusters kept per pair (those with most hits).
MAX_REGIONS = 8
#: Most the other input may hit a cluster, as a share of this input's hits.
MAX_OTHER_SHARE = 0.25


@dataclass(frozen=True)
class RareSetScore:
    """1 where some output coordinate lies in one of the frozen closed intervals, else 0."""

    #: ``(column, lo, hi)`` per region (flattened column index; ``lo == hi``: an exact value).
    regions: tuple[tuple[int, float, float], ...]

    family = "rare"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        flat = np.asarray(outputs).reshape(len(outputs), -1)
        hit = np.zeros(len(flat), dtype=bool)
        for j, lo, hi in self.regions:
            col = flat[:, j]
            hit |= (col >= lo) & (col <= hi)
        return hit.astype(np.float32)

    def describe(self) -> str:
        """Formula of the score."""
        parts = ", ".join(f"y[{j}] ∈ [{lo!r}, {hi!r}]" for j, lo, hi in self.regions)
        return f"1 if {parts} (rare-event regions found on training outputs), else 0"

    def parameters(self) -> dict[str, Any]:
        """The frozen regions."""
        return {"family": self.family, "regions": [list(r) for r in self.regions]}


def clusters(column: np.ndarray) -> list[tuple[float, float, int]]:
    """Clusters ``(lo, hi, hits)`` of ≥ :data:`MIN_REPEATS` points in a continuous ``column``.

    A run of consecutive sorted values whose every ``k``-span is below
    :data:`SPAN_SHARE` of the local mean spacing; the interval is widened by its
    own span each side (an exact repeat stays a single value).
    """
    y = np.sort(np.asarray(column, dtype=np.float64).ravel())
    n, k = len(y), MIN_REPEATS
    if n < 2 * LOCAL_WINDOW + k or len(np.unique(y)) < CONTINUOUS_SHARE * n:
        return []  # too few outputs, or a discrete column (the ordinary families read it)
    span = y[k - 1 :] - y[: n - k + 1]
    lo_i = np.clip(np.arange(n - k + 1) - LOCAL_WINDOW, 0, n - 1)
    hi_i = np.clip(np.arange(n - k + 1) + k - 1 + LOCAL_WINDOW, 0, n - 1)
    spacing = (y[hi_i] - y[lo_i]) / np.maximum(hi_i - lo_i, 1)
    tight = np.nonzero(span <= SPAN_SHARE * spacing)[0]
    if len(tight) == 0:
        return []
    # Overlapping windows (starts less than k apart) are one cluster.
    breaks = np.nonzero(np.diff(tight) >= k)[0]
    starts = tight[np.concatenate([[0], breaks + 1])]
    ends = tight[np.concatenate([breaks, [len(tight) - 1]])] + k - 1
    widened = []
    for i, e in zip(starts, ends, strict=True):
        lo, hi = float(y[i]), float(y[e])
        a, b = lo - (hi - lo), hi + (hi - lo)
        hits = int(np.searchsorted(y, b, side="right") - np.searchsorted(y, a, side="left"))
        widened.append((a, b, hits))
    return widened


def propose(rows_x: np.ndarray, rows_xp: np.ndarray) -> RareSetScore | None:
    """The rare-event set of one pair from its training outputs (``None``: nothing found).

    Clusters are sought under each input and kept where the other input hits
    them at most :data:`MAX_OTHER_SHARE` as often; both orientations go into
    one set, the ranking stage's two directions then read it either way.  A set
    mixing both orientations would cancel, so only the orientation with the
    most hits is kept.
    """
    fx = np.asarray(rows_x, dtype=np.float64).reshape(len(rows_x), -1)
    fxp = np.asarray(rows_xp, dtype=np.float64).reshape(len(rows_xp), -1)
    best: list[tuple[int, tuple[int, float, float]]] = []
    best_total = 0
    for mine, other in ((fx, fxp), (fxp, fx)):
        found: list[tuple[int, tuple[int, float, float]]] = []
        for j in range(mine.shape[1]):
            col_other = np.sort(other[:, j])
            for lo, hi, hits in clusters(mine[:, j]):
                theirs = int(
                    np.searchsorted(col_other, hi, side="right")
                    - np.searchsorted(col_other, lo, side="left")
                )
                if theirs <= MAX_OTHER_SHARE * hits:
                    found.append((hits, (j, lo, hi)))
        found.sort(key=lambda f: -f[0])
        found = found[:MAX_REGIONS]
        total = sum(h for h, _ in found)
        if total > best_total:
            best, best_total = found, total
    if not best:
        return None
    return RareSetScore(tuple(sorted(r for _, r in best)))
