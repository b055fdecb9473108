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
        if self.score_name == ALL_SCORES:
            return tuple(self.training.gradient_scores)
        return (self.score_name or "score",)

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
        if not self.score_name:
            raw = self.training.score(model, [self.canary])
            return [float(checked_scores(raw, 1, self.training.name)[0])]
        offered = self.training.scores(model, [self.canary])
        missing = [name for name in self.score_names if name not in offered]
        if missing:
            raise MechanismError(
                f"{self.training.name} offers no score {missing[0]!r} for this canary "
                f"(it offers {', '.join(offered)})"
            )
        return [
            float(checked_scores(offered[name], 1, self.training.name)[0])
            for name in self.score_names
        ]

    def spec(self) -> dict[str, Any]:
        return {
            "mechanism": self.name,
            "training": self.training.spec(),
            "canary": repr(self.canary)[:200],
            "score": ", ".join(self.score_names),
        }


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

__all__ = ["ALL_SCORES", "CanaryGame", "GameScore"]
