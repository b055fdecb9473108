"""The Laplace mechanism with a correct sampler (Dwork et al., TCC 2006).

``M(x) = x + Z``, ``Z_i ~ Lap(b)`` i.i.d., ``b = Δ₁/ε`` where ``Δ₁`` is the L1
sensitivity.  As in the ACL 2022 sanity check (Habernal 2022, §4, "vanilla
Laplace"), the input is a vector in ``[low, high]^n`` and every pair of inputs is
neighbouring (local DP), so the default ``Δ₁ = n·(high − low)``.

The additive mechanisms sample by their declared inverse-CDF transform
(``noise_from_uniform`` on open uniforms), so the sanity check's fused path and
the sampler run the same code.  :func:`sample_laplace` (``Lap(b) = b·(E·S)``
with ``E ~ Exp(1)`` and an independent random sign ``S``, exact and faster) is
kept for mechanisms that declare no transform (ADePT's clipped variants).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpaudit.analysis.laplace import laplace_log_density, laplace_pair_loss
from dpaudit.claims import AnalyticTruth
from dpaudit.mechanisms.base import parameter
from dpaudit.mechanisms.domains import BoxMechanism, box_corners, check_box_params
from dpaudit.mechanisms.output_grid import round_to_grid
from dpaudit.mechanisms.registry import register
from dpaudit.random import open_uniform
from dpaudit.validation import check_positive
from dpaudit.witness import Witness


def sample_laplace(shape: tuple[int, ...], scale: float, rng: np.random.Generator) -> np.ndarray:
    """Exact Laplace(0, scale) noise as a signed standard exponential."""
    noise = rng.standard_exponential(shape)
    sign_bits = rng.integers(0, 2, size=shape, dtype=np.int8)
    noise[sign_bits == 0] *= -1.0
    noise *= scale
    return noise


@dataclass(frozen=True)
class AdditiveLaplace(BoxMechanism, abstract=True):
    """``x + Lap(b)^n`` on a box ``[low, high]^n``, claiming ε-DP for an assumed L1 sensitivity.

    The sampler, its uniform transform and the density of every mechanism that
    adds Laplace noise to the input unchanged and differs from the others only
    in how it calibrates ``b`` (``laplace``; ADePT's ACL 2022 variant).
    Subclasses declare the ``dim`` and ``domain`` parameters and define
    ``assumed_sensitivity``; the scale is ``b = Δ₁/ε``.
    """

    sensitivity_norm: ClassVar[str | None] = "L1"

    @property
    def scale(self) -> float:
        """Noise scale ``b = Δ₁/ε``."""
        return self.assumed_sensitivity / self.epsilon

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        # The sampler *is* the declared transform (the fused sanity-check path runs the
        # same code), applied to uniforms strictly inside (0, 1).
        out = self.noise_from_uniform(open_uniform(rng, (n, self.dim)))
        out += x
        return self.round_output(out)

    def round_output(self, out: np.ndarray) -> np.ndarray:
        # Float64 bits that leak no more than the value (mechanisms/output_grid.py).
        return round_to_grid(out, self.scale)

    def noise_from_uniform(self, u: np.ndarray) -> np.ndarray:
        # Correct inverse CDF of Lap(b) (as in the ACL 2022 reference code): for
        # v = u − 1/2, −b·sgn(v)·ln(1 − 2|v|).
        v = np.asarray(u, dtype=np.float64) - 0.5
        noise = np.abs(v)
        noise *= -2.0
        np.log1p(noise, out=noise)
        noise *= np.sign(v)
        noise *= -self.scale
        return noise

    def log_prob(self, x: Any, outputs: np.ndarray) -> np.ndarray:
        return laplace_log_density(self.validate_input(x), outputs, self.scale)

    @property
    def true_sensitivity(self) -> float:
        """The true L1 sensitivity over the box: ``n·(HIGH − LOW)``."""
        low, high = self.domain
        return self.dim * (high - low)

    def corner_truth(self, method: str, notes: tuple[str, ...] = ()) -> AnalyticTruth:
        """Exact ε over the box: the loss of the opposite corners, ``Δ₁/b`` (Laplace's ratio).

        ``method`` and ``notes`` say how the subclass's calibration comes out.
        """
        x, x_prime = box_corners(self.dim, self.domain)
        loss = self.privacy_loss(x, x_prime)
        return AnalyticTruth(
            true_epsilon=loss,
            method=method,
            true_sensitivity=self.true_sensitivity,
            sensitivity_norm="L1",
            witness=Witness.analytic(x, x_prime, loss, "opposite corners of the input box"),
            notes=notes,
        )


@register
@dataclass(frozen=True)
class LaplaceMechanism(AdditiveLaplace):
    """``x + Lap(Δ₁/ε)^n`` on ``[low, high]^n``."""

    name: ClassVar[str] = "laplace"
    reference: ClassVar[str] = (
        "Dwork, McSherry, Nissim & Smith, TCC 2006 (Laplace mechanism); "
        "Habernal, ACL 2022, §4 'vanilla Laplace' (sensitivity n on [0,1]^n)"
    )
    summary: ClassVar[str] = "Laplace noise with scale Δ₁/ε (correct sampler)"

    dim: int = parameter(1, doc="number of coordinates n")
    domain: tuple[float, float] = parameter(
        (0.0, 1.0), doc="input range [LOW, HIGH] per coordinate"
    )
    sensitivity: float | None = parameter(
        None, doc="L1 sensitivity Δ₁ the noise is calibrated to (default n·(HIGH−LOW))"
    )

    def __post_init__(self) -> None:
        check_box_params(self.epsilon, self.dim, self.domain, finite=False)
        if self.sensitivity is not None:
            check_positive("sensitivity", self.sensitivity)

    @property
    def assumed_sensitivity(self) -> float:
        """The L1 sensitivity the noise scale is calibrated to."""
        if self.sensitivity is not None:
            return float(self.sensitivity)
        return self.dim * (self.domain[1] - self.domain[0])

    def privacy_loss(self, x: Any, x_prime: Any) -> float:
        return laplace_pair_loss(self.validate_input(x), self.validate_input(x_prime), self.scale)

    def truth(self) -> AnalyticTruth:
        return self.corner_truth("closed form: ε = Δ₁/b with Δ₁ = n·(HIGH−LOW) over the box")
