"""The Gaussian mechanism, with classic and analytic calibration.

``M(x) = x + N(0, σ² I)`` on ``[low, high]^n`` with every pair of inputs
neighbouring (local DP), so the default L2 sensitivity is
``Δ₂ = √n · (high − low)``.

* ``calibration=classic``: ``σ = Δ₂ · sqrt(2 ln(1.25/δ)) / ε`` (Dwork & Roth,
  *The Algorithmic Foundations of DP*, 2014, Theorem A.1).  The theorem assumes
  ``ε < 1``; for ``ε ≥ 1`` the formula is **unproven** and can be false (e.g.
  ``ε = 10, δ = 1e−5`` gives an exact ``δ(10) ≈ 2.3e−5``).  :attr:`warning`
  says so and :meth:`truth` shows the exact δ.
* ``calibration=analytic`` (default): the smallest σ whose exact privacy profile
  satisfies ``δ(ε) ≤ δ`` (Balle & Wang, ICML 2018, Theorem 8 and Algorithm 1).

The claim is (ε, δ)-DP.  The *pure* privacy loss is unbounded, so
:meth:`privacy_loss` is ``inf`` for any two different inputs; the exact
(ε, δ) trade-off of a pair is :meth:`delta_at`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from dpaudit.analysis.gaussian import (
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_delta,
    gaussian_epsilon_for_delta,
    gaussian_log_density,
    gaussian_privacy_profile,
)
from dpaudit.claims import AnalyticTruth, PrivacyClaim
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import Mechanism, parameter
from dpaudit.mechanisms.domains import box_claim, box_corners, check_box_domain
from dpaudit.mechanisms.output_grid import round_to_grid
from dpaudit.mechanisms.registry import register
from dpaudit.random import open_uniform
from dpaudit.validation import check_delta, check_epsilon, check_int, check_positive
from dpaudit.witness import Witness

CALIBRATIONS = ("analytic", "classic")


@register
@dataclass(frozen=True)
class GaussianMechanism(Mechanism):
    """``x + N(0, σ²)^n`` on ``[low, high]^n``, claiming (ε, δ)-DP."""

    name: ClassVar[str] = "gaussian"
    reference: ClassVar[str] = (
        "Dwork & Roth 2014, Thm. A.1 (classic σ); "
        "Balle & Wang, ICML 2018, Thm. 8 / Alg. 1 (analytic σ, exact δ(ε))"
    )
    summary: ClassVar[str] = "Gaussian noise, classic or analytic calibration ((ε,δ)-DP)"

    dim: int = parameter(1, doc="number of coordinates n")
    domain: tuple[float, float] = parameter(
        (0.0, 1.0), doc="input range [LOW, HIGH] per coordinate"
    )
    delta: float = parameter(1e-5, doc="claimed δ, in (0, 1)")
    sensitivity: float | None = parameter(
        None, doc="L2 sensitivity Δ₂ the noise is calibrated to (default √n·(HIGH−LOW))"
    )
    calibration: str = parameter(
        "analytic",
        doc="analytic (Balle & Wang 2018) or classic (Dwork & Roth, ε < 1 only)",
        choices=CALIBRATIONS,
    )

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_int("dim", self.dim, minimum=1)
        check_delta(self.delta)
        if self.delta <= 0.0:
            raise InvalidArgumentError("delta", self.delta, "a number in (0, 1) for Gaussian")
        check_box_domain(self.domain)
        if self.sensitivity is not None:
            check_positive("sensitivity", self.sensitivity)
        if self.calibration not in CALIBRATIONS:
            raise InvalidArgumentError(
                "calibration", self.calibration, f"one of {', '.join(CALIBRATIONS)}"
            )

    # ------------------------------------------------------------ calibration
    @property
    def assumed_sensitivity(self) -> float:
        """The L2 sensitivity σ is calibrated to."""
        if self.sensitivity is not None:
            return float(self.sensitivity)
        return math.sqrt(self.dim) * (self.domain[1] - self.domain[0])

    @property
    def true_sensitivity(self) -> float:
        """The largest L2 distance of two inputs of the box: ``√n · (HIGH − LOW)``."""
        return math.sqrt(self.dim) * (self.domain[1] - self.domain[0])

    @cached_property
    def sigma(self) -> float:
        """Noise standard deviation σ."""
        if self.calibration == "classic":
            return classic_gaussian_sigma(self.epsilon, self.delta, self.assumed_sensitivity)
        return analytic_gaussian_sigma(self.epsilon, self.delta, self.assumed_sensitivity)

    @property
    def warning(self) -> str | None:
        """A caveat about the calibration, or None."""
        if self.calibration == "classic" and self.epsilon >= 1.0:
            return (
                "classic calibration σ = Δ₂·sqrt(2 ln(1.25/δ))/ε is proven only for ε < 1 "
                "(Dwork & Roth 2014, Thm. A.1); at this ε it is unproven"
            )
        return None

    # --------------------------------------------------------------- contract
    @property
    def claim(self) -> PrivacyClaim:
        return box_claim(
            self.epsilon,
            self.dim,
            self.domain,
            delta=self.delta,
            sensitivity=self.assumed_sensitivity,
            sensitivity_norm="L2",
        )

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.dim,)

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        # The sampler *is* the declared transform (the fused sanity-check path runs
        # the same code), applied to uniforms strictly inside (0, 1).
        out = self.noise_from_uniform(open_uniform(rng, (n, self.dim)))
        out += x
        return self.round_output(out)

    def round_output(self, out: np.ndarray) -> np.ndarray:
        # Float64 bits that leak no more than the value (mechanisms/output_grid.py).
        return round_to_grid(out, self.sigma)

    def noise_from_uniform(self, u: np.ndarray) -> np.ndarray:
        from scipy import special  # lazy: keeps `import dpaudit` light

        # Inverse CDF of N(0, σ²); the sampler runs this same transform.
        out = special.ndtri(np.asarray(u, dtype=np.float64))
        out *= self.sigma
        return out

    def log_prob(self, x: Any, outputs: np.ndarray) -> np.ndarray:
        return gaussian_log_density(self.validate_input(x), outputs, self.sigma)

    def privacy_loss(self, x: Any, x_prime: Any) -> float:
        """Pure loss: ``inf`` for distinct inputs (Gaussian log-ratios are unbounded)."""
        a, b = self.validate_pair(x, x_prime)
        return 0.0 if np.array_equal(a, b) else math.inf

    def delta_at(self, epsilon: float, x: Any, x_prime: Any) -> float:
        """Exact δ(ε) of the pair (Balle & Wang 2018, Thm. 8)."""
        a, b = self.validate_pair(x, x_prime)
        return gaussian_delta(epsilon, self.sigma, float(np.linalg.norm(a - b)))

    def privacy_profile(self, epsilons: Any, x: Any, x_prime: Any) -> np.ndarray:
        """The pair's exact (ε, δ) curve: ``δ(ε)`` for each ε (Balle & Wang 2018, Thm. 8)."""
        a, b = self.validate_pair(x, x_prime)
        return gaussian_privacy_profile(epsilons, self.sigma, float(np.linalg.norm(a - b)))

    def truth(self) -> AnalyticTruth:
        """Exact δ at the claimed ε and exact ε at the claimed δ, for the worst pair.

        ``true_epsilon`` is the smallest ε' with ``δ(ε') ≤ δ`` over the worst pair
        (opposite corners of the box), so ``true_epsilon > ε`` exactly when the
        exact ``true_delta = δ(ε)`` exceeds the claimed δ.
        """
        x, x_prime = box_corners(self.dim, self.domain)
        sigma = self.sigma
        dist = self.true_sensitivity
        true_delta = gaussian_delta(self.epsilon, sigma, dist)
        true_eps = gaussian_epsilon_for_delta(self.delta, sigma, dist)
        notes = [
            "pure ε is infinite: the log-density ratio of two Gaussians is unbounded; "
            "the claim is (ε, δ)-DP, checked as exact δ(ε) ≤ δ",
            f"σ = {sigma:.6g} ({self.calibration} calibration, Δ₂ = {self.assumed_sensitivity:g})",
            f"exact δ at the claimed ε = {self.epsilon:g}: {true_delta:.6g} "
            f"(claimed {self.delta:g})",
        ]
        if self.warning:
            notes.append(self.warning)
        return AnalyticTruth(
            true_epsilon=true_eps,
            true_delta=true_delta,
            method="closed form: exact Gaussian privacy profile (Balle & Wang 2018, Thm. 8)",
            true_sensitivity=dist,
            sensitivity_norm="L2",
            witness=Witness.analytic(
                x,
                x_prime,
                true_eps,
                f"opposite corners (L2 distance {dist:g}); loss is the exact ε at δ = "
                f"{self.delta:g}",
            ),
            notes=tuple(notes),
        )
