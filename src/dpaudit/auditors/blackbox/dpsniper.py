"""DP-Sniper as published (Bichsel et al., S&P 2021, Alg. 1–2, §6): the ``dpsniper`` mode.

StatDP input patterns; a classifier (logistic regression or an MLP) trained on
``M(x)`` against ``M(x')``; its probability rounded to 3 decimals; the
threshold at target mass ``c`` on samples of ``M(x')`` with randomised ties;
``p1, p2`` on fresh samples; the best pair re-estimated on ``final_samples``.
Because ``p2 ≈ c`` its estimate cannot exceed about ``ln(1/c)``.  Called by
:func:`dpaudit.auditors.blackbox.auditor.audit`; imports nothing above ``auditors/``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.auditors.blackbox.config import (
    AuditConfig,
)
from dpaudit.auditors.blackbox.final import ThresholdSet, final_plan
from dpaudit.auditors.blackbox.outcome import build_witness, result_reading
from dpaudit.auditors.blackbox.pairs import InputPair
from dpaudit.auditors.blackbox.sampler import Sampler, Timer
from dpaudit.auditors.blackbox.scores import (
    DPSNIPER_LEVELS,
    Score,
    dpsniper_threshold,
    train_classifier,
)
from dpaudit.auditors.blackbox.selection import Candidate
from dpaudit.auditors.core.counting import Stream
from dpaudit.auditors.core.procedure import Certified, Proposals, Reading
from dpaudit.auditors.core.proposal import Proposal
from dpaudit.auditors.core.streams import StageKey
from dpaudit.auditors.core.trust import TrustReport
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.mechanisms.base import Mechanism


def propose_dpsniper(
    mech: Mechanism,
    cfg: AuditConfig,
    execution: ExecutionConfig,
    pairs: list[InputPair],
    families: tuple[str, ...],
    timer: Timer,
    trust: TrustReport | None = None,
) -> Proposals:
    """DP-Sniper's search, and its best pair's set proposed to the core for the final
    estimate, as published (``trust``: what the audit's trust call found, for the result)."""
    family = families[0]
    n_train = cfg.train_samples or cfg.samples
    sampler = Sampler(mech, cfg.seed, execution, cfg.unit_timeout)
    draws = sampler.pair_outputs(
        [(p.x, p.x_prime) for p in pairs], n_train, StageKey.SNIPER_TRAIN, "training"
    )
    scores = [
        train_classifier(family, mech, dx, dxp, seed=cfg.seed, dpsniper_rounding=True)
        for dx, dxp in draws
    ]
    timer.mark("training", sampler.tally.drawn)
    before = sampler.tally.drawn
    cand = _best_pair(sampler, pairs, scores, cfg)
    timer.mark("selection", sampler.tally.since(before))
    i, pair = cand.pair_index, pairs[cand.pair_index]
    streams = (
        Stream(pair.x, (StageKey.SNIPER_FINAL, 0)),
        Stream(pair.x_prime, (StageKey.SNIPER_FINAL, 1)),
    )
    c = cfg.target_mass
    n = cfg.samples
    # One statement, M(x) over M(x'): both one-sided bounds at error α/2 (the core's K = 1).
    return Proposals(
        statements=(Proposal(i, True, ThresholdSet.of(cand), "best"),),
        plan=final_plan(mech, cfg, streams, "final"),
        pair_streams={i: (0, 1)},
        chosen=(
            f"DP-Sniper (Bichsel et al. 2021): the pair was chosen on separate samples; the "
            f"target mass c = {c:g} caps the estimate near ln(1/c) = {math.log(1 / c):.3g}."
        ),
        confidence=cfg.confidence,
        mechanism=mech.spec(),
        seed=cfg.seed,
        samples={"train": n_train, "threshold": n, "check": n, "final": cfg.final_samples},
        delta=mech.claim.delta,
        timing=dict(timer.marks),
        trust=trust,
        execution=execution,
        state=SniperFinal(mech, cfg, tuple(pairs), families, cand, timer, sampler),
    )


@dataclass(frozen=True)
class SniperFinal:
    """What DP-Sniper's final estimate is read with: the pair, its set, the stage timer."""

    mechanism: Mechanism
    config: AuditConfig
    pairs: tuple[InputPair, ...]
    families: tuple[str, ...]
    candidate: Candidate
    timer: Timer
    sampler: Sampler

    def read(self, proposed: Proposals, certified: Certified) -> Reading:
        """The one certified set as the witness."""
        cfg, cand = self.config, self.candidate
        drawn = 2 * cfg.final_samples
        self.sampler.tally.drawn += drawn
        self.timer.mark("final", drawn)
        w = build_witness(
            self.mechanism, self.pairs[cand.pair_index], cand, certified.certificates[0],
            cfg.seed, (StageKey.SNIPER_FINAL, 0), (StageKey.SNIPER_FINAL, 1), cfg.confidence,
        )  # fmt: skip
        pairs = list(self.pairs)
        return result_reading(
            self.mechanism, cfg, w, self.families, pairs, len(pairs), certified_proposals=1
        )


def _best_pair(
    sampler: Sampler, pairs: list[InputPair], scores: list[Score], cfg: AuditConfig
) -> Candidate:
    """The pair with the largest check estimate at its threshold of mass ``c`` (Alg. 1).

    Per pair: a threshold sample of ``M(x')`` fixes the threshold (randomised ties,
    ``Pr[M(x') ∈ S] = c``), fresh check samples of ``M(x)`` and ``M(x')`` estimate
    ``ln(p1/p2)``.
    """
    c, n = cfg.target_mass, cfg.samples
    levels = np.arange(DPSNIPER_LEVELS + 1, dtype=np.float32)
    jobs = []
    for i, pair in enumerate(pairs):
        jobs += [
            (pair.x_prime, (scores[i],), (levels,)),
            (pair.x, (scores[i],), (levels,)),
            (pair.x_prime, (scores[i],), (levels,)),
        ]
    counts = sampler.counts(jobs, n, StageKey.SNIPER_CHECK, "thresholds and checks")
    best: tuple[float, int, int, float] | None = None
    for i in range(len(pairs)):
        thr_c, chk_x, chk_xp = counts[3 * i], counts[3 * i + 1], counts[3 * i + 2]
        j, q = dpsniper_threshold(thr_c.greater[0], thr_c.equal[0], thr_c.n, c)
        p1 = (chk_x.greater[0][j] + q * chk_x.equal[0][j]) / chk_x.n
        p2 = (chk_xp.greater[0][j] + q * chk_xp.equal[0][j]) / chk_xp.n
        est = math.log(p1 / p2) if p1 > 0 and p2 > 0 else (-math.inf if p1 == 0 else math.inf)
        if best is None or est > best[0]:
            best = (est, i, j, q)
    assert best is not None
    est, i, j, q = best
    return Candidate(i, scores[i], float(levels[j]), "upper", q, True, est, est, target_mass=c)
