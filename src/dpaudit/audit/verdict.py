"""Result values of the black-box ε lower-bound audit (:mod:`dpaudit.audit.blackbox`).

Everything here is an immutable value that serialises to JSON through
:mod:`dpaudit.serialization`.  The verdict is always one-sided: an audit can
show that a claim is *false* (ε ≥ x > claimed ε with confidence 1 − α); it never
shows that a mechanism *is* private.  The verdict words themselves are
:mod:`dpaudit.verdicts` (shared with the sanity check and the report).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dpaudit.verdicts import Verdict, verdict_text

__all__ = [
    "AuditResult",
    "ProbabilityEstimate",
    "ThresholdAttack",
    "Verdict",
    "Witness",
    "verdict_text",
]


@dataclass(frozen=True)
class ProbabilityEstimate:
    """An estimated probability ``Pr[M(x) ∈ S]`` with its one-sided Clopper–Pearson bound.

    ``bound`` is a *lower* bound for the numerator probability ``p1`` and an
    *upper* bound for the denominator probability ``p2``; ``bound_side`` says
    which, and ``bound_error`` is the error probability of that one-sided bound.
    """

    hits: int
    samples: int
    bound: float
    bound_side: str
    bound_error: float

    @property
    def estimate(self) -> float:
        """The maximum-likelihood estimate ``hits / samples``."""
        return self.hits / self.samples

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (includes the point estimate)."""
        return {
            "hits": self.hits,
            "samples": self.samples,
            "estimate": self.estimate,
            "bound": self.bound,
            "bound_side": self.bound_side,
            "bound_error": self.bound_error,
        }


@dataclass(frozen=True)
class ThresholdAttack:
    """A distinguishing set ``S`` defined by thresholding a score of the output.

    ``S = {y : score(y) > t} ∪ {y : score(y) = t, kept with probability q}`` for
    ``tail = "upper"``, and the same with ``<`` for ``tail = "lower"``.  The score
    is high where the output looks like it came from ``score_inputs[0]``.
    ``q`` (``tie_probability``) is realised by an independent coin per output,
    drawn from the work unit's seeded generator.
    """

    family: str
    score: str
    score_inputs: tuple[tuple[float, ...], tuple[float, ...]]
    tail: str
    threshold: float
    tie_probability: float
    target_mass: float | None = None
    classifier: dict[str, Any] | None = None

    @property
    def set_description(self) -> str:
        """The set ``S`` in words."""
        op = ">" if self.tail == "upper" else "<"
        t = f"{self.threshold:.9g}"
        if self.tie_probability == 0.0:
            return f"score(y) {op} {t}"
        if self.tie_probability == 1.0:
            return f"score(y) {op}= {t}"
        return f"score(y) {op} {t}, or score(y) = {t} with probability {self.tie_probability:.6g}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the set in words."""
        out = {
            "family": self.family,
            "score": self.score,
            "score_inputs": [list(self.score_inputs[0]), list(self.score_inputs[1])],
            "tail": self.tail,
            "threshold": self.threshold,
            "tie_probability": self.tie_probability,
            "set": self.set_description,
        }
        if self.target_mass is not None:
            out["target_mass"] = self.target_mass
        if self.classifier is not None:
            out["classifier"] = self.classifier
        return out


@dataclass(frozen=True)
class Witness:
    """Re-checkable evidence: ``Pr[M(x) ∈ S] ≥ e^ε·Pr[M(x') ∈ S] + δ`` fails for ``ε < bound``.

    ``p1`` estimates ``Pr[M(x) ∈ S]`` (with a lower bound), ``p2`` estimates
    ``Pr[M(x') ∈ S]`` (with an upper bound), both on fresh samples drawn after
    the attack was fixed.  ``seeds`` gives the root seed and the work-unit keys
    from which those samples were drawn.
    """

    x: tuple[float, ...]
    x_prime: tuple[float, ...]
    pair_origin: str
    attack: ThresholdAttack
    p1: ProbabilityEstimate
    p2: ProbabilityEstimate
    epsilon_estimate: float
    epsilon_lower_bound: float
    seeds: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AuditResult:
    """Outcome of one black-box audit; see :func:`dpaudit.audit.blackbox.audit`."""

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
    #: :class:`dpaudit.audit.declarations.DeclarationFinding` values.
    declaration_findings: tuple[Any, ...] = ()
