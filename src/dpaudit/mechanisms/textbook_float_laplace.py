"""``textbook-float-laplace``: the Laplace mechanism as textbooks write it, in float64.

``M(x) = x + Lap(Δ/ε)`` computed as ``x + rng.laplace(0, Δ/ε)`` in IEEE-754
double precision, on ``[low, high]`` with ``Δ = high − low`` — numpy's
textbook sampler, as in DP-Sniper's floating-point benchmark (Bichsel et al.,
S&P 2021, §6.5: ``np.random.laplace`` with scale ``1/ε``, ε = 0.1, inputs
differing by 1).

Why it is flawed (Mironov, "On Significance of the Least Significant Bits for
Differential Privacy", CCS 2012, §3): the noise is a float with a
sampler-specific pattern of low-order mantissa bits, and the addition
``x + n`` rounds to the grid of the result, so the set of reachable outputs
depends on ``x``.  Concretely, for ``x = 1`` every output in ``(−0.5, 0.5)``
is ``1 + n`` with ``n ∈ (−1.5, −0.5)``, computed exactly (Sterbenz) on the grid
of ``n``, a multiple of 2⁻⁵³: its last mantissa bit is always 0.  For
``x = 0`` the output is ``n`` itself, whose last bit is 1 about half the time.
The event {``|y| < 0.5`` and last mantissa bit 1} has probability ≈ 0.019
under ``x = 0`` and **exactly 0** under ``x = 1`` at ε = 0.1 (10⁷ draws each):
the true ε is infinite, on an event of about 2 % mass.

What dpaudit can and cannot detect
----------------------------------
* On the raw outputs (``-p features=value``, the default) the black-box search's
  ``representation`` family (:mod:`dpaudit.auditors.blackbox.representation`)
  sees that the outputs' lowest set bits differ between the inputs beyond their
  values, and certifies the set {lowest set bit ≤ 2⁻⁵⁴}: ε_lcb ≈ 11.3 at 10⁷
  final samples, limited only by the sample size (docs/guide/floating-point.md).
* ``-p features=bits`` post-processes the output into ``[value, last mantissa
  bit]`` (:func:`float_bit_features`); by post-processing any bound on it is a
  bound for the mechanism.  It is kept for comparison with DP-Sniper, which reports
  ε_lcb = 0.25 for this mechanism with an MLP on all 64 bits.
* ``-p variant=snapping`` is Mironov's fix (clamp to ``±B``, B = 100, scale
  ``Δ(1 + 2⁻⁴⁹B)/ε``, round to the power of two Λ ≥ scale), as in DP-Sniper's
  ``LaplaceFixed``: its outputs lie on a coarse grid the input cannot shift, and
  the audit finds nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpaudit.claims import AnalyticTruth, PrivacyClaim
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import Mechanism, parameter
from dpaudit.mechanisms.domains import box_claim, check_box_domain
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_epsilon
from dpaudit.witness import Witness

#: Output representations: the float itself, or the bit features of :func:`float_bit_features`.
FEATURES = ("value", "bits")
#: ``textbook``: the flawed sampler; ``snapping``: Mironov's fix, for comparison.
VARIANTS = ("textbook", "snapping")
#: Snapping's clamp bound B (DP-Sniper's LaplaceFixed default).
SNAPPING_BOUND = 100.0


def float_bit_features(y: np.ndarray) -> np.ndarray:
    """``[value, last mantissa bit]`` per float64 output (shape ``(n, 1)`` → ``(n, 2)``).

    The last mantissa bit is bit 0 of the IEEE-754 binary64 pattern; it carries
    the rounding of ``x + n`` that Mironov (CCS 2012) exploits.
    """
    values = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    last_bit = (values.view(np.uint64) & np.uint64(1)).astype(np.float64)
    return np.column_stack([values, last_bit])


@register
@dataclass(frozen=True)
class TextbookFloatLaplace(Mechanism):
    """``x + rng.laplace(0, Δ/ε)`` in float64 on ``[low, high]``; claims ε-DP, true ε = ∞.

    ``variant=snapping`` replaces the sampler by Mironov's snapping mechanism.
    """

    name: ClassVar[str] = "textbook-float-laplace"
    reference: ClassVar[str] = (
        "Mironov, CCS 2012, §3 (floating-point Laplace is not DP); DP-Sniper, Bichsel et al., "
        "S&P 2021, §6.5 (numpy Laplace at ε = 0.1: ε_lcb 0.25; snapping fix: 0.098)"
    )
    summary: ClassVar[str] = "numpy's textbook floating-point Laplace (DP-Sniper's float benchmark)"
    known_flawed: ClassVar[bool] = True

    domain: tuple[float, float] = parameter(
        (0.0, 1.0), doc="input range [LOW, HIGH]; the sensitivity is HIGH − LOW"
    )
    features: str = parameter(
        "value",
        doc="output: the float (value) or [value, last mantissa bit] (bits; post-processing)",
        choices=FEATURES,
    )
    variant: str = parameter(
        "textbook",
        doc="textbook (flawed) or snapping (Mironov's fix: clamp to ±B, round to a power of 2)",
        choices=VARIANTS,
    )

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        low, high = check_box_domain(self.domain)
        if self.features not in FEATURES:
            raise InvalidArgumentError("features", self.features, "value or bits")
        if self.variant not in VARIANTS:
            raise InvalidArgumentError("variant", self.variant, "textbook or snapping")
        if self.variant == "snapping" and not (
            max(abs(low), abs(high)) <= SNAPPING_BOUND and self.scale < SNAPPING_BOUND
        ):
            raise InvalidArgumentError(
                "domain", self.domain, f"inside ±{SNAPPING_BOUND:g} with Δ/ε < {SNAPPING_BOUND:g}"
            )

    @property
    def scale(self) -> float:
        """Noise scale: ``Δ/ε`` (textbook); ``Δ(1 + 2⁻⁴⁹B)/ε`` (snapping, Mironov 2012 Thm 1)."""
        base = (self.domain[1] - self.domain[0]) / self.epsilon
        if self.variant == "snapping":
            return base * (1.0 + SNAPPING_BOUND * 2.0**-49)
        return base

    @property
    def snapping_grid(self) -> float:
        """Λ: the smallest power of two >= the scale (snapping's output grid)."""
        return 2.0 ** math.ceil(math.log2(self.scale))

    @property
    def claim(self) -> PrivacyClaim:
        low, high = self.domain
        return box_claim(
            self.epsilon, 1, self.domain, sensitivity=high - low, sensitivity_norm="L1"
        )

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (2,) if self.features == "bits" else (1,)

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.variant == "snapping":
            y = self._snapping(float(x[0]), n, rng)
        else:
            # The textbook expression, evaluated in float64 exactly as written.
            y = x[0] + rng.laplace(0.0, self.scale, size=(n, 1))
        return float_bit_features(y) if self.features == "bits" else y

    def _snapping(self, x: float, n: int, rng: np.random.Generator) -> np.ndarray:
        """Mironov (CCS 2012, §5.2): clamp_B(round_Λ(clamp_B(x) + S·λ·ln U)), U in (0, 1]."""
        b = SNAPPING_BOUND
        sign = 1.0 - 2.0 * rng.integers(0, 2, size=(n, 1))
        u = 1.0 - rng.random((n, 1))  # (0, 1]: ln U is finite
        y = min(b, max(-b, x)) + sign * self.scale * np.log(u)
        grid = self.snapping_grid
        return np.clip(np.round(y / grid) * grid, -b, b)

    def truth(self) -> AnalyticTruth | None:
        if self.variant == "snapping":
            return None  # Mironov's Thm 1 bounds it by about the claim; no closed form here
        low, high = self.domain
        return AnalyticTruth(
            true_epsilon=math.inf,
            method=(
                "support argument (Mironov, CCS 2012): x + n is rounded to the float grid of "
                "the result, so some outputs are reachable from one input and not the other"
            ),
            true_sensitivity=high - low,
            sensitivity_norm="L1",
            witness=Witness.analytic(
                (low,), (high,), math.inf, "outputs whose low mantissa bits only x can produce"
            ),
            notes=(
                "e.g. x = 0 vs 1 at ε = 0.1: |y| < 0.5 with last mantissa bit 1 has probability "
                "≈ 0.019 vs exactly 0; visible to the audit with -p features=bits",
            ),
        )
