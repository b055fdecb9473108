"""The one-run training audit: m canaries, half of them in, one training, guesses certified.

Steinke, Nasr & Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023.  The
auditor *proposes* and *reads*; the core plays and certifies the game
(:mod:`dpaudit.auditors.core.game`) and answers
(:func:`~dpaudit.auditors.core.procedure.run_audit`):

1. **Propose** — the auditor draws ``m`` canaries (:mod:`~dpaudit.auditors.training.canaries`)
   from its own seed, checks that the trainer follows its seed, and proposes the game: a
   round trains on the base data plus the included canaries and scores every canary on the
   released model (``runs`` rounds pooled), guessed with the fixed grid of
   :func:`~dpaudit.auditors.core.game.guess_grid` and the gap split on every score.
2. **Play and certify** (the core) — the core draws every inclusion bit, plays the rounds,
   and tests each rule at ``α/G`` for the ``G`` rules (Bonferroni) with their Thm. 5.2.
3. **Curve claims** (μ-GDP, RDP, zCDP, a profile; ``bound="f-dp"``, the default for them) —
   each rule is also tested against the claimed curve as a whole, by the f-DP refinement of
   Mahloujifar, Melis & Chaudhuri (2024, :mod:`dpaudit.analysis.one_run_fdp`), and for a
   μ-GDP claim it certifies μ ≥ μ_lcb.  Both tests of every rule then run at ``α/(2G)``.
4. **Read** — the auditor says what the best rule means for the claim.

What the bound assumes: the inclusion bits are independent and uniform (the auditor draws
them); the training sees nothing of them but the dataset; the claim is about adding or
removing one record.  It assumes nothing about the score, the model or the canaries' mutual
independence — a poor score costs power, never validity.  The verdict comes from the core
(:func:`dpaudit.auditors.core.answer.answer`): *violation* when ε_lcb exceeds the claimed ε,
*inconclusive* when even all-correct guesses could not have certified the claimed ε.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.auditors.core.answer import Evidence, Judged, epsilon_evidence
from dpaudit.auditors.core.game import (
    GUESS_FRACTIONS,
    CurveTest,
    GamePlan,
    auc,
    certify_guesses,
    draw_game,
    gap_split,
    guess_grid,
)
from dpaudit.auditors.core.procedure import Certified, Proposals, Reading, run_audit
from dpaudit.auditors.core.trust import TrustReport, establish_training_trust
from dpaudit.auditors.training.canaries import (
    CANARY_KINDS,
    Canaries,
    default_kind,
    draw_canaries,
)
from dpaudit.auditors.training.claim_point import claimed_point
from dpaudit.auditors.training.result import TrainingDetail
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError, InvalidTypeError, MechanismError
from dpaudit.mechanisms.training.contract import TrainingMechanism, checked_scores
from dpaudit.random import unit_rng
from dpaudit.results.audit import AuditorKind, AuditResult
from dpaudit.validation import check_int, check_probability_open, check_seed

#: Canaries per run when the config names none (canaries drawn from the data: at most half).
DEFAULT_CANARIES = 1000
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


@dataclass(frozen=True)
class CanaryTraining:
    """One round of the one-run game (:class:`~dpaudit.auditors.core.game.GameDraw`): train
    on the base data plus the canaries ``included`` marks, score every canary."""

    mechanism: TrainingMechanism
    canaries: tuple[Any, ...]
    seed: int

    def __call__(
        self, included: tuple[bool, ...], key: tuple[int, ...]
    ) -> tuple[dict[str, np.ndarray], float]:
        return run_training(TrainingRun(self.mechanism, self.canaries, included, self.seed, key))


@dataclass(frozen=True)
class OneRunState:
    """What the proposing half hands its reading: the claim as audited and the canaries."""

    claim: Any
    source: str
    epsilon: float
    delta: float
    method: str
    canaries: Canaries
    mechanism: TrainingMechanism
    config: OneRunConfig


def _bound_for(claim: Any, bound: str) -> str:
    """The test a config's ``bound`` names for ``claim`` ("auto": f-dp for curve claims)."""
    if bound == "auto":
        return "eps-delta" if _is_point(claim) else "f-dp"
    return bound


@dataclass(frozen=True)
class OneRunGame:
    """The game a one-run audit proposes: its plan, canaries, trust probe and trainer (its
    base without the canaries drawn from it)."""

    plan: GamePlan
    canaries: Canaries
    trust: TrustReport
    mechanism: TrainingMechanism


def one_run_game(
    mechanism: TrainingMechanism, cfg: OneRunConfig, curve: CurveTest | None = None
) -> OneRunGame:
    """Draw the canaries, check the trainer follows its seed, and plan the rounds."""
    if not isinstance(mechanism, TrainingMechanism):
        raise InvalidTypeError("mechanism", mechanism, "a TrainingMechanism")
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
    plan = GamePlan(
        draw=CanaryTraining(mechanism, canaries.records, cfg.seed),
        members=count,
        rounds=cfg.runs,
        seed=cfg.seed,
        bits_key=(_INCLUDE_KEY,),
        round_key=_RUN_KEY,
        curve=curve,
        round_noun="training run",
        member_noun="canaries",
        source=f"{mechanism.name}.scores",
    )
    return OneRunGame(plan, canaries, trust, mechanism)


def _propose(mechanism: TrainingMechanism, claim: Any, cfg: OneRunConfig) -> Proposals:
    """The claim as audited, and the canary game to certify it with (module docstring, 1)."""
    start = time.perf_counter()
    if not isinstance(mechanism, TrainingMechanism):
        raise InvalidTypeError("mechanism", mechanism, "a TrainingMechanism")
    source = "the trainer's accountant" if claim is None else "given"
    claim = mechanism.claim if claim is None else claim
    epsilon, delta = claimed_point(claim, cfg.delta)
    method = _bound_for(claim, cfg.bound)
    game = one_run_game(mechanism, cfg, CurveTest.of(claim) if method == "f-dp" else None)
    canaries, mechanism, count = game.canaries, game.mechanism, game.plan.members
    state = OneRunState(claim, source, epsilon, delta, method, canaries, mechanism, cfg)
    return Proposals(
        statements=(),
        plan=None,
        pair_streams={},
        chosen="",
        confidence=cfg.confidence,
        mechanism=mechanism.spec(),
        seed=cfg.seed,
        samples={"canaries": count * cfg.runs, "runs": cfg.runs},
        delta=delta,
        timing={"canaries": round(time.perf_counter() - start, 4)},
        trust=game.trust,
        execution=cfg.execution,
        state=state,
        game=game.plan,
    )


def _read(proposals: Proposals, certified: Certified) -> Reading:
    """The best rule's say on the claim: violation, inconclusive (out of reach) or none."""
    state: OneRunState = proposals.state
    game = certified.game
    assert game is not None, "a one-run audit is always a game"
    top = game.rules[game.best]
    detail = TrainingDetail(
        method="one-run",
        access=state.mechanism.access,
        canary_kind=state.canaries.kind,
        canary_description=state.canaries.describe(),
        canaries=len(state.canaries.records),
        runs=state.config.runs,
        included=int(game.played.inside.sum()),
        delta=state.delta,
        claim_source=state.source,
        rules=game.rules,
        best=game.best,
        error_per_rule=game.error,
        ceiling=game.ceiling,
        auc=auc(game.played.scores[top.score], game.played.inside),
        seconds_per_run=float(np.mean(game.played.seconds)),
        assumptions=ASSUMPTIONS,
        bound=state.method,
        curve_testable=game.curve_testable,
        mu_ceiling=game.mu_ceiling,
    )
    total = detail.canaries * detail.runs
    blind = (
        f"no bound above {detail.ceiling:.3g} can be certified with {total} canaries at this "
        f"confidence (all guesses of a rule correct), so a violation of ε = {state.epsilon:g} "
        "could not have been seen; more canaries or runs are needed"
    )
    evidence: Evidence = epsilon_evidence(game.bound, state.epsilon, detail.delta, blind)
    judged = Judged.of_bound(game.bound, state.epsilon, testable=detail.ceiling > state.epsilon)
    if detail.bound == "f-dp":
        judged, evidence = _curve_judgement(state.claim, detail, judged, evidence)
    claim = state.claim
    return Reading(
        judged=(judged,),
        evidence=evidence,
        bound=game.bound,
        witness=None,
        detail=detail,
        power={"ceiling": detail.ceiling},
        claim_text=None if _is_point(claim) else f"{claim.describe()} at δ = {detail.delta:g}",
        level=f"{proposals.confidence:g}",
        claim=claim,
    )


def play(mechanism: TrainingMechanism, config: OneRunConfig) -> CanaryScores:
    """Draw the canaries and bits, train ``config.runs`` times, score every canary: the game
    an audit plays, without its certification (a peer's estimator can read the scores)."""
    game = one_run_game(mechanism, config)
    played = draw_game(game.plan, config.execution)
    return CanaryScores(
        played.scores, played.inside, game.canaries, played.seconds, game.trust, game.mechanism
    )


def audit_one_run(
    mechanism: TrainingMechanism, claim: Any = None, config: OneRunConfig | None = None
) -> AuditResult:
    """Audit ``mechanism`` against ``claim`` (default: its accountant's) with one-run canaries."""
    return OneRunAuditor().audit(mechanism, claim, config, None)


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
    """The one-run audit as a :class:`~dpaudit.auditors.core.procedure.ProposingAuditor`:
    it proposes the canary game and reads the certified rules; the core plays and certifies."""

    kind = AuditorKind.TRAINING

    def supports(self, mechanism: object, claim: object) -> bool:
        """A training algorithm, and a point claim or a curve (read at the config's δ)."""
        return isinstance(mechanism, TrainingMechanism) and (
            claim is None or _is_point(claim) or callable(getattr(claim, "profile", None))
        )

    def propose(
        self,
        mechanism: TrainingMechanism,
        claim: Any,
        config: OneRunConfig | None,
        execution: ExecutionConfig | None,
    ) -> Proposals:
        """The canary game (``execution`` replaces the config's, if given)."""
        cfg = config or OneRunConfig()
        if execution is not None:
            cfg = dataclasses.replace(cfg, execution=execution)
        return _propose(mechanism, claim, cfg)

    def read(self, proposals: Proposals, certified: Certified) -> Reading:
        """The best rule's say on the claim (module docstring, 4)."""
        return _read(proposals, certified)

    def audit(
        self,
        mechanism: TrainingMechanism,
        claim: Any,
        config: OneRunConfig | None,
        execution: ExecutionConfig | None,
    ) -> AuditResult:
        """Run the core's procedure (:func:`~dpaudit.auditors.core.procedure.run_audit`)."""
        return run_audit(self, mechanism, claim, config, execution)


__all__ = [
    "ASSUMPTIONS",
    "BOUNDS",
    "GUESS_FRACTIONS",
    "CanaryScores",
    "CanaryTraining",
    "CurveTest",
    "OneRunAuditor",
    "OneRunConfig",
    "OneRunGame",
    "TrainingRun",
    "audit_one_run",
    "certify_guesses",
    "gap_split",
    "guess_grid",
    "one_run_game",
    "play",
    "probe_randomness",
]
