"""Why DPText has infinite privacy loss: a support argument (Habernal, ACL 2022, §3.3).

DPText (Beigi et al. 2019; as analysed by Habernal, ACL 2022, Eq. 8–9) draws
``u ~ U(0, 1)`` and uses ``−b·sgn(u)·ln(1 − 2|u|)`` as Laplace noise.  That is
the inverse CDF for ``u ~ U(−1/2, 1/2)``, not for ``U(0, 1)``: for ``u < 1/2``
the value is ``b·Exp(1)`` (non-negative), for ``u > 1/2`` the logarithm's
argument is negative and numpy returns NaN.  Whatever is done with the NaNs
(replaced by 0 as in the reference code, redrawn, or kept), **the noise is never
negative**.

Hence for two inputs with ``x_i < x'_i`` in some coordinate ``i``, the set
``S = {y : y_i < x'_i}`` has positive probability under ``x`` and probability 0
under ``x'`` (Theorem 3.2 of the paper uses ``x = 0``, ``x' = 1`` and the output
``z = 0.1``): the privacy loss ``ln(P[M(x) ∈ S] / P[M(x') ∈ S])`` is infinite.

Exact probabilities of ``S`` per NaN policy, with ``d = x'_i − x_i > 0`` and
``N`` the noise (for ``u`` continuous on (0, 1)):

* ``zero``:    ``N = 0`` w.p. 1/2, else ``b·Exp(1)``: ``P[N < d] = 1 − e^{−d/b}/2``;
* ``discard``: ``N ~ b·Exp(1)``:                      ``P[N < d] = 1 − e^{−d/b}``;
* ``keep``:    ``N = NaN`` w.p. 1/2 (never in ``S``):  ``P[N < d] = (1 − e^{−d/b})/2``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.errors import InvalidArgumentError

NAN_POLICIES = ("zero", "discard", "keep")


def dptext_noise_below(d: float, scale: float, nan_policy: str) -> float:
    """``P[N < d]`` for DPText noise ``N`` with scale ``b`` (``d > 0``; see module docstring)."""
    if nan_policy not in NAN_POLICIES:
        raise InvalidArgumentError("nan_policy", nan_policy, f"one of {', '.join(NAN_POLICIES)}")
    if d <= 0:
        return 0.0  # the noise is never negative
    tail = math.exp(-d / scale)  # P[b·Exp(1) >= d]
    if nan_policy == "zero":
        return 1.0 - 0.5 * tail
    if nan_policy == "discard":
        return 1.0 - tail
    return 0.5 * (1.0 - tail)


@dataclass(frozen=True)
class SupportWitness:
    """A set ``S = {y : y[coordinate] < threshold}`` separating two inputs' supports.

    ``prob_low`` is the exact ``P[M(low_input) ∈ S] > 0``; ``P[M(high_input) ∈ S] = 0``.
    """

    coordinate: int
    threshold: float
    low_input: tuple[float, ...]
    high_input: tuple[float, ...]
    prob_low: float
    prob_high: float
    nan_policy: str

    def describe(self) -> str:
        """One sentence naming the set and its two probabilities."""
        return (
            f"S = {{y : y[{self.coordinate}] < {self.threshold:g}}}: "
            f"P[M(x) ∈ S] = {self.prob_low:.6g} under x = {_short(self.low_input)}, "
            f"P[M(x') ∈ S] = 0 under x' = {_short(self.high_input)} (noise is never negative, "
            f"nan_policy={self.nan_policy})"
        )


def _short(v: tuple[float, ...]) -> str:
    head = ", ".join(f"{t:g}" for t in v[:4])
    return f"({head}{', ...' if len(v) > 4 else ''})"


def support_witness(
    x: np.ndarray, x_prime: np.ndarray, scale: float, nan_policy: str
) -> SupportWitness | None:
    """The separating set for a pair of inputs, or None if the inputs are equal.

    Chooses the coordinate with the largest gap; ``low_input`` is whichever of
    the two inputs is smaller there.
    """
    a = np.asarray(x, dtype=np.float64).ravel()
    b = np.asarray(x_prime, dtype=np.float64).ravel()
    gaps = np.abs(a - b)
    if not np.any(gaps > 0):
        return None
    i = int(np.argmax(gaps))
    low, high = (a, b) if a[i] < b[i] else (b, a)
    d = float(high[i] - low[i])
    return SupportWitness(
        coordinate=i,
        threshold=float(high[i]),
        low_input=tuple(float(t) for t in low),
        high_input=tuple(float(t) for t in high),
        prob_low=dptext_noise_below(d, scale, nan_policy),
        prob_high=0.0,
        nan_policy=nan_policy,
    )
