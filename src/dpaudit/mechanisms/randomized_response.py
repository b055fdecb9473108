"""Binary randomised response (Warner, JASA 1965; the ε-LDP form of Wang et al. 2017, §4.1).

The input is one bit; the mechanism reports it truthfully with probability
``p = e^ε/(1+e^ε)`` and flips it otherwise.  Its exact pure ε is
``ln(p/(1−p)) = ε`` (see :mod:`dpaudit.analysis.randomized_response`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from scipy import special

from dpaudit.analysis.randomized_response import log_ratio, rr_keep_probability, safe_log
from dpaudit.claims import AnalyticTruth, PrivacyClaim, WitnessPair
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.domains import category_claim
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_epsilon


@dataclass(frozen=True)
class CategoryResponse(Mechanism, abstract=True):
    """Report the true one of ``k`` categories with ``p`` and each other one with ``q``.

    Binary randomised response (``k = 2``) and GRR (Wang et al., USENIX Security
    2017, §4.1) share the claim (ε-DP on ``{0..k−1}``), the output (one category)
    and the exact loss ``ln(p/q)`` of any two distinct inputs.  Subclasses define
    ``k``, ``p`` and ``q`` and say in :attr:`truth_method` and
    :attr:`truth_witness` how :meth:`truth` reads for them.
    """

    if TYPE_CHECKING:
        k: int
        p: float
        q: float

    #: ``method`` of :meth:`truth`.
    truth_method: ClassVar[str] = ""
    #: Explanation of the witness pair of :meth:`truth`.
    truth_witness: ClassVar[str] = ""

    @property
    def claim(self) -> PrivacyClaim:
        return category_claim(self.epsilon, self.k)

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (1,)

    def privacy_loss(self, x: Any, x_prime: Any) -> float:
        a, b = self.validate_pair(x, x_prime)
        return 0.0 if a[0] == b[0] else log_ratio(self.p, self.q)

    def truth(self) -> AnalyticTruth:
        loss = self.privacy_loss(0, 1)
        return AnalyticTruth(
            true_epsilon=loss,
            method=self.truth_method,
            witness=WitnessPair((0.0,), (1.0,), loss, self.truth_witness),
        )


@register
@dataclass(frozen=True)
class RandomizedResponse(CategoryResponse):
    """Report one bit truthfully with probability ``e^ε/(1+e^ε)``."""

    name: ClassVar[str] = "randomized-response"
    reference: ClassVar[str] = (
        "Warner, JASA 1965; Wang et al., USENIX Security 2017, §4.1 (k = 2): "
        "keep with p = e^ε/(1+e^ε)"
    )
    summary: ClassVar[str] = "binary randomised response on one bit"
    output_kind: ClassVar[str] = "binary"
    truth_method: ClassVar[str] = "closed form: ln(p/(1−p)) at the output equal to the first input"
    truth_witness: ClassVar[str] = "the two inputs; worst output y = x"
    #: One bit: the categories 0 and 1.
    k: ClassVar[int] = 2

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)

    @property
    def p(self) -> float:
        """Probability of reporting the true bit."""
        return rr_keep_probability(self.epsilon)

    @property
    def q(self) -> float:
        """Probability of reporting the other bit, ``1 − p`` = ``1/(1+e^ε)``."""
        return float(special.expit(-self.epsilon))

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        flip = rng.random((n, 1)) >= self.p
        return np.bitwise_xor(flip, bool(x[0])).astype(np.uint8)

    def log_prob(self, x: Any, outputs: np.ndarray) -> np.ndarray:
        bit = self.validate_input(x)[0]
        y = np.asarray(outputs, dtype=np.float64).reshape(len(outputs))
        out = np.full(y.shape, -math.inf)
        out[y == bit] = safe_log(self.p)
        out[y == 1.0 - bit] = safe_log(self.q)
        return out
