"""TEM, the truncated exponential mechanism (Carvalho et al., SDM 2023).

For input ``w`` (Carvalho et al. 2023, Alg. 1):

* ``L_w = {y : d(w, y) ≤ γ}`` — the words within the truncation radius, with
  score ``f(w, y) = −d(w, y)``;
* an extra element ``⊥`` with score ``−γ + (2/ε)·ln|L̄_w|``, ``L̄_w`` the
  other words;
* Gumbel noise of scale ``2/ε`` is added to every score and the maximum is
  taken; if it is ``⊥``, the output is a uniformly random word of ``L̄_w``.

The default radius is the paper's ``γ = (2/ε)·ln((1 − β)|V|/β)`` with
``β = 0.001`` (from the paper's utility bound).  By the Gumbel-max trick the
output law is exactly

    p(y | w) ∝ exp(−ε·min(d(w, y), γ)/2)   over the vocabulary,

(``⊥`` carries weight ``|L̄_w|·e^{−εγ/2}``, shared uniformly), which is how it
is sampled here (inverse CDF: the same law, no per-word Gumbel draws).
Claim (the paper's privacy theorem): ``ε·d``-privacy for the Euclidean ``d``.  True: the score
``−min(d(w, y), γ)`` is 1-Lipschitz in ``w`` under ``d``, so the loss is at
most ``ε·d(w, w')``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import parameter
from dpaudit.mechanisms.registry import register
from dpaudit.mechanisms.word.exponential import ExponentialWordMechanism


@register
@dataclasses.dataclass(frozen=True, eq=False)
class TEM(ExponentialWordMechanism):
    """Truncated exponential mechanism: exponential mechanism on ``−min(d, γ)``."""

    name = "tem"
    reference = "Carvalho et al., SDM 2023, Alg. 1 (TEM; γ from the utility parameter β)"
    summary = "TEM: truncated exponential mechanism with a ⊥ element (ε·d-privacy)"

    beta: float = parameter(0.001, doc="utility parameter β of the default radius")
    gamma: float | None = parameter(None, doc="truncation radius γ (default from β)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 < self.beta < 1.0:
            raise InvalidArgumentError("beta", self.beta, "a probability in (0, 1)")
        if self.gamma is not None and not (math.isfinite(self.gamma) and self.gamma > 0):
            raise InvalidArgumentError("gamma", self.gamma, "a positive radius")

    @property
    def radius(self) -> float:
        """``γ``: given, or ``(2/ε)·ln((1 − β)|V|/β)``."""
        if self.gamma is not None:
            return float(self.gamma)
        v = self.embedding.size
        return 2.0 / self.epsilon * math.log((1.0 - self.beta) * v / self.beta)

    def log_weights(self, i: int) -> np.ndarray:
        """``−ε·min(d(w, y), γ)/2`` for every word ``y``."""
        d = np.minimum(self.embedding.distances_from(i), self.radius)
        return self._with_specials(-0.5 * self.epsilon * d)
