"""Baseline ``identity``: copies its input (no privacy at all).

Used as the "copy input" baseline of the ACL 2022 sanity check (Habernal,
ACL 2022, §4): the mechanism *claims* ε-DP but its output equals its input, so
two different inputs have disjoint output distributions and the true ε is
infinite.  It is additive with zero noise, so :meth:`noise_from_uniform` returns
zeros.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpaudit.claims import AnalyticTruth
from dpaudit.mechanisms.base import parameter
from dpaudit.mechanisms.domains import BoxMechanism, box_corners, check_box_params
from dpaudit.mechanisms.registry import register
from dpaudit.witness import Witness


@register
@dataclass(frozen=True)
class IdentityMechanism(BoxMechanism):
    """``M(x) = x``; claims ε-DP, true ε = ∞."""

    name: ClassVar[str] = "identity"
    reference: ClassVar[str] = "Habernal, ACL 2022, §4 (baseline: copy the input, no privacy)"
    summary: ClassVar[str] = "copies its input (baseline with infinite true ε)"
    known_flawed: ClassVar[bool] = True

    dim: int = parameter(1, doc="number of coordinates n")
    domain: tuple[float, float] = parameter(
        (0.0, 1.0), doc="input range [LOW, HIGH] per coordinate"
    )

    def __post_init__(self) -> None:
        check_box_params(self.epsilon, self.dim, self.domain)

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.broadcast_to(x, (n, self.dim)).copy()

    def noise_from_uniform(self, u: np.ndarray) -> np.ndarray:
        return np.zeros(np.shape(u))

    def log_prob(self, x: Any, outputs: np.ndarray) -> np.ndarray:
        """Log-pmf of the point mass at ``x``: 0 where the output equals ``x``, else ``-inf``."""
        c = self.validate_input(x).reshape(1, -1)
        y = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)
        return np.where(np.all(y == c, axis=1), 0.0, -math.inf)

    def privacy_loss(self, x: Any, x_prime: Any) -> float:
        a, b = self.validate_pair(x, x_prime)
        return 0.0 if np.array_equal(a, b) else math.inf

    def truth(self) -> AnalyticTruth:
        x, x_prime = box_corners(self.dim, self.domain)
        return AnalyticTruth(
            true_epsilon=math.inf,
            method="support argument: M(x) = x, so the output {x} has probability 1 vs 0",
            witness=Witness.analytic(
                x, x_prime, math.inf, "any two different inputs; S = {x} has P = 1 vs 0"
            ),
        )
