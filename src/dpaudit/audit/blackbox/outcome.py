"""Building the black-box audit's witness and result from the final counts.

Shared by both modes; the witness is :class:`dpaudit.witness.Witness`, the
result :class:`dpaudit.audit.blackbox.result.AuditResult`.  Imports nothing above ``audit/``.
"""

from __future__ import annotations

import numpy as np

from dpaudit.audit.blackbox.config import AuditConfig
from dpaudit.audit.blackbox.counting import UnitCounts
from dpaudit.audit.blackbox.pairs import InputPair
from dpaudit.audit.blackbox.result import AuditResult
from dpaudit.audit.blackbox.sampler import Timer
from dpaudit.audit.blackbox.selection import Candidate, log_ratio
from dpaudit.audit.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.mechanisms.base import Mechanism
from dpaudit.verdicts import verdict_text
from dpaudit.witness import ProbabilityEstimate, ThresholdAttack, Witness, WitnessKind, WitnessSeeds


def build_witness(
    mech: Mechanism,
    pair: InputPair,
    c: Candidate,
    num_counts: UnitCounts,
    den_counts: UnitCounts,
    alpha_side: float,
    seed: int,
    num_key: tuple[int, ...],
    den_key: tuple[int, ...],
    confidence: float,
    slot: int = 0,
) -> Witness:
    """The black-box witness of candidate ``c``; its bound holds at ``confidence`` overall.

    ``slot``: which of the counts' scores is ``c``'s (final sets of one score and
    orientation share their samples).
    """

    def hits(u: UnitCounts) -> int:
        kept = int(u.ties_kept[slot][0]) if u.ties_kept is not None else 0
        g, e = int(u.greater[slot][0]), int(u.equal[slot][0])
        return g + kept if c.tail == "upper" else u.n - g - e + kept

    h1, h2 = hits(num_counts), hits(den_counts)
    n1, n2 = num_counts.n, den_counts.n
    p1_low = float(clopper_pearson_lower(h1, n1, alpha_side))
    p2_up = float(clopper_pearson_upper(h2, n2, alpha_side))
    delta = mech.claim.delta
    with np.errstate(divide="ignore"):
        lcb = float(np.log(max(p1_low - delta, 0.0)) - np.log(p2_up))
    x, xp = (pair.x, pair.x_prime) if c.numerator_is_x else (pair.x_prime, pair.x)
    score = c.score
    attack = ThresholdAttack(
        family=score.family,
        score=score.describe(),
        score_inputs=(pair.x, pair.x_prime),
        tail=c.tail,
        threshold=c.threshold,
        tie_probability=c.tie_probability,
        target_mass=c.target_mass,
        classifier=score.parameters(),
    )
    return Witness(
        kind=WitnessKind.BLACK_BOX,
        x=x,
        x_prime=xp,
        pair_origin=pair.origin,
        event=attack.set_description,
        confidence=confidence,
        attack=attack,
        p1=ProbabilityEstimate(h1, n1, p1_low, "lower", alpha_side),
        p2=ProbabilityEstimate(h2, n2, p2_up, "upper", alpha_side),
        epsilon_estimate=log_ratio(h1, n1, h2, n2, delta),
        epsilon_lower_bound=lcb,
        seeds=WitnessSeeds(seed, num_key, den_key),
    )


def build_result(
    mech: Mechanism,
    cfg: AuditConfig,
    witness: Witness,
    families: tuple[str, ...],
    pairs: list[InputPair],
    n_compared: int,
    statement: str,
    timer: Timer,
    samples: dict[str, int],
    final_candidates: int | None = None,
) -> AuditResult:
    claim = mech.claim
    lcb = max(0.0, witness.epsilon_lower_bound)  # ε ≥ 0 always; report no negative bound
    notes = []
    if witness.p2.hits == 0:
        notes.append(
            f"no output of M(x') fell in S: the bound is limited only by the sample size "
            f"(p2_upper = 1 − (error)^(1/n) = {witness.p2.bound:.3g} with n = "
            f"{witness.p2.samples})"
        )
    return AuditResult(
        mechanism=mech.spec(),
        claim=claim.describe(),
        claimed_epsilon=claim.epsilon,
        claimed_delta=claim.delta,
        epsilon_lower_bound=lcb,
        confidence=cfg.confidence,
        violation=lcb > claim.epsilon,
        verdict=verdict_text(lcb, claim.epsilon, cfg.confidence, claim.delta),
        witness=witness,
        mode=cfg.mode,
        attack_families=families,
        samples=samples,
        pairs_tried=len(pairs),
        candidates_compared=n_compared,
        final_candidates=(
            final_candidates
            if final_candidates is not None
            else (cfg.final_candidates if cfg.mode == "dpaudit" else 1)
        ),
        confidence_statement=statement,
        seed=cfg.seed,
        timing=timer.total(),
        notes=tuple(notes),
    )


def no_witness_result(
    mech: Mechanism,
    cfg: AuditConfig,
    pairs: list[InputPair],
    families: tuple[str, ...],
    n_compared: int,
    timer: Timer,
) -> AuditResult:
    claim = mech.claim
    return AuditResult(
        mechanism=mech.spec(),
        claim=claim.describe(),
        claimed_epsilon=claim.epsilon,
        claimed_delta=claim.delta,
        epsilon_lower_bound=0.0,
        confidence=cfg.confidence,
        violation=False,
        verdict=verdict_text(0.0, claim.epsilon, cfg.confidence, claim.delta),
        witness=None,
        mode=cfg.mode,
        attack_families=families,
        samples={"selection": cfg.samples, "final": 0},
        pairs_tried=len(pairs),
        candidates_compared=n_compared,
        final_candidates=0,
        confidence_statement="no candidate set separated the outputs; nothing was re-estimated",
        seed=cfg.seed,
        timing=timer.total(),
        notes=("no candidate had a positive projected bound",),
    )
