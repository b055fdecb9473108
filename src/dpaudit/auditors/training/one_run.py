"""The one-run training audit: m canaries, half of them in, one training, guesses certified.

Steinke, Nasr & Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023:

1. **Propose** — the auditor draws ``m`` canaries (:mod:`~dpaudit.auditors.training.canaries`)
   and an inclusion bit for each, independently and uniformly, from its own seed; it trains
   once on the base data plus the included canaries (``runs`` independent trainings are
   pooled: each canary lives in one run, so the pooled game has ``m·runs`` canaries and the
   same per-canary guarantee) and scores every canary on the released model.
2. **Guess** — each rule of a fixed grid guesses *in* for its highest scores and *out* for its
   lowest (or *in* only), abstaining on the rest; the grid is fixed before any score is seen.
   One more rule per score guesses every canary, split at the widest gap of its scores
   (:func:`gap_split`): a function of the scores only, never of the inclusion bits.
3. **Certify** — under (ε, δ)-DP the correct guesses of every rule are bounded by
   :func:`dpaudit.analysis.one_run.p_value` (their Thm. 5.2); each rule is tested at
   ``α/G`` for the ``G`` rules of the grid (Bonferroni), so the best rule's ε ≥ ε_lcb holds at
   confidence ``1 − α``.  Reporting the best rule at ``α`` unadjusted, as the paper's code
   and several packages do, overstates the confidence ``G``-fold.
4. **Curve claims** (μ-GDP, RDP, zCDP, a profile; ``bound="f-dp"``, the default for them) —
   each rule is also tested against the claimed curve as a whole, by the f-DP refinement of
   Mahloujifar, Melis & Chaudhuri (2024, :mod:`dpaudit.analysis.one_run_fdp`), and for a
   μ-GDP claim it certifies μ ≥ μ_lcb.  Both tests of every rule then run at ``α/(2G)``.

What the bound assumes: the inclusion bits are independent and uniform (the auditor draws
them); the training sees nothing of them but the dataset; the claim is about adding or
removing one record.  It assumes nothing about the score, the model or the canaries' mutual
independence — a poor score costs power, never validity.  The verdict comes from the core
(:func:`dpaudit.auditors.core.answer.answer`): *violation* when ε_lcb exceeds the claimed ε,
*inconclusive* when even all-correct guesses could not have certified the claimed ε.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import rankdata

from dpaudit.analysis import one_run, one_run_fdp
from dpaudit.auditors.core.answer import Evidence, Judged, answer, epsilon_evidence
from dpaudit.auditors.core.trust import TrustReport, establish_training_trust
from dpaudit.auditors.training.canaries import (
    CANARY_KINDS,
    Canaries,
    default_kind,
    draw_canaries,
)
from dpaudit.auditors.training.claim_point import claimed_point
from dpaudit.auditors.training.result import GuessRule, TrainingDetail
from dpaudit.engine.executor import ExecutionConfig, run_units
from dpaudit.errors import InvalidArgumentError, InvalidTypeError, MechanismError
from dpaudit.mechanisms.training.contract import TrainingMechanism, checked_scores
from dpaudit.random import unit_rng
from dpaudit.results.audit import AuditorKind, AuditResult
from dpaudit.validation import check_int, check_probability_open, check_seed

#: Canaries per run when the config names none (canaries drawn from the data: at most half).
DEFAULT_CANARIES = 1000
#: Fractions of the canaries a rule guesses on (abstaining on the rest).
GUESS_FRACTIONS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
#: How the guesses are certified: "eps-delta" (Steinke et al.'s bound on ε at the claim's δ),
#: "f-dp" (that, and the claimed curve tested whole), "auto" (f-dp for curve claims).
BOUNDS = ("auto", "eps-delta", "f-dp")
#: Stage keys of the audit's streams: canaries and inclusion bits, then each run.
_CANARY_KEY, _INCLUDE_KEY, _RUN_KEY, _PROBE_KEY = 41, 42, 43, 44
ASSUMPTIONS = (
    "inclusion bits independent and uniform, drawn by the auditor",
    "the trainer sees the bits only through its dataset",
    "the claim is about adding or removing one record (the canary)",
    "the guess rules never see the inclusion bits: a grid fixed in advance and a split at the "
    "scores' widest gap (Bonferroni over all of them)",
)


@dataclass(frozen=True)
class OneRunConfig:
    """Sizes and confidence of one one-run audit.

    ``canaries`` per run (``m``; None: :func:`default_canaries`, 1000 or half the data for
    canaries drawn from it); ``runs`` independent trainings pooled; ``canary_kind`` one
    of :data:`~dpaudit.auditors.training.canaries.CANARY_KINDS` (``None``: gradient canaries
    for a white-box trainer, mislabelled ones otherwise); ``delta``: the δ at which a curve
    claim is read (a point claim uses its own); ``bound``: one of :data:`BOUNDS`.
    """

    canaries: int | None = None
    runs: int = 1
    canary_kind: str | None = None
    confidence: float = 0.95
    delta: float | None = None
    seed: int = 0
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)
    bound: str = "auto"

    def __post_init__(self) -> None:
        if self.bound not in BOUNDS:
            raise InvalidArgumentError("bound", self.bound, f"one of {', '.join(BOUNDS)}")
        if self.canaries is not None:
            check_int("canaries", self.canaries, minimum=2, maximum=10_000_000)
        check_int("runs", self.runs, minimum=1, maximum=100_000)
        check_probability_open("confidence", self.confidence)
        check_seed(self.seed)
        if self.canary_kind is not None and self.canary_kind not in CANARY_KINDS:
            raise InvalidArgumentError(
                "canary kind", self.canary_kind, f"one of {', '.join(CANARY_KINDS)}"
            )


@dataclass(frozen=True)
class TrainingRun:
    """One training of the audit: which canaries are in, and the run's stream key."""

    mechanism: TrainingMechanism
    canaries: tuple[Any, ...]
    included: tuple[bool, ...]
    seed: int
    key: tuple[int, ...]


def run_training(unit: TrainingRun) -> tuple[dict[str, np.ndarray], float]:
    """Train once and score every canary (in or out): each score's values, and the seconds."""
    start = time.perf_counter()
    mech = unit.mechanism
    inside = [c for c, keep in zip(unit.canaries, unit.included, strict=True) if keep]
    model = mech.train(mech.combine(mech.base, inside), unit_rng(unit.seed, unit.key))
    offered = mech.scores(model, list(unit.canaries))
    if not isinstance(offered, dict) or not offered:
        raise MechanismError(f"{mech.name}.scores returned no dict of named scores")
    n = len(unit.canaries)
    scores = {str(k): checked_scores(v, n, f"{mech.name} score {k!r}") for k, v in offered.items()}
    return scores, time.perf_counter() - start


def guess_grid(total: int) -> tuple[tuple[int, int], ...]:
    """The ``(positive, negative)`` guess counts tried on ``total`` canaries, fixed in advance."""
    rules: list[tuple[int, int]] = []
    for f in GUESS_FRACTIONS:
        r = max(1, round(f * total))
        for rule in ((r, 0), ((r + 1) // 2, r // 2)):
            if rule not in rules and rule[1] >= 0:
                rules.append(rule)
    return tuple(rules)


def gap_split(scores: np.ndarray) -> tuple[int, int]:
    """Guess every canary, split at the widest gap of the sorted scores (middle 90 % of ranks).

    A function of the scores alone, never of the inclusion bits, so it is a guess rule the
    bound allows without any cost beyond its one Bonferroni share: when a flaw separates in
    from out, the gap falls between them whatever the share of canaries included.
    """
    values = np.sort(np.asarray(scores, dtype=np.float64))
    m = values.size
    lo, hi = max(1, m // 20), max(1, m - m // 20)
    if hi <= lo:
        return (m + 1) // 2, m // 2
    below = lo + int(np.argmax(np.diff(values)[lo - 1 : hi - 1]))
    return m - below, below


@dataclass(frozen=True)
class CurveTest:
    """The f-DP test of a curve claim: its ``B⁻¹`` and whether it is μ-GDP (then μ_lcb too)."""

    inverse_blowup: Any
    gdp: bool

    @classmethod
    def of(cls, claim: Any) -> CurveTest:
        """The test of ``claim``'s own curve (:func:`one_run_fdp.claim_inverse_blowup`)."""
        return cls(one_run_fdp.claim_inverse_blowup(claim), one_run_fdp.is_gaussian_claim(claim))

    def rule(self, m: int, g: int, v: int, err: float) -> tuple[bool, float | None]:
        """Whether ``v`` correct of ``g`` refute the curve at ``err``, and μ_lcb if μ-GDP."""
        refuted = bool(one_run_fdp.refutes(self.inverse_blowup, m, g, v, err)[0])
        return refuted, (one_run_fdp.gdp_lower_bound(m, g, v, err) if self.gdp else None)


def _rules(
    scores: np.ndarray,
    inside: np.ndarray,
    grid: tuple,
    err: float,
    delta: float,
    name: str,
    curve: CurveTest | None = None,
) -> list[GuessRule]:
    """Every rule of ``grid`` and the gap split on one score, each certified at ``err``."""
    order = np.argsort(-scores, kind="stable")
    out = []
    for pos, neg in (*grid, gap_split(scores)):
        lowest = order[len(order) - neg :] if neg else order[:0]
        correct = int(inside[order[:pos]].sum()) + int((~inside[lowest]).sum())
        bound = one_run.epsilon_lower_bound(inside.size, pos + neg, correct, err, delta)
        refuted, mu = curve.rule(inside.size, pos + neg, correct, err) if curve else (None, None)
        out.append(GuessRule(pos, neg, correct, bound, name, refuted, mu))
    return out


def _auc(scores: np.ndarray, inside: np.ndarray) -> float:
    n_in, n_out = int(inside.sum()), int((~inside).sum())
    if n_in == 0 or n_out == 0:
        return math.nan
    ranks = rankdata(scores)
    return float((ranks[inside].sum() - n_in * (n_in + 1) / 2) / (n_in * n_out))


def probe_randomness(mech: TrainingMechanism, canaries: Canaries, seed: int) -> TrustReport:
    """Whether the trainer's randomness follows the seed it is given (two runs per chunk).

    The audit's own probe, and the conformance suite's ``seeding`` check.
    """
    few = canaries.records[: min(8, len(canaries.records))]
    half = tuple(i % 2 == 0 for i in range(len(few)))

    def one(tag: int, i: int) -> np.ndarray:
        scores, _ = run_training(TrainingRun(mech, few, half, seed, (_PROBE_KEY, tag, i)))
        return np.concatenate(list(scores.values()))

    def draw(tag: int) -> np.ndarray:
        return np.stack([one(tag, i) for i in range(2)])

    return establish_training_trust(draw, mech.name, mech.user_code())


def _is_point(claim: Any) -> bool:
    return isinstance(getattr(claim, "epsilon", None), int | float)


@dataclass(frozen=True)
class CanaryScores:
    """What the proposing half of a one-run audit saw: every canary's scores and bit.

    ``scores`` maps each score the trainer offers to one value per canary (runs pooled, in
    run order); ``inside`` the inclusion bits; ``canaries`` the drawn canaries (with the
    base data they left); ``seconds`` of each training run.  :func:`certify_guesses`
    turns it into certified rules; a peer's estimator can be run on the same values.
    """

    scores: dict[str, np.ndarray]
    inside: np.ndarray
    canaries: Canaries
    seconds: tuple[float, ...]
    trust: TrustReport
    mechanism: TrainingMechanism


def default_canaries(kind: str, records: int) -> int:
    """:data:`DEFAULT_CANARIES`, or half the data for canaries drawn from it (they leave it)."""
    if kind in ("mislabelled", "held-out"):
        return max(2, min(DEFAULT_CANARIES, records // 2))
    return DEFAULT_CANARIES


def play(mechanism: TrainingMechanism, config: OneRunConfig) -> CanaryScores:
    """Draw the canaries and bits, train ``config.runs`` times, score every canary."""
    if not isinstance(mechanism, TrainingMechanism):
        raise InvalidTypeError("mechanism", mechanism, "a TrainingMechanism")
    cfg = config
    kind = cfg.canary_kind or default_kind(mechanism)
    if kind == "gradient" and mechanism.access != "white-box":
        raise InvalidArgumentError(
            "canary kind", kind, "a text canary: gradient canaries need a white-box trainer"
        )
    count = cfg.canaries or default_canaries(kind, len(mechanism.base))
    canaries = draw_canaries(kind, count, mechanism.base, unit_rng(cfg.seed, (_CANARY_KEY,)))
    trust = probe_randomness(mechanism, canaries, cfg.seed)
    if len(canaries.base) != len(mechanism.base):
        mechanism = mechanism.with_base(canaries.base)
    bits = unit_rng(cfg.seed, (_INCLUDE_KEY,)).random((cfg.runs, count)) < 0.5
    units = [
        TrainingRun(mechanism, canaries.records, tuple(bits[r].tolist()), cfg.seed, (_RUN_KEY, r))
        for r in range(cfg.runs)
    ]
    outs = run_units(run_training, units, cfg.execution, desc="training runs")
    names = tuple(outs[0][0])
    if any(tuple(s) != names for s, _ in outs):
        raise MechanismError(f"{mechanism.name}.scores named different scores in different runs")
    pooled = {name: np.concatenate([s[name] for s, _ in outs]) for name in names}
    return CanaryScores(
        pooled, bits.reshape(-1), canaries, tuple(t for _, t in outs), trust, mechanism
    )


def certify_guesses(
    scores: dict[str, np.ndarray],
    inside: np.ndarray,
    confidence: float,
    delta: float,
    curve: CurveTest | None = None,
) -> tuple[tuple[GuessRule, ...], float, float]:
    """Every rule of the grid and the gap split on every score, at α/(rules·scores·tests): the
    rules, the error of each test, and the ceiling (``curve``: each rule is also tested
    against that curve, so two tests per rule)."""
    total = int(inside.size)
    grid = guess_grid(total)
    tests = 2 if curve is not None else 1
    err = (1.0 - confidence) / ((len(grid) + 1) * len(scores) * tests)
    rules = tuple(
        rule
        for name, values in scores.items()
        for rule in _rules(values, inside, grid, err, delta, name, curve)
    )
    ceiling = max(one_run.epsilon_ceiling(total, p + n, err, delta) for p, n in grid)
    return rules, err, ceiling


def _curve_power(curve: CurveTest, total: int, err: float) -> tuple[bool, float | None]:
    """Whether all-correct guesses of some rule of the grid refute the curve; the μ ceiling."""
    grid = guess_grid(total)
    testable = any(curve.rule(total, p + n, p + n, err)[0] for p, n in grid)
    if not curve.gdp:
        return testable, None
    return testable, max(one_run_fdp.gdp_ceiling(total, p + n, err) for p, n in grid)


def _bound_for(claim: Any, bound: str) -> str:
    """The test a config's ``bound`` names for ``claim`` ("auto": f-dp for curve claims)."""
    if bound == "auto":
        return "eps-delta" if _is_point(claim) else "f-dp"
    return bound


def audit_one_run(
    mechanism: TrainingMechanism, claim: Any = None, config: OneRunConfig | None = None
) -> AuditResult:
    """Audit ``mechanism`` against ``claim`` (default: its accountant's) with one-run canaries."""
    start = time.perf_counter()
    cfg = config or OneRunConfig()
    if not isinstance(mechanism, TrainingMechanism):
        raise InvalidTypeError("mechanism", mechanism, "a TrainingMechanism")
    source = "the trainer's accountant" if claim is None else "given"
    claim = mechanism.claim if claim is None else claim
    epsilon, delta = claimed_point(claim, cfg.delta)
    method = _bound_for(claim, cfg.bound)
    curve = CurveTest.of(claim) if method == "f-dp" else None
    game = play(mechanism, cfg)
    inside = game.inside
    rules, err, ceiling = certify_guesses(game.scores, inside, cfg.confidence, delta, curve)
    best = max(range(len(rules)), key=lambda i: _strength(rules[i]))
    testable, mu_ceiling = _curve_power(curve, inside.size, err) if curve else (None, None)
    detail = TrainingDetail(
        method="one-run",
        access=game.mechanism.access,
        canary_kind=game.canaries.kind,
        canary_description=game.canaries.describe(),
        canaries=len(game.canaries.records),
        runs=cfg.runs,
        included=int(inside.sum()),
        delta=delta,
        claim_source=source,
        rules=rules,
        best=best,
        error_per_rule=err,
        ceiling=ceiling,
        auc=_auc(game.scores[rules[best].score], inside),
        seconds_per_run=float(np.mean(game.seconds)),
        assumptions=ASSUMPTIONS,
        bound=method,
        curve_testable=testable,
        mu_ceiling=mu_ceiling,
    )
    seconds = time.perf_counter() - start
    return _answer(game.mechanism, claim, epsilon, detail, cfg, game.trust, seconds)


def _strength(rule: GuessRule) -> tuple[bool, float, float]:
    """A rule's rank: refuting the claimed curve first, then μ_lcb, then ε_lcb."""
    mu = rule.mu_lower_bound if rule.mu_lower_bound is not None else 0.0
    return bool(rule.refutes_curve), mu, rule.epsilon_lower_bound


def _answer(
    mechanism: TrainingMechanism,
    claim: Any,
    epsilon: float,
    detail: TrainingDetail,
    cfg: OneRunConfig,
    trust: TrustReport,
    seconds: float,
) -> AuditResult:
    """The core's answer on the best rule: violation, inconclusive (out of reach) or none."""
    top = detail.rules[detail.best]
    total, k = detail.canaries * detail.runs, len(detail.rules)
    bound = max(r.epsilon_lower_bound for r in detail.rules)
    blind = (
        f"no bound above {detail.ceiling:.3g} can be certified with {total} canaries at this "
        f"confidence (all guesses of a rule correct), so a violation of ε = {epsilon:g} could "
        "not have been seen; more canaries or runs are needed"
    )
    evidence: Evidence = epsilon_evidence(bound, epsilon, detail.delta, blind)
    judged = Judged.of_bound(bound, epsilon, testable=detail.ceiling > epsilon)
    if detail.bound == "f-dp":
        judged, evidence = _curve_judgement(claim, detail, judged, evidence)
    alpha = 1.0 - cfg.confidence
    tests = 2 if detail.bound == "f-dp" else 1
    how = (
        f"Each rule is tested at error α/{k} = {detail.error_per_rule:.4g} (α = {alpha:.4g}, "
        "Bonferroni) with the bound of Steinke, Nasr & Jagielski (NeurIPS 2023, Thm. 5.2), so "
        f"ε ≥ ε_lcb holds with probability ≥ {cfg.confidence:g}."
        if tests == 1
        else f"Each rule is tested twice, each time at error α/(2·{k}) = "
        f"{detail.error_per_rule:.4g} (α = {alpha:.4g}, Bonferroni over rules and tests): on ε at "
        "δ with the bound of Steinke, Nasr & Jagielski (NeurIPS 2023, Thm. 5.2), and against "
        "the claimed curve as a whole with the f-DP bound of Mahloujifar, Melis & Chaudhuri "
        f"(arXiv:2410.22235, 2024), so every statement holds with probability ≥ "
        f"{cfg.confidence:g}."
    )
    statement = (
        f"{cfg.runs} training run{'s' if cfg.runs > 1 else ''} with {total} canaries, "
        f"{detail.included} included at random; the best of {k} guess rules that never see "
        f"the bits ({k // max(1, len({r.score for r in detail.rules}))} per score, on "
        f"{len({r.score for r in detail.rules})} score(s)) guessed on {top.score!r} "
        f"{top.guesses} times ({top.positive} in, {top.negative} out), "
        f"{top.correct} correct. {how}"
    )
    return answer(
        kind=AuditorKind.TRAINING,
        mechanism=mechanism.spec(),
        claim=claim,
        judged=(judged,),
        evidence=evidence,
        bound=bound,
        confidence=cfg.confidence,
        confidence_statement=statement,
        witness=None,
        seed=cfg.seed,
        samples={"canaries": total, "runs": cfg.runs},
        power={"ceiling": detail.ceiling},
        timing={"total": seconds},
        detail=detail,
        trust=trust,
        claim_text=None if _is_point(claim) else f"{claim.describe()} at δ = {detail.delta:g}",
        level=f"{cfg.confidence:g}",
    )


def _curve_judgement(
    claim: Any, detail: TrainingDetail, point: Judged, evidence: Evidence
) -> tuple[Judged, Evidence]:
    """The f-DP test's say: the claim is refuted by the ε bound or by its curve's test."""
    top = detail.rules[detail.best]
    refuted = point.refuted or bool(top.refutes_curve)
    judged = Judged(refuted=refuted, testable=point.testable or bool(detail.curve_testable))
    mu = top.mu_lower_bound
    claimed_mu = getattr(claim, "mu", None)
    if top.refutes_curve and mu is not None and claimed_mu is not None and mu > claimed_mu:
        shown = f"μ ≥ {mu:.6g} > claimed {claimed_mu:g}"
    elif point.refuted:
        shown = evidence.refuted + ("; the claimed curve is refuted too" * bool(top.refutes_curve))
    else:
        shown = (
            f"the claimed curve is refuted as a whole: {top.correct} of {top.guesses} guesses "
            f"on {top.score!r} correct (f-DP one-run test)"
        )
    held = evidence.held + ", and no rule refutes the claimed curve"
    if mu is not None and claimed_mu is not None:
        held += f" (μ_lcb = {mu:.6g} ≤ claimed {claimed_mu:g})"
    blind = evidence.blind.replace(
        "more canaries", "nor would all-correct guesses refute the claimed curve; more canaries"
    )
    return judged, Evidence(refuted=shown, held=held, blind=blind)


@dataclass(frozen=True)
class OneRunAuditor:
    """The one-run audit as an :class:`~dpaudit.auditors.core.protocol.Auditor`."""

    kind = AuditorKind.TRAINING

    def supports(self, mechanism: object, claim: object) -> bool:
        """A training algorithm, and a point claim or a curve (read at the config's δ)."""
        return isinstance(mechanism, TrainingMechanism) and (
            claim is None or _is_point(claim) or callable(getattr(claim, "profile", None))
        )

    def audit(
        self,
        mechanism: TrainingMechanism,
        claim: Any,
        config: OneRunConfig | None,
        execution: ExecutionConfig | None,
    ) -> AuditResult:
        """:func:`audit_one_run` (``execution`` replaces the config's, if given)."""
        cfg = config or OneRunConfig()
        if execution is not None:
            cfg = dataclasses.replace(cfg, execution=execution)
        return audit_one_run(mechanism, claim, cfg)


__all__ = [
    "ASSUMPTIONS",
    "BOUNDS",
    "CanaryScores",
    "CurveTest",
    "OneRunAuditor",
    "OneRunConfig",
    "TrainingRun",
    "audit_one_run",
    "certify_guesses",
    "gap_split",
    "guess_grid",
    "play",
    "probe_randomness",
]
