"""The multi-run canary game as a mechanism: input 1 trains with the canary, 0 without.

Nasr et al. (USENIX Security 2021, §4; 2023, §3) audit a training algorithm by training many
times on ``D`` and on ``D ∪ {canary}`` and thresholding a score of the canary on each model:
the scores are the outputs of the mechanism ``x ↦ score(train(D ∪ {canary}·x), canary)`` on
the two inputs ``x ∈ {0, 1}``, whose neighbouring pair is exactly the add/remove-one-record
relation of the trainer's accountant.  :class:`CanaryGame` is that mechanism, so the whole-
claim certifier (:mod:`dpaudit.auditors.profile`) audits it as it audits any other: it picks
thresholds on some runs and certifies them, with the whole δ(ε) curve and μ, on fresh ones.

Each output is one training run from its own child generator of the ``rng`` the auditor
gives, so runs are independent and the game is reproducible from the audit's seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from dpaudit.claims import InputDomain
from dpaudit.errors import MechanismError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.training.contract import TrainingMechanism, checked_scores


@dataclass(frozen=True, eq=False)
class CanaryGame(Mechanism):
    """``x = 1``: train on ``base + [canary]``, ``x = 0``: on ``base``; the canary's score."""

    training: TrainingMechanism = field(default=None)  # type: ignore[assignment]
    canary: Any = None
    #: Which of the trainer's named :meth:`~TrainingMechanism.scores` to release ("" : its
    #: ``score``; :data:`ALL_SCORES`: every name of its ``gradient_scores``, one column each);
    #: fixed before any training, so choosing it costs no confidence.
    score_name: str = ""
    #: Weights of a linear score on the canary's white-box trace (one per step), fitted by
    #: the auditor on pilot runs before any certified run; empty: no such column.  When set,
    #: the column :data:`FITTED_TRACE` ``= Σ_t w_t·trace_t`` follows the named scores.
    trace_weights: tuple[float, ...] = ()

    name: ClassVar[str] = "canary-game"
    reference: ClassVar[str] = (
        "Nasr et al., USENIX Security 2021 §4 and 2023 §3: train with and without a canary"
    )
    summary: ClassVar[str] = "a training algorithm with or without one canary, scored on it"
    # One output is one training run: the randomness probe uses two per chunk.
    probe_rows: ClassVar[int] = 2

    @property
    def claim(self) -> Any:
        return self.training.claim

    @property
    def input_domain(self) -> InputDomain:
        return InputDomain((1,), 0, 1, integer=True)

    @property
    def score_names(self) -> tuple[str, ...]:
        """The named scores each output holds, in column order."""
        named = (
            tuple(self.training.gradient_scores)
            if self.score_name == ALL_SCORES
            else (self.score_name or "score",)
        )
        return (*named, FITTED_TRACE) if self.trace_weights else named

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (len(self.score_names),)

    def user_code(self) -> Any:
        return self.training.user_code()

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        included = bool(x[0])
        dataset = self.training.combine(self.training.base, [self.canary] if included else [])
        out = np.empty((n, len(self.score_names)), dtype=np.float64)
        for i, child in enumerate(rng.spawn(n)):
            model = self.training.train(dataset, child)
            out[i] = self._score(model)
        return out

    def _score(self, model: Any) -> list[float]:
        fitted = [self._fitted(model)] if self.trace_weights else []
        if not self.score_name:
            raw = self.training.score(model, [self.canary])
            return [float(checked_scores(raw, 1, self.training.name)[0]), *fitted]
        offered = self.training.scores(model, [self.canary])
        named = self.score_names[: len(self.score_names) - len(fitted)]
        missing = [name for name in named if name not in offered]
        if missing:
            raise MechanismError(
                f"{self.training.name} offers no score {missing[0]!r} for this canary "
                f"(it offers {', '.join(offered)})"
            )
        scores = [float(checked_scores(offered[name], 1, self.training.name)[0]) for name in named]
        return [*scores, *fitted]

    def _fitted(self, model: Any) -> float:
        trace = canary_trace(self.training, model, self.canary)
        if trace.size != len(self.trace_weights):
            raise MechanismError(
                f"{self.training.name}'s trace has {trace.size} steps, the fitted score "
                f"{len(self.trace_weights)}: its step count changed between runs"
            )
        return float(np.dot(self.trace_weights, trace))

    def spec(self) -> dict[str, Any]:
        return {
            "mechanism": self.name,
            "training": self.training.spec(),
            "canary": repr(self.canary)[:200],
            "score": ", ".join(self.score_names),
        }


def canary_trace(training: TrainingMechanism, model: Any, canary: Any) -> np.ndarray:
    """The trainer's white-box trace of ``canary`` on ``model`` (one value per step), checked."""
    raw = training.trace(model, [canary])
    if raw is None:
        raise MechanismError(f"{training.name} released no white-box trace of the canary")
    trace = np.asarray(raw, dtype=np.float64)
    if trace.ndim != 2 or trace.shape[1] != 1 or not np.all(np.isfinite(trace)):
        raise MechanismError(
            f"{training.name}.trace returned an array of shape {trace.shape}: expected "
            "finite values of shape (steps, 1) for one canary"
        )
    return trace[:, 0]


@dataclass(frozen=True)
class GameScore:
    """The profile certifier's score of a canary game's output: the trainer's own score, or
    (``columns``: the game's :attr:`CanaryGame.score_names`) every named score as a column,
    each a candidate the certifier's selection chooses among on its own runs."""

    columns: tuple[str, ...] = ()

    family = "canary score"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        flat = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)
        return flat if len(self.columns) > 1 else flat[:, 0]

    def describe(self) -> str:
        """What is thresholded."""
        if len(self.columns) > 1:
            return (
                f"the canary's scores on each trained model ({', '.join(self.columns)}; "
                "high: looks included), the best chosen on the selection runs"
            )
        return "the canary's score on each trained model (high: looks included)"


#: ``CanaryGame.score_name`` for every named score of the trainer at once.
ALL_SCORES = "all"
#: The column name of the linear score fitted to the white-box trace.
FITTED_TRACE = "fitted-trace"

__all__ = ["ALL_SCORES", "FITTED_TRACE", "CanaryGame", "GameScore", "canary_trace"]
