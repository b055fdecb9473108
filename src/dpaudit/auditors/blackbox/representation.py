"""The ``representation`` attack family: outputs examined as float64 bit patterns, not as reals.

A mechanism computed in floating point releases a float, and which floats can
occur may depend on the input even when the real-valued law is private.  The
textbook Laplace mechanism ``x + rng.laplace(0, b)`` is the classic case
(Mironov, "On Significance of the Least Significant Bits for Differential
Privacy", CCS 2012, §3): for ``x = 1`` an output in ``(−0.5, 0.5)`` is ``1 + n``
computed exactly on the grid of ``n``, a multiple of 2⁻⁵³, while for ``x = 0``
the output is ``n`` itself, with bits far below 2⁻⁵³.  The same holds for a
Gaussian, and for diffprivlib's samplers (Jin et al., "Are We There Yet?
Timing and Floating-Point Attacks on Differential Privacy Systems", S&P 2022;
Delta-Siege, CCS 2023).  A score that reads the value as a real number cannot
see it.

Features.  For each output coordinate, the position ``p`` of its lowest set
bit (``y = m·2^p`` with ``m`` an odd integer).  ``p`` decides the value's
membership of every power-of-two grid (``y`` is a multiple of 2^k iff
``p ≥ k``); together with the exponent it gives the number of trailing zero
bits of the significand.  The score's feature is ``p`` relative to the
column's median on the training outputs, clipped to 14 levels, plus one level
for 0 and one for non-finite values — 16 values per column, so the histogram
family's tables and projections apply unchanged
(:mod:`dpaudit.auditors.blackbox.histogram`).

When the family is trained.  The representation of a value is a function of
the value, so its law differs between two inputs whenever the values' laws do.
The family is added for a pair only when the representation carries
information *beyond the value*: within each band of one sign and one binary
exponent (where the value's law is nearly flat), the significand's trailing
zeros (0, 1, 2, ≥ 3) are compared between the two inputs' training outputs
(chi-square, summed over bands), Bonferroni over the columns at
:data:`GATE_P_VALUE`.  For a mechanism that samples exactly or rounds its
output to a grid its input cannot move (snapping), the trailing zeros within a
band do not depend on the input, and the gate passes with probability at most
about that level.  Columns that are integer-valued or hold few distinct values
are left out (the histogram family reads their bit patterns whole), and so are
values repeated in the training sample (atoms, which the value families see).

The gate and the tables use training outputs only, so the family is part of
the attack and costs the final bound nothing; the final certification of a
representation set is the same as every other set's.  Imports nothing above
``auditors/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.auditors.blackbox.histogram import HistogramScore, train_histogram
from dpaudit.auditors.blackbox.scores import TrainingData

#: Family-wise level of the per-column gate (Bonferroni over the columns examined).
GATE_P_VALUE = 1e-3
#: Most output columns examined per pair (the first ones; the result says so).
MAX_COLUMNS = 64
#: Columns (the strongest by the gate) a representation score reads at most.
SCORE_COLUMNS = 8
#: Training rows per input the gate reads (the first ones): enough for a leak of 1 % mass.
GATE_ROWS = 1 << 15
#: Least training outputs of a (sign, exponent) band for it to enter the gate.
MIN_BAND = 64
#: Trailing-zero levels the gate compares: 0, 1, 2 and ≥ 3.
GATE_LEVELS = 4
#: Lowest-bit levels below the column's median kept apart (lower ones are merged).
LEVELS_BELOW = 11
#: Lowest-bit levels above the column's median kept apart (higher ones are merged).
LEVELS_ABOVE = 2
#: Feature codes for an output of 0 and for a non-finite output.
ZERO_CODE = float(-LEVELS_BELOW - 1)
NONFINITE_CODE = float(LEVELS_ABOVE + 1)
#: Distinct values a column may show in its first training rows and still count as discrete.
_DISCRETE_VALUES = 16
_PEEK = 4096

_MAGNITUDE = np.uint64(0x7FFF_FFFF_FFFF_FFFF)
_MANTISSA = np.uint64((1 << 52) - 1)
_IMPLICIT = np.uint64(1 << 52)


@dataclass(frozen=True)
class BitFields:
    """Per float64 value: sign, biased exponent, significand trailing zeros, lowest-bit position.

    ``lowest`` is ``p`` with ``|y| = m·2^p``, ``m`` odd; for 0 and non-finite values
    it is meaningless and ``zero`` / ``finite`` say which.
    """

    negative: np.ndarray
    exponent: np.ndarray
    trailing_zeros: np.ndarray
    lowest: np.ndarray
    zero: np.ndarray
    finite: np.ndarray


def bit_fields(values: np.ndarray) -> BitFields:
    """The IEEE-754 binary64 fields of every value (any shape; returned flat)."""
    v = np.ascontiguousarray(np.asarray(values, dtype=np.float64).reshape(-1))
    raw = v.view(np.uint64)
    bits = raw & _MAGNITUDE
    biased = (bits >> np.uint64(52)).astype(np.int64)
    mantissa = bits & _MANTISSA
    significand = np.where(biased > 0, mantissa | _IMPLICIT, mantissa)
    lowest_bit = significand & (~significand + np.uint64(1))  # two's complement: x & −x
    # A power of two ≤ 2⁵² converts to float64 exactly; frexp gives its exponent + 1.
    trailing = np.frexp(lowest_bit.astype(np.float64))[1].astype(np.int64) - 1
    zero = significand == 0
    trailing[zero] = 0
    unbiased = np.where(biased > 0, biased - 1075, -1074)
    return BitFields(
        negative=(raw >> np.uint64(63)).astype(bool),
        exponent=biased,
        trailing_zeros=trailing,
        lowest=unbiased + trailing,
        zero=zero,
        finite=biased < 2047,
    )


def _flat(rows: np.ndarray) -> np.ndarray:
    y = np.asarray(rows)
    return y.reshape(len(y), -1)


def continuous_columns(dx: TrainingData, dxp: TrainingData) -> list[int]:
    """Float columns (of the first :data:`MAX_COLUMNS`) that are neither integer nor discrete."""
    ax, ap = _flat(dx.rows), _flat(dxp.rows)
    if ax.dtype.kind != "f" or ap.dtype.kind != "f":
        return []
    out = []
    for j in range(min(ax.shape[1], MAX_COLUMNS)):
        head = np.concatenate([ax[:_PEEK, j], ap[:_PEEK, j]])
        finite = head[np.isfinite(head)]
        if len(np.unique(finite)) <= _DISCRETE_VALUES or np.all(finite == np.rint(finite)):
            continue
        out.append(j)
    return out


def _band_statistic(values: np.ndarray, side: np.ndarray, weights: np.ndarray) -> tuple[float, int]:
    """Chi-square statistic and degrees of freedom of trailing zeros vs input, summed over bands."""
    # Values repeated in the pooled sample are atoms: the value families read them.
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    seen = np.bincount(inverse, weights=weights, minlength=len(counts))
    keep = (seen[inverse] < 2) & np.isfinite(values) & (values != 0)
    if not keep.any():
        return 0.0, 0
    f = bit_fields(values[keep])
    band = f.exponent * 2 + f.negative
    level = np.minimum(f.trailing_zeros, GATE_LEVELS - 1)
    bands, band_index = np.unique(band, return_inverse=True)
    cell = (band_index.ravel() * 2 + side[keep]) * GATE_LEVELS + level
    table = np.bincount(cell, weights=weights[keep], minlength=len(bands) * 2 * GATE_LEVELS)
    table = table.reshape(len(bands), 2, GATE_LEVELS)
    statistic, dof = 0.0, 0
    for t in table:
        total = t.sum()
        rows, cols = t.sum(axis=1), t.sum(axis=0)
        used = cols > 0
        if total < MIN_BAND or rows.min() == 0 or used.sum() < 2:
            continue
        expected = np.outer(rows, cols[used]) / total
        statistic += float((((t[:, used] - expected) ** 2) / expected).sum())
        dof += int(used.sum()) - 1
    return statistic, dof


def gate(dx: TrainingData, dxp: TrainingData, columns: list[int]) -> list[tuple[int, float]]:
    """``(column, p-value)`` of the columns whose bits differ beyond their values, strongest first.

    The stratified chi-square of the module docstring on the first :data:`GATE_ROWS`
    training rows of each input, at :data:`GATE_P_VALUE` divided by the number of columns
    examined.
    """
    from scipy import stats  # here, not at import: the CLI starts without scipy

    ax, ap = _flat(dx.rows)[:GATE_ROWS], _flat(dxp.rows)[:GATE_ROWS]
    side = np.concatenate([np.zeros(len(ax), np.int64), np.ones(len(ap), np.int64)])
    weights = np.concatenate([dx.counts[:GATE_ROWS], dxp.counts[:GATE_ROWS]]).astype(np.float64)
    found = []
    for j in columns:
        statistic, dof = _band_statistic(np.concatenate([ax[:, j], ap[:, j]]), side, weights)
        if dof > 0:
            found.append((float(stats.chi2.sf(statistic, dof)), j))
    level = GATE_P_VALUE / max(len(columns), 1)
    return [(j, p) for p, j in sorted(found) if p < level]


def lowest_bit_codes(
    outputs: np.ndarray, columns: tuple[int, ...], reference: np.ndarray
) -> np.ndarray:
    """Each chosen column's lowest-bit position relative to ``reference``: 16 levels, as floats."""
    y = _flat(outputs)[:, list(columns)]
    f = bit_fields(y)
    codes = np.clip(f.lowest.reshape(y.shape) - reference, -LEVELS_BELOW, LEVELS_ABOVE)
    codes = codes.astype(np.float64)
    codes[f.zero.reshape(y.shape)] = ZERO_CODE
    codes[~f.finite.reshape(y.shape)] = NONFINITE_CODE
    return codes


@dataclass(frozen=True)
class RepresentationScore:
    """Empirical log-ratio of the outputs' lowest-bit codes (a frozen histogram over them)."""

    table: HistogramScore
    #: Output columns (flattened indices) the codes are read from.
    columns: tuple[int, ...]
    #: Per column: the training median of its lowest-bit position (code 0).
    reference: np.ndarray
    #: Per column: the gate's p-value on the training outputs.
    gate_p_values: tuple[float, ...]

    family = "representation"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        return self.table(lowest_bit_codes(outputs, self.columns, self.reference))

    def describe(self) -> str:
        """Formula of the score."""
        ref = ", ".join(f"2^{int(r)}" for r in self.reference)
        return (
            "empirical ln Pr[M(a) has code c] − ln Pr[M(b) has code c], where c is, per output "
            f"column {list(self.columns)} (flattened), the position of the value's lowest set "
            f"bit relative to {ref} (clipped to [−{LEVELS_BELOW}, +{LEVELS_ABOVE}]; 0 and "
            "non-finite values apart), from training counts; a, b = score_inputs (float "
            "representation, Mironov 2012)"
        )

    def set_text(self, threshold: float, tail: str, tie_probability: float) -> str:
        """The set ``{y : score(y) > threshold}`` (``<`` for the lower tail) in bit terms.

        Only for one column: which lowest-bit positions the set holds, e.g. ``{y : the
        lowest set bit of y is 2^-54 or below}``; ``""`` for several columns (the
        witness then names the set by its threshold).
        """
        if len(self.columns) != 1:
            return ""
        ref = int(self.reference[0])
        codes = np.arange(-LEVELS_BELOW - 1, LEVELS_ABOVE + 2, dtype=np.float64)
        scores = self.table(codes.reshape(-1, 1)).astype(np.float64)
        inside = scores > threshold if tail == "upper" else scores < threshold
        if tie_probability == 1.0:
            inside |= scores == threshold
        chosen = [int(c) for c in codes[inside]]
        if not chosen:
            return ""
        words = []
        regular = [c for c in chosen if -LEVELS_BELOW <= c <= LEVELS_ABOVE]
        if regular:
            lo, hi = min(regular), max(regular)
            if regular == list(range(lo, hi + 1)):
                low_end = "" if lo > -LEVELS_BELOW else " or below"
                high_end = "" if hi < LEVELS_ABOVE else " or above"
                if lo == -LEVELS_BELOW:
                    words.append(f"its lowest set bit is 2^{ref + hi} or below")
                elif hi == LEVELS_ABOVE:
                    words.append(f"its lowest set bit is 2^{ref + lo} or above")
                else:
                    words.append(
                        f"its lowest set bit is between 2^{ref + lo}{low_end} and "
                        f"2^{ref + hi}{high_end}"
                    )
            else:
                words.append(
                    "its lowest set bit is one of " + ", ".join(f"2^{ref + c}" for c in regular)
                )
        if ZERO_CODE in chosen:
            words.append("it is 0")
        if NONFINITE_CODE in chosen:
            words.append("it is not finite")
        where = f" (output column {self.columns[0]})" if self.columns[0] else ""
        return "{y : " + " or ".join(words) + f"{where}}}"

    def parameters(self) -> dict[str, Any]:
        """The columns read, their reference bit positions and the gate's p-values."""
        out = self.table.parameters()
        out.update(
            family=self.family,
            columns=list(self.columns),
            reference_bits=[int(r) for r in self.reference],
            gate_p_values=list(self.gate_p_values),
        )
        return out


@dataclass(frozen=True)
class RepresentationLook:
    """What one pair's representation check saw: columns examined and those that differed."""

    examined: int
    differing: tuple[tuple[int, float], ...]


def train_representation(
    dx: TrainingData, dxp: TrainingData
) -> tuple[RepresentationScore | None, RepresentationLook]:
    """The pair's representation score where its training outputs' bits differ, and the look."""
    columns = continuous_columns(dx, dxp)
    differing = gate(dx, dxp, columns) if columns else []
    look = RepresentationLook(len(columns), tuple(differing))
    if not differing:
        return None, look
    chosen = tuple(j for j, _ in differing[:SCORE_COLUMNS])  # the strongest, for the table
    pooled = np.concatenate([_flat(dx.rows)[:, list(chosen)], _flat(dxp.rows)[:, list(chosen)]])
    f = bit_fields(pooled)
    lowest = f.lowest.reshape(pooled.shape).astype(np.float64)
    lowest[(f.zero | ~f.finite).reshape(pooled.shape)] = np.nan
    reference = np.nan_to_num(np.nanmedian(lowest, axis=0), nan=0.0).round().astype(np.int64)
    code_x = TrainingData(lowest_bit_codes(dx.rows, chosen, reference), dx.counts)
    code_xp = TrainingData(lowest_bit_codes(dxp.rows, chosen, reference), dxp.counts)
    table = train_histogram(code_x, code_xp)
    assert table is not None  # without only_if_discrete a table is always built
    score = RepresentationScore(
        table, chosen, reference, tuple(p for _, p in differing[: len(chosen)])
    )
    return score, look


def representation_note(looks: tuple[RepresentationLook, ...], enabled: bool) -> str:
    """The result's sentence on the float representation: whether it was examined, and what."""
    if not enabled:
        return (
            "float representation: not examined (SearchConfig.representation is off): the "
            "outputs were read as real numbers, so a leak in their low-order bits could not "
            "have been seen"
        )
    examined = [look for look in looks if look.examined]
    if not examined:
        return (
            "float representation: not examined: no output column is a non-integer float "
            "with many distinct values (discrete outputs are read whole, bit patterns "
            "included, by the histogram family where it runs)"
        )
    differing = [look for look in examined if look.differing]
    columns = max(look.examined for look in examined)
    if not differing:
        return (
            f"float representation: the outputs' low-order bits ({columns} column(s)) were "
            f"compared between the inputs on {len(examined)} pair(s) and agreed (stratified "
            f"chi-square, level {GATE_P_VALUE:g}), so no sets on them were added; bit patterns "
            "beyond the last three significand bits, and grids other than powers of two, were "
            "not examined"
        )
    p = min(p for look in differing for _, p in look.differing)
    return (
        f"float representation: on {len(differing)} of {len(examined)} pair(s) the outputs' "
        "lowest bits differed between the inputs beyond their values (stratified "
        f"chi-square p = {p:.3g}); sets on the position of each output's lowest set bit "
        "were ranked beside the value sets (Mironov, CCS 2012)"
    )
