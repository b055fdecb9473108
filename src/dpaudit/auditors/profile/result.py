"""What only a profile audit reports: :class:`ProfileDetail`, the ``detail`` of its result.

The result itself is the shared :class:`dpaudit.results.audit.AuditResult`.
Every number here is one-sided: a lower bound on what the mechanism really
gives away, holding — all of them together — with the audit's confidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpaudit.results.audit import AuditorKind, register_detail
from dpaudit.results.statement import CertifiedStatement
from dpaudit.verdicts import Verdict


@dataclass(frozen=True)
class ProfilePoint:
    """The audit at one ε: claimed δ(ε) against the certified lower bound ``δ_lcb(ε)``.

    ``delta_lower_bound = max_S p1_lower − e^ε·p2_upper`` (0 when no set gives
    a positive bound); ``delta_estimate`` the same with point estimates;
    ``detectable_excess`` what sampling error costs at the set that attains the
    bound, ``(p̂1 − p1_lower) + e^ε(p2_upper − p̂2)`` — a true excess over the
    claim smaller than this could not have been certified by that set;
    ``ceiling`` the largest δ any set could certify at these sample sizes (all
    hits under one input, none under the other).  ``verdict``: VIOLATION when
    the bound exceeds the claim, INCONCLUSIVE when even the ceiling does not
    (nothing could have been seen at this ε), else NO_VIOLATION_FOUND.
    """

    epsilon: float
    claimed_delta: float
    delta_lower_bound: float
    delta_estimate: float
    detectable_excess: float
    ceiling: float
    set_index: int | None
    verdict: Verdict


@dataclass(frozen=True)
class RenyiPoint:
    """A certified lower bound on the Rényi divergence of order α, by data processing.

    ``epsilon_lower_bound = max_S D_α(Ber(p1_lower) ‖ Ber(p2_upper))`` over the
    sets with ``p1_lower > p2_upper`` (the binary divergence grows with p1 and
    falls with p2 there, so it bounds ``D_α(M(a) ‖ M(b))`` from below);
    ``claimed`` is the claim's ε(α) (``None`` when the claim has no Rényi form).
    """

    order: float
    epsilon_lower_bound: float
    claimed: float | None
    set_index: int | None
    verdict: Verdict


@register_detail(AuditorKind.PROFILE)
@dataclass(frozen=True)
class ProfileDetail:
    """What only a profile audit reports: every certified statement about one pair and one score.

    ``claim`` is the claim in its JSON form (its ``to_dict``; the result's
    ``claim`` is its text).  ``certified`` holds the statements certified
    jointly (:class:`~dpaudit.results.statement.CertifiedStatement`, each with its
    ``threshold`` and ``above``): ``statements`` of them, each one-sided bound at
    ``error_per_bound``; ``set_index``/``mu_set`` index them.  ``profile`` holds
    the claimed δ(ε) against the certified ``δ_lcb(ε)`` on the grid;
    ``worst_epsilon``/``worst_excess`` where ``δ_lcb − δ`` is largest.
    ``mu_lower_bound`` is the certified lower bound on the pair's GDP
    parameter (Nasr et al., USENIX Security 2023):
    ``max_S Φ⁻¹(1 − FPR_upper) − Φ⁻¹(FNR_upper)``; ``mu_ceiling`` the largest μ
    these sample sizes could certify; ``mu_set`` the set attaining it.
    ``rho_lower_bound = max_α ε_lcb(α)/α``.  ``findings`` states the verdict
    in sentences.  ``pair_origin``, ``claim_source`` and ``claim_note`` say where
    the pair and the claim came from (filled by the CLI; empty otherwise).
    """

    claim: dict[str, Any]
    x: tuple[float, ...]
    x_prime: tuple[float, ...]
    score: str
    statements: int
    error_per_bound: float
    certified: tuple[CertifiedStatement, ...]
    profile: tuple[ProfilePoint, ...]
    worst_epsilon: float
    worst_excess: float
    mu_lower_bound: float
    mu_estimate: float
    mu_ceiling: float
    mu_set: int | None
    renyi: tuple[RenyiPoint, ...]
    rho_lower_bound: float
    findings: tuple[str, ...]
    pair_origin: str = ""
    claim_source: str = ""
    claim_note: str = ""

    @property
    def witness_set(self) -> int | None:
        """The certified set behind the verdict: the worst excess's if a violation, else μ's."""
        worst = next((p for p in self.profile if p.epsilon == self.worst_epsilon), None)
        if worst is not None and worst.set_index is not None and worst.verdict is Verdict.VIOLATION:
            return worst.set_index
        return self.mu_set
