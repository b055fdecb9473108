"""What the metric audit reports: one :class:`PairResult` per pair, in :class:`MetricDetail`.

Each pair's statement carries its verdict (:mod:`dpaudit.verdicts`), its
certified bound against ``ε·d``, and — without a violation — its power
(:mod:`dpaudit.auditors.metric.power`): what the audit could have flagged and
the samples an inconclusive pair would need; where the output law is known,
the exact loss beside it (:mod:`dpaudit.auditors.metric.exact`).  The audit's
result is the shared :class:`~dpaudit.results.audit.AuditResult` with a
:class:`MetricDetail`; its witness is the worst pair's (:func:`pair_witness`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from dpaudit.results.audit import AuditorKind, register_detail
from dpaudit.results.statement import CertifiedStatement, statement_of
from dpaudit.verdicts import Verdict
from dpaudit.witness import ProbabilityEstimate, Witness, WitnessKind

#: Per-pair verdicts, from the shared vocabulary (:mod:`dpaudit.verdicts`).
VIOLATION = Verdict.VIOLATION.value
NO_VIOLATION = Verdict.NO_VIOLATION_FOUND.value
INCONCLUSIVE = Verdict.INCONCLUSIVE.value
OUTSIDE = Verdict.OUTSIDE_CLAIM.value


@dataclass(frozen=True)
class PairResult:
    """The audit of one pair: ``d``, allowed loss ``ε·d``, the set, the bound, the verdict."""

    w: str
    w_prime: str
    origin: str
    distance: float
    allowed_loss: float
    numerator: str
    set_rule: str
    set_size: int
    set_preview: tuple[str, ...]
    p1: ProbabilityEstimate
    p2: ProbabilityEstimate
    epsilon_estimate: float
    epsilon_lower_bound: float
    ratio: float
    verdict: Verdict
    samples_needed: int | None = None
    #: Power (no violation only, :mod:`dpaudit.auditors.metric.power`): the mass of the
    #: rarest output seen, the smallest loss certified above ε·d there with probability
    #: ≈ 90 %, and that loss per set mass (``power``, with the sample size's ceiling).
    resolution_mass: float | None = None
    detectable_loss: float | None = None
    power: dict[str, float] = field(default_factory=dict)
    #: The pair's exact loss where the mechanism's output law is computable (else None).
    exact_loss: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", Verdict(self.verdict))

    def describe(self) -> str:
        """One line: pair, d, ε·d, ε_lcb, ratio, verdict, and what the audit could see."""
        return (
            f"({self.w!r}, {self.w_prime!r}) [{self.origin}] d = {fmt_value(self.distance)}, "
            f"ε·d = {fmt_value(self.allowed_loss)}, ε_lcb = {fmt_value(self.epsilon_lower_bound)}, "
            f"ratio = {fmt_value(self.ratio)}: {self.verdict}{self.power_clause()}"
        )

    def power_clause(self) -> str:
        """`` (could flag a loss ≥ L on outputs of mass ≥ m; needs ≈ N …)``, or ``""``."""
        return power_clause(
            self.verdict,
            self.detectable_loss,
            self.resolution_mass,
            self.samples_needed,
            self.exact_loss,
        )


def power_clause(
    verdict: str,
    detectable: float | None,
    mass: float | None,
    needed: int | None,
    exact: float | None = None,
) -> str:
    """What a pair's audit could have flagged, and the samples it would need.

    `` (could flag a loss ≥ L on an output of mass ≥ m; needs ≈ N final samples per
    input; exact loss E)``; ``""`` for a pair without a power statement (a
    violation, or outside the claim) and no exact loss.
    """
    parts = []
    if detectable is not None and mass is not None:
        seen = "no loss" if math.isinf(detectable) else f"a loss ≥ {detectable:.3g}"
        parts.append(f"could flag {seen} on an output of mass ≥ {mass:.2g}")
        if verdict == INCONCLUSIVE:
            parts.append(
                f"needs ≈ {needed:.3g} final samples per input"
                if needed is not None
                else "no sample size shows every positive loss"
            )
    if exact is not None:
        parts.append(f"exact loss {fmt_value(exact)}")
    return f" ({'; '.join(parts)})" if parts else ""


@register_detail(AuditorKind.METRIC)
@dataclass(frozen=True)
class MetricDetail:
    """What only the metric audit reports: every pair's statement, worst first.

    ``pairs`` are sorted by ratio ``ε_lcb/(ε·d)``, worst first;
    ``certified_proposals``: ``K``, the (pair, set) statements certified
    together on the final samples (each one-sided bound at ``α/(2K)``);
    ``law_check``: where the output law is known, its χ² check against the
    sampler (:mod:`dpaudit.auditors.metric.exact`); each pair then carries
    ``exact_loss``.
    """

    pairs: tuple[PairResult, ...]
    certified_proposals: int
    law_check: dict[str, Any] = field(default_factory=dict)

    @property
    def certified(self) -> tuple[CertifiedStatement, ...]:
        """Each pair's statement as every auditor's :class:`~dpaudit.results.CertifiedStatement`
        (``forward``: the statement's ``a`` is the pair's ``w``)."""
        return tuple(
            statement_of(
                i, r.numerator == r.w, r.set_rule, "count ratio", r.p1, r.p2, r.epsilon_lower_bound
            )
            for i, r in enumerate(self.pairs)
        )

    @property
    def worst(self) -> PairResult | None:
        """The pair with the largest ratio (the witness when there is a violation)."""
        return self.pairs[0] if self.pairs else None


def pair_witness(r: PairResult, confidence: float) -> Witness:
    """Pair ``r``'s statement as the shared :class:`~dpaudit.witness.Witness` (x = p1's word)."""
    other = r.w_prime if r.numerator == r.w else r.w
    return Witness(
        WitnessKind.BLACK_BOX,
        r.numerator,
        other,
        f"{r.set_size} output(s) ({', '.join(r.set_preview)}): {r.set_rule}",
        r.epsilon_lower_bound,
        confidence=confidence,
        pair_origin=f"{r.origin}; d = {fmt_value(r.distance)}, ε·d = {fmt_value(r.allowed_loss)}",
        p1=r.p1,
        p2=r.p2,
        epsilon_estimate=r.epsilon_estimate,
    )


def fmt_value(v: float) -> str:
    """``inf`` or four significant digits."""
    return "inf" if math.isinf(v) else f"{v:.4g}"
