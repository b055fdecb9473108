"""The multi-run training audit: many trainings with and without one canary, thresholded.

Nasr et al. (USENIX Security 2021, §4; 2023, §3): train ``runs`` times on ``D ∪ {canary}``
and ``runs`` times on ``D``, score the canary on each model, and certify thresholds of the
score.  The game is the mechanism :class:`~dpaudit.mechanisms.training.game.CanaryGame`
(input 1: canary in), audited by the whole-claim certifier (:mod:`dpaudit.auditors.profile`):
a third of each world's runs choose the thresholds and directions, the other two thirds
certify them (Clopper–Pearson, Bonferroni over every certified set), and the certified sets
bound the whole profile at once — δ(ε) at every ε, μ, and ε at the claim's δ.

What the bound assumes: the runs are independent (each from its own child generator of the
audit's seed); the claim is about adding or removing the one canary.  Nothing about the
score: a weak score costs power, never validity.  This module builds the game and sizes the
certifier; :func:`dpaudit.api.audit_training` runs it (auditors never import each other).

**A crafted background** (``background="opposing"``, gradient canaries on a white-box
trainer).  DP holds for every pair of neighbouring datasets, so the auditor may choose the
data too: every base record becomes a gradient record on the canary's own coordinate with
the opposite sign, so each step's trace is minus the number of base records in the batch,
plus the canary's contribution, plus noise.  Under Poisson sampling the batch size varies
and hides the canary as the accountant assumes; with fixed-size batches it is constant, the
canary displaces one record from its batch, and what it changes shows with no sampling
noise to hide it: the shuffled-batch gap of Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha &
Zhang ("How Private are DP-SGD Implementations?", ICML 2024), whose lower bounds use such
datasets.

**A score fitted to the trace** (``pilot_runs``; default: a third of ``runs`` with the
crafted background, else none).  Before any certified run, ``pilot_runs`` trainings per
world (their own child generators of the seed) give each step's mean and variance of the
canary's trace; the weights ``w_t = (mean_in − mean_out)/variance`` (a diagonal linear
discriminant) define one more column, ``fitted-trace``, that the selection third may
choose.  It finds a flaw wherever it shows in which steps the canary moves, as in the
fixed schedule of shuffled batches, without naming the flaw.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.auditors.training.canaries import CANARY_KINDS, default_kind, draw_canaries
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.training.contract import GradientCanary, TrainingMechanism
from dpaudit.mechanisms.training.game import ALL_SCORES, CanaryGame, GameScore, canary_trace
from dpaudit.random import unit_rng
from dpaudit.validation import check_int, check_probability_open, check_seed

#: The Neyman–Pearson statistic of the algorithm the accountant assumes
#: (:mod:`dpaudit.mechanisms.training.trace_scores`): the Nasr et al. (2023) choice, which
#: the reproduce figure keeps.  It alone misses the flaws other statistics show (reused noise:
#: ``range``; noiseless steps: ``noiseless-steps``), so by default the multi-run game offers
#: every score the trainer names (:data:`~dpaudit.mechanisms.training.game.ALL_SCORES`).
PREFERRED_SCORE = "likelihood-ratio"
#: Smallest number of trainings per world: a third select, two thirds certify (≥ 100 each).
MIN_RUNS = 300
#: Base data of the game: the trainer's own, or the crafted opposing gradient records.
BACKGROUNDS = ("data", "opposing")
_CANARY_KEY = 45
_PILOT_KEY = 46


@dataclass(frozen=True)
class MultiRunConfig:
    """``runs`` trainings per world (with and without the canary), split 1 : 2 between
    choosing and certifying thresholds; ``canary_kind`` as for the one-run audit; ``score``:
    which of the trainer's named scores the thresholds cut, chosen before any training;
    ``"all"`` (the default, None, for gradient canaries on a trainer that names its gradient
    scores): every one of them, each a candidate column that the selection third chooses
    among (no extra statements, so no extra error); otherwise the trainer's ``score``;
    ``background``: one of :data:`BACKGROUNDS` (the module docstring); ``pilot_runs``
    trainings per world that fit the ``fitted-trace`` score (None: ``runs // 3`` with the
    opposing background, else 0; needs a trainer that releases a trace)."""

    runs: int = 600
    canary_kind: str | None = None
    score: str | None = None
    confidence: float = 0.95
    seed: int = 0
    background: str = "data"
    pilot_runs: int | None = None
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)

    def __post_init__(self) -> None:
        check_int("runs", self.runs, minimum=MIN_RUNS, maximum=10_000_000)
        if self.background not in BACKGROUNDS:
            raise InvalidArgumentError("background", self.background, f"one of {BACKGROUNDS}")
        if self.pilot_runs is not None:
            check_int("pilot_runs", self.pilot_runs, minimum=0, maximum=10_000_000)
            if self.pilot_runs == 1:
                raise InvalidArgumentError("pilot_runs", 1, "0, or at least 2 per world")
        check_probability_open("confidence", self.confidence)
        check_seed(self.seed)
        if self.canary_kind is not None and self.canary_kind not in CANARY_KINDS:
            raise InvalidArgumentError(
                "canary kind", self.canary_kind, f"one of {', '.join(CANARY_KINDS)}"
            )

    @property
    def selection_runs(self) -> int:
        """Runs per world that choose the thresholds."""
        return self.runs // 3

    @property
    def final_runs(self) -> int:
        """Fresh runs per world that certify them."""
        return self.runs - self.selection_runs

    @property
    def pilots(self) -> int:
        """Pilot runs per world that fit the trace score."""
        if self.pilot_runs is not None:
            return int(self.pilot_runs)
        return self.runs // 3 if self.background == "opposing" else 0


@dataclass(frozen=True)
class MultiRunPlan:
    """What the whole-claim certifier is handed: the game, its pair and score, its sizes.

    ``x = (1,)`` (canary in) and ``x_prime = (0,)``; ``profile_sizes`` are the
    ``ProfileAuditConfig`` fields the run counts fix; ``pair_origin`` says where the pair
    came from.  The caller (the API, a figure) builds the certifier from it: auditors do
    not import each other.
    """

    game: CanaryGame
    canary_kind: str
    score: GameScore
    profile_sizes: dict[str, Any]
    pair_origin: str
    x: tuple[int, ...] = (1,)
    x_prime: tuple[int, ...] = (0,)


def plan_multi_run(
    mechanism: TrainingMechanism, epsilon: float, config: MultiRunConfig
) -> MultiRunPlan:
    """The multi-run audit of ``mechanism`` (claimed ``epsilon``) as ``config`` sizes it."""
    game, kind = canary_game(mechanism, epsilon if math.isfinite(epsilon) else 1e6, config)
    score = GameScore(columns=game.score_names if game.score_name == ALL_SCORES else ())
    sizes = {
        "selection_samples": config.selection_runs,
        "final_samples": config.final_runs,
        "confidence": config.confidence,
        "seed": config.seed,
    }
    origin = f"trained with and without one {kind} canary ({config.runs} runs each"
    if config.background == "opposing":
        origin += f"; base: {len(game.training.base)} opposing gradient records"
    if game.trace_weights:
        origin += f"; trace score fitted on {config.pilots} pilot runs each"
    return MultiRunPlan(game, kind, score, sizes, origin + ")")


def canary_game(mechanism: TrainingMechanism, epsilon: float, config: MultiRunConfig) -> Any:
    """The game of ``mechanism`` with its one canary (the first of its kind, drawn by seed)."""
    kind = config.canary_kind or default_kind(mechanism)
    if kind == "gradient" and mechanism.access != "white-box":
        raise InvalidArgumentError(
            "canary kind", kind, "a text canary: gradient canaries need a white-box trainer"
        )
    drawn = draw_canaries(kind, 2, mechanism.base, unit_rng(config.seed, (_CANARY_KEY,)))
    if len(drawn.base) != len(mechanism.base):
        mechanism = mechanism.with_base(drawn.base)
    canary = drawn.records[0]
    name = config.score if config.score is not None else _preferred(mechanism, canary, kind)
    if name == ALL_SCORES and (kind != "gradient" or not mechanism.gradient_scores):
        raise InvalidArgumentError(
            "score",
            name,
            "one named score: 'all' needs gradient canaries on a trainer that "
            "names its gradient scores",
        )
    if config.background == "opposing":
        mechanism = _opposing_background(mechanism, canary, kind)
    game = CanaryGame(epsilon=epsilon, training=mechanism, canary=canary, score_name=name)
    if config.pilots:
        weights = fit_trace_weights(game, config.pilots, config.seed)
        game = dataclasses.replace(game, trace_weights=tuple(weights.tolist()))
    return game, kind


def _opposing_background(mechanism: TrainingMechanism, canary: Any, kind: str) -> Any:
    """The trainer on as many gradient records as its base holds, each opposite the canary."""
    if kind != "gradient" or mechanism.access != "white-box":
        raise InvalidArgumentError(
            "background",
            "opposing",
            "'data' unless the canaries are gradient canaries of a white-box trainer",
        )
    opposite = GradientCanary(int(canary.coordinate), -float(canary.sign))
    return mechanism.with_base((opposite,) * len(mechanism.base))


def fit_trace_weights(game: CanaryGame, pilots: int, seed: int) -> np.ndarray:
    """Diagonal linear-discriminant weights on the canary's trace from ``pilots`` runs a world.

    ``w_t = (mean_in,t − mean_out,t) / v_t`` with ``v_t`` the pooled variance of step t
    (floored at 10⁻⁹ of the largest), zero where the difference's z-score is below
    ``√(2 ln T)`` (unless every step is), scaled to unit norm.  The runs come from their own
    child generators of ``seed``, apart from every run the certifier draws.
    """
    training = game.training
    worlds = []
    for included in (1, 0):
        dataset = training.combine(training.base, [game.canary] if included else [])
        children = unit_rng(seed, (_PILOT_KEY, included)).spawn(pilots)
        worlds.append(
            np.stack(
                [canary_trace(training, training.train(dataset, c), game.canary) for c in children]
            )
        )
    inside, outside = worlds
    if inside.shape != outside.shape:
        raise InvalidArgumentError(
            "background", "trace", "a trainer whose step count does not depend on its data"
        )
    variance = 0.5 * (inside.var(axis=0, ddof=1) + outside.var(axis=0, ddof=1))
    variance = np.maximum(variance, 1e-9 * max(float(variance.max()), 1e-300))
    difference = inside.mean(axis=0) - outside.mean(axis=0)
    weights = difference / variance
    # Steps whose difference is within noise get no weight (hard thresholding at the
    # universal threshold √(2 ln T) of Donoho & Johnstone 1994): a flaw that moves a few
    # steps is then not drowned by the estimation noise of all the others.
    z = difference / np.sqrt(variance * 2.0 / pilots)
    kept = np.abs(z) > math.sqrt(2.0 * math.log(max(z.size, 2)))
    if kept.any():
        weights = np.where(kept, weights, 0.0)
    norm = float(np.linalg.norm(weights))
    return weights / norm if norm > 0 else weights


def _preferred(mechanism: TrainingMechanism, canary: Any, kind: str) -> str:
    """:data:`ALL_SCORES` when the trainer names scores for gradient canaries, else ``""``.

    Read from the trainer's declared ``gradient_scores``, never from a training, so the
    choice is fixed before any sample is drawn.
    """
    return ALL_SCORES if kind == "gradient" and mechanism.gradient_scores else ""


__all__ = [
    "BACKGROUNDS",
    "MIN_RUNS",
    "PREFERRED_SCORE",
    "MultiRunConfig",
    "MultiRunPlan",
    "canary_game",
    "fit_trace_weights",
    "plan_multi_run",
]
