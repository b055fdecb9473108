"""The verdict of a profile audit and the sentences that state it.

One-sided, as every verdict here: a violation with its confidence, or "no
violation found" together with what the audit could have detected, or
"inconclusive" where nothing could have been seen.  Rényi and zCDP claims get a
plain statement of what samples can and cannot certify about them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dpaudit.auditors.core.answer import Evidence, Judged
from dpaudit.auditors.profile.result import ProfileDetail, ProfilePoint, RenyiPoint
from dpaudit.claims import GaussianDP, RenyiDP, ZeroConcentratedDP
from dpaudit.verdicts import Verdict

#: What finite samples can say about a Rényi-type claim (printed with every such audit).
RENYI_NOTE = (
    "samples certify lower bounds on Pr[M(x) ∈ S] and upper bounds on Pr[M(x') ∈ S] for "
    "finitely many sets S, hence lower bounds on the privacy profile δ(ε) and on the Rényi "
    "divergence of the binary post-processing 1{y ∈ S}; they never certify that a claim holds, "
    "and Rényi divergences of large order are driven by events rarer than 1/n, so ε_lcb(α)/α "
    "falls as α grows. Every RDP/zCDP claim implies a profile (CKS 2020 / Mironov 2017 "
    "conversion): a certified excess over that profile refutes the claim itself"
)


def judged_claim(
    claim: Any, points: Sequence[ProfilePoint], mu: float, renyi: Sequence[RenyiPoint], rho: float
) -> Judged:
    """The profile audit's one question, judged: does any certified statement refute the claim?

    Refuted by a grid point's δ, a certified μ (GDP claims), a Rényi divergence or ρ (zCDP);
    testable unless no ε of the grid could have certified a δ above the claim at these sizes.
    """
    bad = any(p.verdict is Verdict.VIOLATION for p in points)
    bad |= isinstance(claim, GaussianDP) and mu > claim.mu
    bad |= any(r.verdict is Verdict.VIOLATION for r in renyi)
    bad |= isinstance(claim, ZeroConcentratedDP) and rho > claim.rho
    blind = all(p.verdict is Verdict.INCONCLUSIVE for p in points)
    return Judged(refuted=bad, testable=not blind)


def _level(r: dict[str, Any]) -> str:
    return f"confidence {r['confidence']:g}, jointly over {r['statements']} certified sets"


def _profile_lines(r: dict[str, Any]) -> list[str]:
    points: tuple[ProfilePoint, ...] = r["profile"]
    bad = [p for p in points if p.verdict is Verdict.VIOLATION]
    lines = []
    if bad:
        w = max(bad, key=lambda p: p.delta_lower_bound - p.claimed_delta)
        lines.append(
            f"VIOLATION of the claimed profile for ε in [{bad[0].epsilon:g}, {bad[-1].epsilon:g}] "
            f"({len(bad)} of {len(points)} grid points); largest excess at ε = {w.epsilon:g}: "
            f"δ ≥ {w.delta_lower_bound:.4g} > claimed δ(ε) = {w.claimed_delta:.4g} ({_level(r)})"
        )
    seen = [p for p in points if p.verdict is not Verdict.INCONCLUSIVE]
    if not bad and seen:
        lo = min(p.detectable_excess for p in seen)
        hi = max(p.detectable_excess for p in seen)
        lines.append(
            f"no violation found: certified δ_lcb(ε) ≤ claimed δ(ε) at every ε in "
            f"[{seen[0].epsilon:g}, {seen[-1].epsilon:g}]; with {r['final_samples']} final "
            f"samples per input an excess smaller than {lo:.3g} to {hi:.3g} (depending on ε) "
            "could not have been certified by the sets found"
        )
    dark = [p for p in points if p.verdict is Verdict.INCONCLUSIVE]
    if dark:
        lines.append(
            f"inconclusive for ε in [{dark[0].epsilon:g}, {dark[-1].epsilon:g}]: at "
            f"{r['final_samples']} samples per input no set could certify a δ above the claim"
        )
    return lines


def findings_for(claim: Any, r: dict[str, Any], verdict: Verdict) -> tuple[str, ...]:
    """The sentences of the result (``r`` holds the result's fields so far)."""
    lines = _profile_lines(r)
    mu = r["mu_lower_bound"]
    if isinstance(claim, GaussianDP):
        if mu > claim.mu:
            lines.append(f"VIOLATION of {claim.mu:g}-GDP: certified μ ≥ {mu:.4g} ({_level(r)})")
        elif claim.mu >= r["mu_ceiling"]:
            lines.append(
                f"μ inconclusive: {r['final_samples']} samples per input can certify at most "
                f"μ = {r['mu_ceiling']:.3g}, below the claimed {claim.mu:g}"
            )
        else:
            lines.append(
                f"no violation of {claim.mu:g}-GDP found: certified μ ≥ {mu:.4g} "
                f"(point estimate {r['mu_estimate']:.4g})"
            )
    elif math.isfinite(mu):
        lines.append(f"certified GDP lower bound of the pair: μ ≥ {mu:.4g}")
    if isinstance(claim, RenyiDP | ZeroConcentratedDP):
        for p in r["renyi"]:
            if p.verdict is Verdict.VIOLATION:
                lines.append(
                    f"VIOLATION of the Rényi claim at α = {p.order:g}: certified "
                    f"D_α ≥ {p.epsilon_lower_bound:.4g} > claimed {p.claimed:.4g}"
                )
        if isinstance(claim, ZeroConcentratedDP):
            word = "VIOLATION" if r["rho_lower_bound"] > claim.rho else "certified"
            lines.append(f"{word}: ρ ≥ {r['rho_lower_bound']:.4g} (claimed {claim.rho:g})")
        lines.append(RENYI_NOTE)
    lines.append(f"verdict: {verdict.value}")
    return tuple(lines)


def evidence(claim_text: str, detail: ProfileDetail, final_samples: int) -> Evidence:
    """The phrases of the verdict on the whole claim (:func:`dpaudit.verdicts.state`)."""
    worst = next((p for p in detail.profile if p.epsilon == detail.worst_epsilon), None)
    if worst is not None and worst.verdict is Verdict.VIOLATION:
        refuted = (
            f"δ({detail.worst_epsilon:g}) ≥ {worst.delta_lower_bound:.4g} > "
            f"{worst.claimed_delta:.4g} claimed by {claim_text}"
        )
    else:
        refuted = f"certified μ ≥ {detail.mu_lower_bound:.4g}, above {claim_text}"
    return Evidence(
        refuted=refuted,
        held=(
            f"δ_lcb(ε) ≤ δ(ε) claimed by {claim_text} at every ε of the grid, μ_lcb = "
            f"{detail.mu_lower_bound:.4g}"
        ),
        blind=(
            f"at {final_samples} final samples per input no set could certify a δ(ε) above "
            f"{claim_text} at any ε of the grid"
        ),
    )
