"""The profile auditor: certify a whole privacy claim (a δ(ε) curve, μ, ε(α), ρ) for one pair.

Propose, then certify, as every auditor does (:mod:`dpaudit.auditors.core.certify`):

1. **Selection** — ``selection_samples`` outputs of ``M(x)`` and of ``M(x')``
   are scored; candidate thresholds (both tails) and the four statements per
   threshold (set ``{s > t}`` or ``{s ≤ t}``, numerator ``x`` or ``x'``) are
   ranked on them, and the few worth certifying are kept
   (:mod:`dpaudit.auditors.profile.selection`).
2. **Final count** — ``final_samples`` *fresh* outputs per input (seeded apart
   from selection) are counted against every kept threshold at once, in work
   units through :func:`dpaudit.engine.executor.run_units`, each sorting its
   block of scores and counting with ``searchsorted`` (memory flat).
3. **Certification** — :func:`~dpaudit.auditors.core.certify.certify` bounds
   every kept statement at error ``α/(2K)`` (``K`` statements, two bounds
   each), so all bounds hold together at ``1 − α``; every reported number is
   a monotone function of them (:mod:`dpaudit.auditors.profile.bounds`) and holds
   on that same event, for every ε, order and μ at once.

The claim is any value of :mod:`dpaudit.claims.curves`; its
implied profile is compared at every ε of the grid, and its own parameter too
where it has one (μ for GDP, ε(α) for RDP, ρ for zCDP).  The score is any
picklable callable mapping a block of outputs to one number per output, high
where the output looks like ``M(x)`` — e.g. a score of
:mod:`dpaudit.auditors.blackbox.scores`, handed in by the caller (auditors do not
import each other).  An audit is one-sided: it shows a violation or says
"no violation found" (with what it could have detected) or "inconclusive".
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.auditors.core.answer import judge
from dpaudit.auditors.core.certify import split_error
from dpaudit.auditors.core.counting import FinalPlan, Stream, UnitGenerators
from dpaudit.auditors.core.procedure import Certified, Proposals, Reading, run_audit
from dpaudit.auditors.core.proposal import Proposal, record
from dpaudit.auditors.core.streams import StageKey
from dpaudit.auditors.core.trust import establish_trust
from dpaudit.auditors.profile.bounds import (
    ceiling,
    gdp_bound,
    gdp_ceiling,
    profile_points,
    renyi_points,
)
from dpaudit.auditors.profile.counting import (
    BLOCK_ROWS,
    UNIT_ROWS,
    Score,
    ScoreAbove,
    ScoredDraw,
    ScoreUnit,
    run_score_unit,
    split_samples,
)
from dpaudit.auditors.profile.findings import evidence, findings_for, judged_claim
from dpaudit.auditors.profile.result import ProfileDetail
from dpaudit.auditors.profile.selection import ProposedSet, select_sets
from dpaudit.engine.executor import ExecutionConfig, run_units
from dpaudit.errors import InvalidArgumentError, InvalidTypeError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.results.audit import AuditorKind, AuditResult
from dpaudit.results.statement import CertifiedStatement
from dpaudit.validation import check_int, check_probability_open, check_seed
from dpaudit.witness import ProbabilityEstimate, Witness, WitnessKind

#: Rényi orders at which a lower bound is reported by default.
DEFAULT_ORDERS = (1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)


@dataclass(frozen=True)
class ProfileAuditConfig:
    """Sample sizes, confidence and grids of one profile audit.

    ``epsilons``: the ε grid (default 0 to ``ln(final_samples)`` in steps of
    0.25 — beyond ``ln n`` no set of ``n`` samples can certify anything);
    ``orders``: Rényi orders; ``candidates``: thresholds ranked at selection.
    """

    selection_samples: int = 100_000
    final_samples: int = 1_000_000
    confidence: float = 0.95
    epsilons: tuple[float, ...] | None = None
    orders: tuple[float, ...] = DEFAULT_ORDERS
    candidates: int = 256
    seed: int = 0
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)

    def __post_init__(self) -> None:
        check_int("selection_samples", self.selection_samples, minimum=100)
        check_int("final_samples", self.final_samples, minimum=100)
        check_probability_open("confidence", self.confidence)
        check_int("candidates", self.candidates, minimum=2, maximum=100_000)
        check_seed(self.seed)
        if self.epsilons is not None:
            eps = np.asarray(self.epsilons, dtype=np.float64)
            if eps.ndim != 1 or eps.size == 0 or np.any(~np.isfinite(eps)) or np.any(eps < 0):
                raise InvalidArgumentError("epsilons", self.epsilons, "finite numbers >= 0")
        if any(not (math.isfinite(a) and a > 1) for a in self.orders):
            raise InvalidArgumentError("orders", self.orders, "Rényi orders > 1")

    def epsilon_grid(self) -> np.ndarray:
        """The ε grid, sorted."""
        if self.epsilons is not None:
            return np.unique(np.asarray(self.epsilons, dtype=np.float64))
        top = math.ceil(math.log(self.final_samples))
        return np.linspace(0.0, top, 4 * top + 1)


def _check_claim(claim: Any) -> None:
    for attr in ("profile", "describe", "to_dict"):
        if not callable(getattr(claim, attr, None)):
            raise InvalidTypeError("claim", claim, "a claim of dpaudit.claims.curves")


def _sample_scores(mech: Mechanism, x: tuple, score: Score, cfg: ProfileAuditConfig, which: int):
    units = [
        ScoreUnit(mech, x, score, n, cfg.seed, (StageKey.PROFILE_SELECT, which, i))
        for i, n in enumerate(split_samples(cfg.selection_samples))
    ]
    return np.concatenate(run_units(run_score_unit, units, cfg.execution, desc="selecting"))


def audit_profile(
    mechanism: Mechanism,
    x: Any,
    x_prime: Any,
    score: Score,
    claim: Any,
    config: ProfileAuditConfig | None = None,
    provenance: dict[str, str] | None = None,
) -> AuditResult:
    """Certify lower bounds on the whole privacy profile of ``(x, x')`` and judge ``claim``.

    ``provenance``: where the pair and claim came from (``pair_origin``, ``claim_source``,
    ``claim_note`` of the detail).

    Returns an :class:`~dpaudit.results.audit.AuditResult` whose
    :class:`~dpaudit.auditors.profile.result.ProfileDetail` holds every
    certified statement (see :func:`_read` for its summary bound and witness).  The core
    runs the procedure (:func:`~dpaudit.auditors.core.procedure.run_audit`) on a
    :class:`ProfileAuditor`.
    """
    auditor = ProfileAuditor(x, x_prime, score, **(provenance or {}))
    return run_audit(auditor, mechanism, claim, config)


@dataclass(frozen=True)
class _ProfileSelection:
    """What the profile proposer keeps for its reading."""

    config: ProfileAuditConfig
    claim: Any
    sets: tuple[ProposedSet, ...]
    epsilons: np.ndarray
    fields: dict[str, Any]
    provenance: dict[str, str]


def _propose(
    mechanism: Mechanism,
    pair: tuple[Any, Any],
    score: Score,
    claim: Any,
    cfg: ProfileAuditConfig,
    provenance: dict[str, str],
) -> Proposals:
    """Selection on ``PROFILE_SELECT`` streams; the kept threshold sets and the final plan."""
    start = time.perf_counter()
    _check_claim(claim)
    if not callable(score):
        raise InvalidTypeError("score", score, "a callable outputs -> one number per output")
    a, b = mechanism.validate_pair(*pair)
    # The one trust call: the sets come from samples and are certified on fresh ones,
    # so no declaration is relied on; only the randomness is probed.
    trust = establish_trust(mechanism, seed=cfg.seed, probe=a, declarations=())
    xs, xps = tuple(a.ravel().tolist()), tuple(b.ravel().tolist())
    eps = cfg.epsilon_grid()
    # Selection ranks with the error of the most statements it may propose (a safe guess).
    planned = split_error(1.0 - cfg.confidence, len(eps) + 1 + len(cfg.orders))
    sel_x = _sample_scores(mechanism, xs, score, cfg, 0)
    sel_xp = _sample_scores(mechanism, xps, score, cfg, 1)
    columns = 1 if sel_x.ndim == 1 else sel_x.shape[1]
    sets = select_sets(
        sel_x,
        sel_xp,
        final_samples=cfg.final_samples,
        error=planned,
        epsilons=eps,
        orders=cfg.orders,
        candidates=cfg.candidates,
        column_names=tuple(getattr(score, "columns", ())),
    )
    # Fresh samples (PROFILE_FINAL; selection drew PROFILE_SELECT) count every kept set.
    plan = FinalPlan(
        draw=ScoredDraw(mechanism, score, None if columns == 1 else columns),
        streams=(Stream(xs, (StageKey.PROFILE_FINAL, 0)), Stream(xps, (StageKey.PROFILE_FINAL, 1))),
        samples=cfg.final_samples,
        generators=UnitGenerators(cfg.seed),
        unit_samples=UNIT_ROWS,
        block_samples=BLOCK_ROWS,
        desc="counting",
    )
    fields = dict(claim=claim.to_dict(), x=xs, x_prime=xps, score=_describe_score(score))
    return Proposals(
        statements=_statements(sets, sel_x.dtype),
        plan=plan,
        pair_streams=((0, 1),),
        chosen="",
        confidence=cfg.confidence,
        mechanism=mechanism.spec(),
        seed=cfg.seed,
        samples={"selection": cfg.selection_samples, "final": cfg.final_samples},
        delta=float(getattr(claim, "delta", 0.0)),  # each set's ε bound is at the claim's δ
        timing={"selection": round(time.perf_counter() - start, 4)},
        trust=trust,
        execution=cfg.execution,
        state=_ProfileSelection(cfg, claim, sets, eps, fields, provenance),
    )


def _statements(sets: tuple[ProposedSet, ...], dtype: np.dtype) -> tuple[Proposal, ...]:
    """The kept sets as proposals on the one pair; thresholds in the score's own dtype."""
    return tuple(
        Proposal(0, p.forward, ScoreAbove(p.column, dtype.type(p.threshold), p.above), "profile")
        for p in sets
    )


def _read(proposals: Proposals, certified: Certified) -> Reading:
    """The verdict on the whole claim, and its summary in (ε, δ) terms.

    The verdict judges the whole claim (:func:`judged_claim`, from every bound).  Its
    summary is the largest certified ``ln(p1_lower − δ) − ln(p2_upper)`` over the
    certified sets at the claim's δ (0 for claims without one): a lower bound on the
    pair's ε at that δ, holding on the same event as every other bound (floored at 0; the
    witness is its set, None when no set gives a positive bound).  ``claimed_epsilon`` is
    NaN for a claim without an ε (GDP, RDP, zCDP).
    """
    sel: _ProfileSelection = proposals.state
    cfg, claim = sel.config, sel.claim
    fields = _judge(claim, sel.sets, certified, sel.epsilons, cfg)
    fields.update(sel.fields)
    judged = judged_claim(
        claim,
        fields["profile"],
        fields["mu_lower_bound"],
        fields["renyi"],
        fields["rho_lower_bound"],
    )
    findings = findings_for(claim, fields, judge((judged,)))
    del fields["final_samples"], fields["confidence"]  # the result's own fields
    detail = ProfileDetail(**fields, findings=findings, **sel.provenance)
    bounds = [s.epsilon_lower_bound for s in detail.certified]
    best = int(np.argmax(bounds)) if bounds else None
    witness = None
    if best is not None and bounds[best] > 0.0:
        witness = _witness(detail, detail.certified[best], bounds[best], cfg.confidence)
    return Reading(
        judged=(judged,),
        evidence=evidence(claim.describe(), detail, cfg.final_samples),
        bound=bounds[best] if best is not None else 0.0,
        witness=witness,
        detail=detail,
        level=f"{cfg.confidence:g}, jointly over {detail.statements} certified sets",
    )


def _witness(
    detail: ProfileDetail, s: CertifiedStatement, bound: float, confidence: float
) -> Witness:
    """Certified set ``s`` as the shared witness (x = the input whose outputs ``s`` favours)."""
    x, xp = (detail.x, detail.x_prime) if s.forward else (detail.x_prime, detail.x)
    k1, k2 = s.p1_hits / s.p1_samples, s.p2_hits / s.p2_samples
    return Witness(
        kind=WitnessKind.BLACK_BOX,
        x=x,
        x_prime=xp,
        event=s.event,
        epsilon_lower_bound=bound,
        confidence=confidence,
        pair_origin=detail.pair_origin,
        p1=ProbabilityEstimate(s.p1_hits, s.p1_samples, s.p1_lower, "lower", s.error),
        p2=ProbabilityEstimate(s.p2_hits, s.p2_samples, s.p2_upper, "upper", s.error),
        epsilon_estimate=math.log(k1 / k2) if k1 > 0 and k2 > 0 else math.inf if k1 else -math.inf,
    )


def _judge(
    claim: Any,
    proposals: tuple[ProposedSet, ...],
    certified: Certified,
    eps: np.ndarray,
    cfg: ProfileAuditConfig,
) -> dict[str, Any]:
    """Derive every bound from the ``K`` statements the core certified jointly."""
    n = cfg.final_samples
    counts, certs = certified.counts, certified.certificates
    error = certified.error
    lo = np.array([c.p1.bound for c in certs])
    hi = np.array([c.p2.bound for c in certs])
    p1 = np.array([c.hits_x / n for c in counts])
    p2 = np.array([c.hits_x_prime / n for c in counts])
    claimed = np.asarray(claim.profile(eps), dtype=np.float64)
    points = profile_points((lo, hi), (p1, p2), eps, claimed, ceiling(eps, n, error))
    mu_lcb, mu_set = gdp_bound(lo, hi)
    renyi = renyi_points(lo, hi, cfg.orders, claim)
    excess = np.array([q.delta_lower_bound - q.claimed_delta for q in points])
    return dict(
        final_samples=n,
        confidence=cfg.confidence,
        statements=len(certs),
        error_per_bound=error,
        certified=tuple(
            record(
                Proposal(0, p.forward, p, "profile"),
                c,
                cert,
                p.describe(),
                threshold=p.threshold,
                above=p.above,
                score_column=p.column_name or None,
            )
            for p, c, cert in zip(proposals, counts, certs, strict=True)
        ),
        profile=points,
        worst_epsilon=float(eps[int(np.argmax(excess))]),
        worst_excess=float(excess.max()),
        mu_lower_bound=mu_lcb,
        mu_estimate=gdp_bound(p1, p2)[0],
        mu_ceiling=gdp_ceiling(n, error),
        mu_set=mu_set,
        renyi=renyi,
        rho_lower_bound=max((r.epsilon_lower_bound / r.order for r in renyi), default=0.0),
    )


def _describe_score(score: Score) -> str:
    describe = getattr(score, "describe", None)
    if callable(describe):
        return str(describe())
    return getattr(score, "__name__", type(score).__name__)


@dataclass(frozen=True)
class ProfileAuditor:
    """The profile auditor as an :class:`~dpaudit.auditors.core.protocol.Auditor`, for one pair.

    ``x``, ``x_prime``: the pair whose whole profile is certified; ``score``: the picklable
    callable its sets threshold (chosen by the caller: auditors do not import each other).
    It supports a vector mechanism and any claim that states a privacy profile (the curve
    claims: pure, approximate, profile, μ-GDP, Rényi, zCDP); ``config`` is a
    :class:`ProfileAuditConfig`.
    """

    x: Any
    x_prime: Any
    score: Score
    #: Where the pair and the claim came from, recorded in the result's detail.
    pair_origin: str = ""
    claim_source: str = ""
    claim_note: str = ""

    kind = AuditorKind.PROFILE

    def supports(self, mechanism: object, claim: object) -> bool:
        """A mechanism of vectors and a claim with a ``profile``, ``describe`` and ``to_dict``."""
        return (
            isinstance(mechanism, Mechanism)
            and mechanism.output_kind not in ("word", "text")
            and all(callable(getattr(claim, a, None)) for a in ("profile", "describe", "to_dict"))
        )

    def audit(
        self,
        mechanism: Mechanism,
        claim: Any,
        config: ProfileAuditConfig | None,
        execution: ExecutionConfig | None,
    ) -> AuditResult:
        """Run the core's procedure (:func:`~dpaudit.auditors.core.procedure.run_audit`)."""
        return run_audit(self, mechanism, claim, config, execution)

    def propose(
        self,
        mechanism: Mechanism,
        claim: Any,
        config: ProfileAuditConfig | None,
        execution: ExecutionConfig | None,
    ) -> Proposals:
        """The threshold sets worth certifying, chosen on selection scores (``execution``
        replaces the config's, if given)."""
        cfg = config or ProfileAuditConfig()
        if execution is not None:
            cfg = dataclasses.replace(cfg, execution=execution)
        where = {
            "pair_origin": self.pair_origin,
            "claim_source": self.claim_source,
            "claim_note": self.claim_note,
        }
        return _propose(mechanism, (self.x, self.x_prime), self.score, claim, cfg, where)

    def read(self, proposals: Proposals, certified: Certified) -> Reading:
        """The whole claim judged from every certified bound (:func:`_read`)."""
        return _read(proposals, certified)


__all__ = ["DEFAULT_ORDERS", "ProfileAuditConfig", "ProfileAuditor", "audit_profile"]
