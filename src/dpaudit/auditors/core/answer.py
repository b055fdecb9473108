"""The answer of every audit, assembled once: the verdict rule, its sentence, the result.

Auditors propose input pairs and events and have them certified on fresh samples
(:mod:`dpaudit.auditors.core.certify`); what they hand to this module is what the
certified statements say about the claim, as :class:`Judged` values, the phrases that
state it in their own terms (:class:`Evidence`) and their typed detail.  This module then
does, for every auditor alike:

* the verdict, by :func:`judge` — **the one rule**: *violation* when any certified
  statement refutes the claim; *outside the claim* when the claim constrains none of the
  statements; *inconclusive* when one of the statements the claim covers could not have
  shown a violation at the sizes drawn (its power did not reach the loss the claim allows);
  otherwise *no violation found*, which never shows that a mechanism is private;
* the verdict sentence (:func:`dpaudit.verdicts.state`) and the confidence sentence
  (:func:`joint_confidence`: Clopper–Pearson per bound, Bonferroni over the ``K``
  statements certified together);
* the one construction of :class:`~dpaudit.results.AuditResult` (:func:`answer`), with the
  trust fields passed in, never patched afterwards (``tests/test_architecture.py`` checks
  that no other module constructs a result).

An auditor whose statements are not all of the claim's question (a profile audit tries a
grid of ε, of which only some can be tested at a given size) hands over one
:class:`Judged` per question it answers.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from dpaudit.auditors.core.trust import TrustReport, trust_fields
from dpaudit.errors import InvalidArgumentError
from dpaudit.results.audit import AuditorKind, AuditResult
from dpaudit.results.findings import DeclarationFinding
from dpaudit.verdicts import Evidence, Verdict, state
from dpaudit.witness import Witness

__all__ = [
    "Evidence",
    "Judged",
    "answer",
    "epsilon_evidence",
    "joint_answer",
    "joint_confidence",
    "judge",
]


@dataclass(frozen=True)
class Judged:
    """What one certified statement (or one question of the claim) says about the claim.

    ``refuted``: its certified bound exceeds what the claim allows; ``covered``: the claim
    constrains it at all (a metric pair at distance ∞ is not); ``testable``: at the sizes
    drawn, the statement could have shown a violation of the size the claim allows
    (:mod:`dpaudit.auditors.core.power`).
    """

    refuted: bool
    covered: bool = True
    testable: bool = True

    @classmethod
    def of_bound(cls, bound: float, allowed: float, *, testable: bool = True) -> Judged:
        """A statement with certified lower bound ``bound`` where the claim allows ``allowed``.

        ``allowed = inf``: the claim does not constrain the statement.
        """
        if math.isnan(bound) or math.isnan(allowed):
            raise InvalidArgumentError("bound", (bound, allowed), "numbers, not NaN")
        covered = not (math.isinf(allowed) and allowed > 0)
        return cls(refuted=covered and bound > allowed, covered=covered, testable=testable)


def judge(judged: Sequence[Judged]) -> Verdict:
    """The verdict on the claim from its judged statements (the one rule, module docstring)."""
    if not judged:
        raise InvalidArgumentError("judged", judged, "at least one judged statement")
    if any(j.refuted for j in judged):
        return Verdict.VIOLATION
    covered = [j for j in judged if j.covered]
    if not covered:
        return Verdict.OUTSIDE_CLAIM
    if not all(j.testable for j in covered):
        return Verdict.INCONCLUSIVE
    return Verdict.NO_VIOLATION_FOUND


def _fmt(v: float) -> str:
    return "inf" if math.isinf(v) else f"{v:.6g}"


def epsilon_evidence(bound: float, claimed: float, delta: float = 0.0, blind: str = "") -> Evidence:
    """The phrases of an (ε, δ) verdict on a certified bound ``bound`` on ε."""
    claim = f"claimed {claimed:g}" + (f" (δ = {delta:g})" if delta > 0 else "")
    return Evidence(
        refuted=f"ε ≥ {_fmt(bound)} > {claim}",
        held=f"ε_lcb = {_fmt(bound)} ≤ {claim}",
        blind=blind,
    )


def untestable_epsilon(claimed: float, ceiling: float, n: int, unit: str = "final samples") -> str:
    """Why an ε claim could not be refuted: it lies above the sample size's ceiling."""
    return (
        f"no bound above {ceiling:.3g} can be certified with {n} {unit} per input, so a "
        f"violation of ε = {claimed:g} could not have been seen (about e^ε·ln(1/α) samples "
        f"per input would be needed)"
    )


def joint_confidence(
    confidence: float, statements: int, chosen: str = "", look_error: float | None = None
) -> str:
    """The confidence sentence: ``chosen`` (how the statements were chosen), then the split.

    Every auditor certifies ``statements`` statements together, each bound at error
    ``α/(2·K)`` (:func:`dpaudit.auditors.core.certify.split_error`); a sequential final
    stage (:mod:`dpaudit.auditors.core.sequential`) at ``α_l/(2·K)``, ``look_error`` being
    the share ``α_l`` of the look it stopped at.
    """
    if statements < 1:
        raise InvalidArgumentError("statements", statements, "an integer >= 1")
    alpha = 1.0 - confidence
    lead = f"{chosen.rstrip()} " if chosen else ""
    if look_error is None:
        split = f"α/(2·{statements}) = {alpha / (2 * statements):.4g} (α = {alpha:.4g}, Bonferroni)"
    else:
        split = (
            f"α_l/(2·{statements}) = {look_error / (2 * statements):.4g}, where α_l = "
            f"{look_error:.4g} is the share of α = {alpha:.4g} of the look the audit stopped at "
            "(Bonferroni over statements, estimates and looks)"
        )
    return (
        f"{lead}All {statements} certified statement(s) hold jointly with probability ≥ "
        f"{confidence:g}: p1_lower and p2_upper are each one-sided Clopper–Pearson bounds at "
        f"error {split}."
    )


def answer(
    *,
    kind: AuditorKind,
    mechanism: dict[str, Any],
    claim: Any,
    judged: Sequence[Judged],
    evidence: Evidence,
    bound: float,
    confidence: float,
    confidence_statement: str,
    witness: Witness | None,
    seed: int,
    samples: dict[str, int],
    timing: dict[str, float],
    detail: Any,
    trust: TrustReport | None,
    notes: Iterable[str] = (),
    power: dict[str, float] | None = None,
    claim_text: str | None = None,
    level: str | None = None,
    findings: Sequence[DeclarationFinding] = (),
) -> AuditResult:
    """The result of an audit: verdict by :func:`judge`, its sentence, every field.

    ``claim``: the claim object (its ``describe()`` is the claim's text unless
    ``claim_text`` overrides it; ``epsilon``/``delta`` where it has them, NaN/0 otherwise);
    ``bound``: the summary lower bound, floored at 0 (a bound is never reported negative);
    ``level``: the confidence as the sentence states it (default ``f"{confidence:g}"``);
    ``findings``: declarations the auditor itself found contradicted, beside ``trust``'s.
    """
    verdict = judge(judged)
    return AuditResult(
        kind=kind,
        mechanism=mechanism,
        claim=claim_text if claim_text is not None else claim.describe(),
        claimed_epsilon=float(getattr(claim, "epsilon", math.nan)),
        claimed_delta=float(getattr(claim, "delta", 0.0)),
        epsilon_lower_bound=max(0.0, bound),
        confidence=confidence,
        verdict=verdict,
        verdict_text=state(verdict, evidence, level or f"{confidence:g}"),
        witness=witness,
        confidence_statement=confidence_statement,
        seed=seed,
        samples=samples,
        timing=timing,
        detail=detail,
        power=power or {},
        **trust_fields(trust, notes, findings),
    )


def joint_answer(
    searched: AuditResult,
    certified: AuditResult | None,
    confidence: float,
    shares: dict[str, float],
    note: str = "",
) -> AuditResult:
    """One answer for a claim audited by two certifiers at their ``shares`` of the error.

    The black-box search and the profile certifier each certified at their share
    (:func:`~dpaudit.auditors.core.protocol.error_shares`), so every statement of both holds
    jointly at ``confidence`` (union bound).  The answer is the certifier's result when it
    alone refutes the claim, the search's otherwise; the other's finding becomes a note
    (``note``: why the certifier did not run, when ``certified`` is None), the confidence
    and its sentence are the joint ones, and the time is the sum.
    """
    alpha, k = 1.0 - confidence, len(shares)
    split = (
        f"The black-box search and the profile certifier audited this (ε, δ) claim under one "
        f"error budget α = {alpha:.4g}, each at α/{k} = {alpha / k:.4g}, so every statement "
        f"below holds jointly with probability ≥ {confidence:g}. "
    )
    if certified is not None and certified.violation and not searched.violation:
        chosen, other = certified, searched
        other_note = f"black-box search: {searched.verdict_text}"
    else:
        chosen, other = searched, certified
        other_note = note
        if certified is not None:
            point = certified.detail.profile[0]
            other_note = (
                f"profile certifier on {certified.detail.pair_origin}: "
                f"δ(ε = {point.epsilon:g}) ≥ {max(point.delta_lower_bound, 0.0):.4g} "
                f"(claimed {point.claimed_delta:g})"
            )
    timing = dict(chosen.timing)
    if other is not None:
        timing["total"] = round(chosen.timing["total"] + other.timing["total"], 4)
    return dataclasses.replace(
        chosen,
        verdict_text=f"{chosen.verdict_text}; with the other certifier, jointly at {confidence:g}",
        confidence=confidence,
        confidence_statement=split + chosen.confidence_statement,
        notes=(*chosen.notes, *((other_note,) if other_note else ())),
        timing=timing,
    )
