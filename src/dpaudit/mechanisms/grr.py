"""Generalised (k-ary) randomised response, a.k.a. direct encoding.

Wang, Blocki, Li & Jha, "Locally Differentially Private Protocols for Frequency
Estimation", USENIX Security 2017, §4.1: on input ``v ∈ {0..k−1}`` report ``v``
with ``p = e^ε/(e^ε+k−1)`` and each other category with ``q = 1/(e^ε+k−1)``.
Exact pure ε: ``ln(p/q) = ε`` for any two distinct inputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpaudit.analysis.randomized_response import grr_probabilities, safe_log
from dpaudit.mechanisms.base import parameter
from dpaudit.mechanisms.domains import check_category_params
from dpaudit.mechanisms.randomized_response import CategoryResponse
from dpaudit.mechanisms.registry import register


@register
@dataclass(frozen=True)
class GeneralizedRandomizedResponse(CategoryResponse):
    """k-ary randomised response over the categories ``{0..k−1}``."""

    name: ClassVar[str] = "grr"
    reference: ClassVar[str] = (
        "Wang et al., USENIX Security 2017, §4.1 (direct encoding): "
        "p = e^ε/(e^ε+k−1), q = 1/(e^ε+k−1)"
    )
    summary: ClassVar[str] = "generalised randomised response over k categories"
    output_kind: ClassVar[str] = "categorical"
    truth_method: ClassVar[str] = (
        "closed form: ln(p/q), equal for every pair of distinct categories"
    )
    truth_witness: ClassVar[str] = "any two categories; worst output y = x"

    k: int = parameter(4, doc="number of categories (input and output are 0..k−1)")

    def __post_init__(self) -> None:
        check_category_params(self.epsilon, self.k)

    @property
    def p(self) -> float:
        """Probability of reporting the true category."""
        return grr_probabilities(self.epsilon, self.k)[0]

    @property
    def q(self) -> float:
        """Probability of reporting one particular other category."""
        return grr_probabilities(self.epsilon, self.k)[1]

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        v = int(x[0])
        keep = rng.random((n, 1)) < self.p
        # A uniform draw over the k−1 other categories: skip over v.
        other = rng.integers(0, self.k - 1, size=(n, 1), dtype=np.int64)
        other += other >= v
        return np.where(keep, v, other)

    def log_prob(self, x: Any, outputs: np.ndarray) -> np.ndarray:
        v = self.validate_input(x)[0]
        y = np.asarray(outputs, dtype=np.float64).reshape(len(outputs))
        valid = (y >= 0) & (y <= self.k - 1) & (y == np.round(y))
        out = np.where(valid, safe_log(self.q), -math.inf)
        out[y == v] = safe_log(self.p)
        return out
