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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from dpaudit.auditors.training.canaries import CANARY_KINDS, default_kind, draw_canaries
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.training.contract import TrainingMechanism
from dpaudit.mechanisms.training.game import ALL_SCORES, CanaryGame, GameScore
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
_CANARY_KEY = 45


@dataclass(frozen=True)
class MultiRunConfig:
    """``runs`` trainings per world (with and without the canary), split 1 : 2 between
    choosing and certifying thresholds; ``canary_kind`` as for the one-run audit; ``score``:
    which of the trainer's named scores the thresholds cut, chosen before any training;
    ``"all"`` (the default, None, for gradient canaries on a trainer that names its gradient
    scores): every one of them, each a candidate column that the selection third chooses
    among (no extra statements, so no extra error); otherwise the trainer's ``score``."""

    runs: int = 600
    canary_kind: str | None = None
    score: str | None = None
    confidence: float = 0.95
    seed: int = 0
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)

    def __post_init__(self) -> None:
        check_int("runs", self.runs, minimum=MIN_RUNS, maximum=10_000_000)
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
    origin = f"trained with and without one {kind} canary ({config.runs} runs each)"
    return MultiRunPlan(game, kind, score, sizes, origin)


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
    game = CanaryGame(epsilon=epsilon, training=mechanism, canary=canary, score_name=name)
    return game, kind


def _preferred(mechanism: TrainingMechanism, canary: Any, kind: str) -> str:
    """:data:`ALL_SCORES` when the trainer names scores for gradient canaries, else ``""``.

    Read from the trainer's declared ``gradient_scores``, never from a training, so the
    choice is fixed before any sample is drawn.
    """
    return ALL_SCORES if kind == "gradient" and mechanism.gradient_scores else ""


__all__ = [
    "MIN_RUNS",
    "PREFERRED_SCORE",
    "MultiRunConfig",
    "MultiRunPlan",
    "canary_game",
    "plan_multi_run",
]
