"""Results of the metric audit: one :class:`PairResult` per pair, one :class:`MetricAuditResult`.

Each pair's statement carries its verdict (:mod:`dpaudit.verdicts`), its
certified bound against ``ε·d``, and — without a violation — its power
(:mod:`dpaudit.auditors.metric.power`): what the audit could have flagged and
the samples an inconclusive pair would need; where the output law is known,
the exact loss beside it (:mod:`dpaudit.auditors.metric.exact`).  The CLI
renders these fields from JSON with :func:`power_clause`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

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
    verdict: str
    samples_needed: int | None = None
    #: Power (no violation only, :mod:`dpaudit.auditors.metric.power`): the mass of the
    #: rarest output seen, the smallest loss certified above ε·d there with probability
    #: ≈ 90 %, and that loss per set mass (``power``, with the sample size's ceiling).
    resolution_mass: float | None = None
    detectable_loss: float | None = None
    power: dict[str, float] = field(default_factory=dict)
    #: The pair's exact loss where the mechanism's output law is computable (else None).
    exact_loss: float | None = None

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
    detectable: float | str | None,
    mass: float | None,
    needed: int | None,
    exact: float | str | None = None,
) -> str:
    """What a pair's audit could have flagged, and the samples it would need (JSON fields too).

    `` (could flag a loss ≥ L on an output of mass ≥ m; needs ≈ N final samples per
    input; exact loss E)``; ``""`` for a pair without a power statement (a
    violation, or outside the claim) and no exact loss.
    """
    parts = []
    # Fields read back from JSON carry infinities as strings ("inf"): float() restores them.
    detectable = None if detectable is None else float(detectable)
    exact = None if exact is None else float(exact)
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


@dataclass(frozen=True)
class MetricAuditResult:
    """Result of :func:`audit_metric`; ``pairs`` sorted by ratio ``ε_lcb/(ε·d)``, worst first."""

    mechanism: dict[str, Any]
    claim: str
    epsilon: float
    confidence: float
    violation: bool
    verdict: str
    pairs: tuple[PairResult, ...]
    samples: dict[str, int]
    candidates_final: int
    confidence_statement: str
    seed: int
    timing: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    #: False when the mechanism draws from a source dpaudit cannot seed (see ``notes``).
    reproducible: bool = True
    #: Where the output law is known: its χ² check against the sampler
    #: (:mod:`dpaudit.auditors.metric.exact`); each pair then carries ``exact_loss``.
    law_check: dict[str, Any] = field(default_factory=dict)

    @property
    def worst(self) -> PairResult | None:
        """The pair with the largest ratio (the witness when there is a violation)."""
        return self.pairs[0] if self.pairs else None

    @property
    def witness(self) -> Witness | None:
        """The worst pair as the shared :class:`~dpaudit.witness.Witness` (x = the word of p1)."""
        r = self.worst
        if r is None:
            return None
        other = r.w_prime if r.numerator == r.w else r.w
        return Witness(
            WitnessKind.BLACK_BOX,
            r.numerator,
            other,
            f"{r.set_size} output(s) ({', '.join(r.set_preview)}): {r.set_rule}",
            r.epsilon_lower_bound,
            confidence=self.confidence,
            pair_origin=(
                f"{r.origin}; d = {fmt_value(r.distance)}, ε·d = {fmt_value(r.allowed_loss)}"
            ),
            p1=r.p1,
            p2=r.p2,
            epsilon_estimate=r.epsilon_estimate,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (``worst`` included)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["worst"] = self.worst
        out["witness"] = self.witness
        out["kind"] = "metric-audit"
        return out


def fmt_value(v: float) -> str:
    """``inf`` or four significant digits."""
    return "inf" if math.isinf(v) else f"{v:.4g}"
