"""The one verdict vocabulary shared by every auditor, the reproduced figures and the report.

An audit is one-sided: it can show that a claim is false (ε ≥ x > claimed ε
with confidence 1 − α) and otherwise says "no violation found" — never that a
mechanism is private.  :class:`Verdict` names the outcomes,
:func:`state` is the only sentence that states one (from the
auditor's :class:`Evidence`).  Two more outcomes: *inconclusive* (the sizes
drawn could not have shown a violation of the size the claim allows, at some
statement the claim covers) and *outside the claim* (the claim constrains
nothing audited, e.g. metric-DP pairs at d = ∞).  The rule that picks one is
:func:`dpaudit.auditors.core.answer.judge`.  A basic module:
imports nothing from dpaudit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum


class Verdict(StrEnum):
    """Outcome of one audit of one claim."""

    VIOLATION = "violation"
    NO_VIOLATION_FOUND = "no violation found"
    #: No violation, and too few samples to have shown one of the size the claim allows.
    INCONCLUSIVE = "inconclusive"
    #: The claim constrains nothing audited (a metric-DP pair at d(w, w') = ∞).
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


@dataclass(frozen=True)
class Evidence:
    """The phrases a verdict sentence is made of, in the auditor's own terms.

    ``refuted``: what the certified bounds show when they refute the claim (``ε ≥ 2.1 >
    claimed 1``); ``held``: what they show when they do not (``ε_lcb = 0.4 ≤ claimed 1``);
    ``blind``: why the audit could not have seen a violation (an *inconclusive* audit);
    ``outside``: why the claim constrains nothing that was audited.
    """

    refuted: str
    held: str
    blind: str = ""
    outside: str = ""


def state(verdict: Verdict, evidence: Evidence, level: str) -> str:
    """The one sentence that states a verdict, at confidence ``level`` (e.g. ``"0.95"``).

    A violation is stated with its confidence; "no violation found" always adds that it does
    not show the mechanism private; "inconclusive" always adds that it is not a pass.
    """
    verdict = Verdict(verdict)
    if verdict is Verdict.VIOLATION:
        return f"violation: {evidence.refuted} at confidence {level}"
    if verdict is Verdict.INCONCLUSIVE:
        why = evidence.blind or "the audit could not have seen a violation of the claim's size"
        return f"inconclusive: {why}; this is not a pass"
    if verdict is Verdict.OUTSIDE_CLAIM:
        return f"outside the claim: {evidence.outside or 'the claim constrains no audited pair'}"
    return (
        f"no violation found: {evidence.held} "
        f"(confidence {level}; this does not show that the mechanism is private)"
    )


def verdict_text(
    lower_bound: float, claimed: float, confidence: float | str, delta: float = 0.0
) -> str:
    """:func:`state` for a bound on ε: a violation with its confidence, or "no violation found".

    ``confidence`` is a level (formatted with ``:g``) or a phrase such as
    ``"0.95 (family-wise over 210 cells)"``.
    """
    level = f"{confidence:g}" if isinstance(confidence, float | int) else confidence
    claim = f"claimed {claimed:g}" + (f" (δ = {delta:g})" if delta > 0 else "")
    evidence = Evidence(
        refuted=f"ε ≥ {_fmt(lower_bound)} > {claim}", held=f"ε_lcb = {_fmt(lower_bound)} ≤ {claim}"
    )
    return state(Verdict.from_bound(lower_bound, claimed), evidence, level)


def _fmt(v: float) -> str:
    return "inf" if math.isinf(v) else f"{v:.6g}"
