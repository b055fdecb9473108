"""ADePT as published, its two remedies, and the ACL 2022 variant.

ADePT (Krishna, Gupta & Dupuy, EACL 2021) privatises a latent vector ``r`` as
``f(r) + η`` with ``f(r) = r·min(1, C/‖r‖₂)`` (their Eq. 9; Habernal, EMNLP
2021, Eq. 13) and ``η_i ~ Lap(2C/ε)`` i.i.d. (their Eq. 10; Habernal Eq. 14),
claiming ε-DP on the grounds that the L1 sensitivity of ``f`` is ``2C``
(their Theorem 3.2).  It is ``2C√n`` (Habernal 2021, Theorem 5.1), so the true
ε is ``√n·ε``.

Registered variants:

* ``adept``: as published (known flawed);
* ``adept-l1``: remedy 1 of Habernal 2021, Sec. 7 — clip in L1, keep ``b = 2C/ε``
  (L1 sensitivity then really is ``2C``);
* ``adept-fixed-scale``: remedy 2 — keep L2 clipping, use the true sensitivity,
  ``b = 2C√n/ε``;
* ``adept-acl22``: the "ADePT" of the ACL 2022 sanity check (Habernal, ACL 2022,
  §4): data in ``[0, 1]^n``, no clipping, sensitivity fixed to 1 (ADePT's ``2C``
  with ``C = 1/2``) whatever ``n``, so ``b = 1/ε`` while the true L1
  sensitivity of the box is ``n``: true ε = ``n·ε`` (known flawed).

Input domain.  ADePT clips arbitrary real vectors, so the clipping variants
default to ``domain = (-inf, inf)`` (all of ``ℝⁿ``).  A finite ``--domain LOW,HIGH``
box may be given (auditors that need finite inputs); :meth:`truth` is then exact
only when the box contains the worst-case pair ``±v*`` of
:mod:`dpaudit.analysis.sensitivity` (it returns None otherwise — the maximum over
a box that cuts the ball is not computed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpaudit.analysis.adept import box_contains, clipped_l1_sensitivity, paper_counterexample_pair
from dpaudit.analysis.laplace import laplace_log_density, laplace_pair_loss
from dpaudit.analysis.sensitivity import clip_to_norm, norm_label
from dpaudit.claims import AnalyticTruth
from dpaudit.mechanisms.base import parameter
from dpaudit.mechanisms.domains import (
    BoxMechanism,
    check_box_domain,
    check_box_params,
)
from dpaudit.mechanisms.laplace import AdditiveLaplace, sample_laplace
from dpaudit.mechanisms.output_grid import round_to_grid
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_epsilon, check_int, check_positive
from dpaudit.witness import Witness

_KRISHNA = "Krishna et al., EACL 2021, Eq. 9-10"
_HABERNAL21 = "Habernal, EMNLP 2021"


@dataclass(frozen=True)
class ClippedLaplace(BoxMechanism, abstract=True):
    """``f(r) + Lap(b)^n`` with ``f`` the ``L_p`` clipping to ``C``; subclasses fix p and b."""

    #: Norm of the clipping step.
    clip_norm: ClassVar[float] = 2.0
    sensitivity_norm: ClassVar[str | None] = "L1"

    dim: int = parameter(2, doc="latent dimension n")
    bound: float = parameter(1.0, doc="clipping norm C")
    domain: tuple[float, float] = parameter(
        (-math.inf, math.inf), doc="input range [LOW, HIGH] per coordinate (default all reals)"
    )

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_int("dim", self.dim, minimum=1)
        check_positive("bound", self.bound)
        check_box_domain(self.domain, finite=False)

    # -------------------------------------------------------------- calibration
    @property
    def assumed_sensitivity(self) -> float:
        """The L1 sensitivity the noise is calibrated to."""
        return 2.0 * self.bound

    @property
    def scale(self) -> float:
        """Laplace scale ``b`` = assumed L1 sensitivity / ε."""
        return self.assumed_sensitivity / self.epsilon

    def clip(self, r: Any) -> np.ndarray:
        """``f(r) = r·min(1, C/‖r‖_p)`` along the last axis."""
        return clip_to_norm(r, self.bound, self.clip_norm)

    # ------------------------------------------------------------------ contract
    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        out = sample_laplace((n, self.dim), self.scale, rng)
        out += self.clip(x)
        return round_to_grid(out, self.scale)  # the float fix of mechanisms/output_grid.py

    def log_prob(self, x: Any, outputs: np.ndarray) -> np.ndarray:
        return laplace_log_density(self.clip(self.validate_input(x)), outputs, self.scale)

    def privacy_loss(self, x: Any, x_prime: Any) -> float:
        """Exact ``‖f(x) − f(x')‖₁ / b`` (Habernal 2021, Eq. 15)."""
        a, b = self.validate_pair(x, x_prime)
        return laplace_pair_loss(self.clip(a), self.clip(b), self.scale)

    def truth(self) -> AnalyticTruth | None:
        """``Δ₁/b`` with the exact L1 sensitivity of the clipping (Habernal 2021, Thm. 5.1)."""
        sens = clipped_l1_sensitivity(self.clip_norm, self.dim, self.bound)
        low, high = self.domain
        if not box_contains(low, high, np.array([sens.r1, sens.r2])):
            return None
        loss = self.privacy_loss(sens.r1, sens.r2)
        notes = [
            f"claimed L1 sensitivity {self.assumed_sensitivity:g}, true "
            f"{sens.sensitivity:g} ({norm_label(self.clip_norm)} clipping to C = {self.bound:g}"
            f" in n = {self.dim} dimensions: {sens.formula})",
            f"Laplace scale b = {self.scale:g}",
        ]
        return AnalyticTruth(
            true_epsilon=loss,
            method="closed form: ε = Δ₁/b with the exact L1 sensitivity of the clipping",
            true_sensitivity=sens.sensitivity,
            sensitivity_norm="L1",
            witness=Witness.analytic(
                sens.r1,
                sens.r2,
                loss,
                "±v* maximising the L1 distance of two clipped vectors; loss ‖f(r1)−f(r2)‖₁/b",
            ),
            notes=tuple(notes),
        )

    def analysis_extras(self) -> dict[str, Any]:
        """The paper's n = 2 counterexample pair (Habernal 2021, Sec. 4) with its exact loss."""
        if self.dim < 2:
            return {}
        r1, r2 = paper_counterexample_pair(self.dim, self.bound)
        low, high = self.domain
        if not box_contains(low, high, np.array([r1, r2])):
            return {}
        loss = self.privacy_loss(r1, r2)
        distance = float(np.abs(self.clip(r1) - self.clip(r2)).sum())
        return {
            "paper_counterexample": {
                "pair": Witness.analytic(
                    r1,
                    r2,
                    loss,
                    "Habernal 2021, Sec. 4: r = ±(2C/3, 2C/3); L1 distance of the clipped "
                    "vectors divided by b",
                ),
                "l1_distance": distance,
                "loss_over_epsilon": loss / self.epsilon,
            }
        }


@register
@dataclass(frozen=True)
class ADePT(ClippedLaplace):
    """ADePT as published: L2 clipping to C, Laplace scale 2C/ε (not ε-DP for n > 1)."""

    name: ClassVar[str] = "adept"
    reference: ClassVar[str] = (
        f"{_KRISHNA} (L2 clip, Lap(2C/ε)); {_HABERNAL21}, Sec. 4 + Thm. 5.1 (true Δ₁ = 2C√n)"
    )
    summary: ClassVar[str] = "ADePT as published: L2 clip to C + Laplace(2C/ε)"
    known_flawed: ClassVar[bool] = True


@register
@dataclass(frozen=True)
class ADePTL1(ClippedLaplace):
    """Remedy 1: clip in L1 (sensitivity then really 2C), Laplace scale 2C/ε."""

    name: ClassVar[str] = "adept-l1"
    reference: ClassVar[str] = f"{_HABERNAL21}, Sec. 7 (remedy: L1 clipping in Eq. 9)"
    summary: ClassVar[str] = "ADePT remedy: L1 clip to C + Laplace(2C/ε) (correct)"
    clip_norm: ClassVar[float] = 1.0


@register
@dataclass(frozen=True)
class ADePTFixedScale(ClippedLaplace):
    """Remedy 2: L2 clipping with the true sensitivity, Laplace scale 2C√n/ε."""

    name: ClassVar[str] = "adept-fixed-scale"
    reference: ClassVar[str] = f"{_HABERNAL21}, Sec. 7 + Thm. 5.1 (remedy: b = 2C√n/ε)"
    summary: ClassVar[str] = "ADePT remedy: L2 clip to C + Laplace(2C√n/ε) (correct)"

    @property
    def assumed_sensitivity(self) -> float:
        return 2.0 * self.bound * math.sqrt(self.dim)


@register
@dataclass(frozen=True)
class ADePTACL22(AdditiveLaplace):
    """The ACL 2022 sanity-check "ADePT": no clipping, Laplace scale 1/ε on ``[0, 1]^n``."""

    name: ClassVar[str] = "adept-acl22"
    reference: ClassVar[str] = (
        f"Habernal, ACL 2022, §4 ('ADePT': sensitivity fixed to 2C = 1, no clipping); {_KRISHNA}"
    )
    summary: ClassVar[str] = "ACL 2022 variant: x + Laplace(1/ε), sensitivity fixed to 1"
    known_flawed: ClassVar[bool] = True

    dim: int = parameter(2, doc="number of coordinates n")
    domain: tuple[float, float] = parameter(
        (0.0, 1.0), doc="input range [LOW, HIGH] per coordinate"
    )

    def __post_init__(self) -> None:
        check_box_params(self.epsilon, self.dim, self.domain)

    #: The sensitivity the ACL 2022 code assumed for every n.
    assumed_sensitivity: ClassVar[float] = 1.0

    @property
    def scale(self) -> float:
        """Laplace scale ``b = 1/ε``."""
        return self.assumed_sensitivity / self.epsilon

    def privacy_loss(self, x: Any, x_prime: Any) -> float:
        a, b = self.validate_pair(x, x_prime)
        return laplace_pair_loss(a, b, self.scale)

    def truth(self) -> AnalyticTruth:
        true_sens = self.true_sensitivity
        return self.corner_truth(
            "closed form: ε = Δ₁/b with Δ₁ = n·(HIGH−LOW) over the box, b = 1/ε",
            notes=(
                f"assumed L1 sensitivity 1 for every n; true {true_sens:g}, "
                f"so the true ε is {true_sens:g}·ε",
            ),
        )
