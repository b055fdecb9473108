"""Baseline ``random-bits``: ignores its input and outputs uniform random bits.

The "random" baseline of the ACL 2022 sanity check (Habernal, ACL 2022, §4):
the output distribution is the same for every input, so the true ε is 0 — any
empirical loss it shows is pure sampling error.
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
class RandomBitsMechanism(BoxMechanism):
    """``M(x) ~ U({0,1}^n)`` whatever ``x``; true ε = 0."""

    name: ClassVar[str] = "random-bits"
    reference: ClassVar[str] = "Habernal, ACL 2022, §4 (baseline: uniformly random output)"
    summary: ClassVar[str] = "uniform random bits, independent of the input (true ε = 0)"
    output_kind: ClassVar[str] = "binary"

    dim: int = parameter(1, doc="number of coordinates n (input and output)")
    domain: tuple[float, float] = parameter(
        (0.0, 1.0), doc="input range [LOW, HIGH] per coordinate"
    )

    def __post_init__(self) -> None:
        check_box_params(self.epsilon, self.dim, self.domain)

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.integers(0, 2, size=(n, self.dim), dtype=np.uint8)

    def log_prob(self, x: Any, outputs: np.ndarray) -> np.ndarray:
        self.validate_input(x)
        y = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)
        valid = np.all((y == 0) | (y == 1), axis=1)
        return np.where(valid, -self.dim * math.log(2.0), -math.inf)

    def privacy_loss(self, x: Any, x_prime: Any) -> float:
        self.validate_pair(x, x_prime)
        return 0.0

    def truth(self) -> AnalyticTruth:
        x, x_prime = box_corners(self.dim, self.domain)
        return AnalyticTruth(
            true_epsilon=0.0,
            method="closed form: the output law does not depend on the input",
            witness=Witness.analytic(x, x_prime, 0.0, "every pair has identical output laws"),
        )
