"""The one verdict vocabulary shared by every auditor, the reproduced figures and the report.

An audit is one-sided: it can show that a claim is false (ε ≥ x > claimed ε
with confidence 1 − α) and otherwise says "no violation found" — never that a
mechanism is private.  :class:`Verdict` names the outcomes,
:func:`verdict_text` is the only sentence that states one.  Per-pair metric-DP
audits add two outcomes of their own: *inconclusive* (the sample is too small
for an honest bound at the pair's allowed loss ε·d) and *outside the claim*
(d = ∞: the claim constrains nothing for that pair).  A basic module:
imports nothing from dpaudit.
"""

from __future__ import annotations

import math
from enum import StrEnum


class Verdict(StrEnum):
    """Outcome of one audit of one claim."""

    VIOLATION = "violation"
    NO_VIOLATION_FOUND = "no violation found"
    #: Metric-DP pairs only: no violation, and too few samples to show one at ε·d.
    INCONCLUSIVE = "inconclusive"
    #: Metric-DP pairs only: d(w, w') = ∞, the claim says nothing about the pair.
    OUTSIDE_CLAIM = "outside the claim"

    @classmethod
    def of(cls, violation: bool) -> Verdict:
        """The verdict for a violation flag."""
        return cls.VIOLATION if violation else cls.NO_VIOLATION_FOUND

    @classmethod
    def from_bound(cls, lower_bound: float, claimed: float) -> Verdict:
        """VIOLATION exactly when the one-sided lower bound exceeds the claimed ε."""
        return cls.of(lower_bound > claimed)

    @property
    def label(self) -> str:
        """Short form for tables: ``VIOLATION``, ``none found``, ``inconclusive``, ``outside``."""
        return {
            Verdict.VIOLATION: "VIOLATION",
            Verdict.NO_VIOLATION_FOUND: "none found",
            Verdict.INCONCLUSIVE: "inconclusive",
            Verdict.OUTSIDE_CLAIM: "outside",
        }[self]


def verdict_text(
    lower_bound: float, claimed: float, confidence: float | str, delta: float = 0.0
) -> str:
    """One-sided verdict in words: a violation with its confidence, or "no violation found".

    ``confidence`` is a level (formatted with ``:g``) or a phrase such as
    ``"0.95 (family-wise over 210 cells)"``.
    """
    level = f"{confidence:g}" if isinstance(confidence, float | int) else confidence
    claim = f"claimed {claimed:g}" + (f" (δ = {delta:g})" if delta > 0 else "")
    if Verdict.from_bound(lower_bound, claimed) is Verdict.VIOLATION:
        return f"violation: ε ≥ {_fmt(lower_bound)} > {claim} at confidence {level}"
    return (
        f"no violation found: ε_lcb = {_fmt(lower_bound)} ≤ {claim} "
        f"(confidence {level}; this does not show that the mechanism is private)"
    )


def _fmt(v: float) -> str:
    return "inf" if math.isinf(v) else f"{v:.6g}"
