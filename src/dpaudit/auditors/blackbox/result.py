"""Result values of the black-box ε lower-bound audit (:mod:`dpaudit.auditors.blackbox.auditor`).

Everything here is an immutable value that serialises to JSON through
:mod:`dpaudit.serialization`.  The verdict is always one-sided: an audit can
show that a claim is *false* (ε ≥ x > claimed ε with confidence 1 − α); it never
shows that a mechanism *is* private.  The verdict words themselves are
:mod:`dpaudit.verdicts` and the witness is :class:`dpaudit.witness.Witness` (both
shared with the sanity check, the analytic truth and the report; re-exported here).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dpaudit.verdicts import Verdict, verdict_text
from dpaudit.witness import ProbabilityEstimate, ThresholdAttack, Witness

__all__ = [
    "AuditResult",
    "ProbabilityEstimate",
    "ThresholdAttack",
    "Verdict",
    "Witness",
    "verdict_text",
]


@dataclass(frozen=True)
class AuditResult:
    """Outcome of one black-box audit; see :func:`dpaudit.auditors.blackbox.auditor.audit`."""

    mechanism: dict[str, Any]
    claim: str
    claimed_epsilon: float
    claimed_delta: float
    epsilon_lower_bound: float
    confidence: float
    violation: bool
    verdict: str
    witness: Witness | None
    mode: str
    attack_families: tuple[str, ...]
    samples: dict[str, int]
    pairs_tried: int
    candidates_compared: int
    final_candidates: int
    confidence_statement: str
    seed: int
    timing: dict[str, float]
    notes: tuple[str, ...] = ()
    #: False when the mechanism draws from a source dpaudit cannot seed (see ``notes``).
    reproducible: bool = True
    #: Declarations (``log_prob``, ``noise_from_uniform``) the real sampler contradicts:
    #: :class:`dpaudit.auditors.core.declarations.DeclarationFinding` values.
    declaration_findings: tuple[Any, ...] = ()
    #: What the audit could have seen (:func:`dpaudit.auditors.core.power.power_summary`): the
    #: smallest true loss it would have certified above the claim, per set mass, and the
    #: sample size's ceiling.  Empty when a violation was found.
    power: dict[str, float] = field(default_factory=dict)
