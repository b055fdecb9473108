"""DPText's Laplace sampler, reproduced with its defect (Habernal, ACL 2022, §3.3, Eq. 8–9).

DPText (Beigi et al. 2019a/b; Alnasser et al. 2021) adds to each coordinate
the noise ``−b·sgn(u)·ln(1 − 2|u|)`` with ``u ~ U(0, 1)`` and ``b = Δ₁/ε``
(here ``Δ₁ = n·(HIGH − LOW)``, i.e. ``b = n/ε`` on ``[0, 1]^n`` as in the ACL 2022
sanity check).  For ``u > 1/2`` the logarithm's argument is negative: numpy
returns NaN.  What happens to the NaNs is ``nan_policy``:

* ``zero`` (default, what the ACL 2022 reference code did): NaN → 0, so the
  noise is 0 with probability 1/2 and ``b·Exp(1)`` otherwise;
* ``discard`` (the paper's other reading): the NaN coordinates are redrawn until
  valid, so the noise is ``b·Exp(1)``;
* ``keep``: the NaNs stay in the output (:attr:`allows_nan_output` is True).

In every case the noise is never negative, so the true ε is infinite
(:mod:`dpaudit.analysis.dptext`).  The correct sampler is ``laplace``.

Literal corner case: ``u = 1/2`` exactly (probability ``2^−53`` per draw with
numpy's generator) gives ``ln 0`` and noise ``+inf``, as the formula does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpaudit.analysis.dptext import NAN_POLICIES, support_witness
from dpaudit.claims import AnalyticTruth
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import parameter
from dpaudit.mechanisms.domains import BoxMechanism, box_corners, check_box_params
from dpaudit.mechanisms.output_grid import round_to_grid
from dpaudit.mechanisms.registry import register
from dpaudit.witness import Witness


def dptext_raw_noise(u: np.ndarray, scale: float) -> np.ndarray:
    """The literal transform ``−b·sgn(u)·ln(1 − 2|u|)``; NaN where ``u > 1/2``."""
    u = np.asarray(u, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return -scale * np.sign(u) * np.log(1.0 - 2.0 * np.abs(u))


@register
@dataclass(frozen=True)
class DPTextMechanism(BoxMechanism):
    """``x + N`` with DPText's non-negative "Laplace" noise; claims ε-DP, true ε = ∞."""

    name: ClassVar[str] = "dptext"
    reference: ClassVar[str] = (
        "Beigi et al. 2019 (DPText); Habernal, ACL 2022, §3.3 Eq. 8-9 and Thm. 3.2 "
        "(u ~ U(0,1), −b·sgn(u)·ln(1−2|u|))"
    )
    summary: ClassVar[str] = "DPText's broken Laplace sampler (noise never negative)"
    known_flawed: ClassVar[bool] = True
    sensitivity_norm: ClassVar[str | None] = "L1"

    dim: int = parameter(1, doc="number of coordinates n")
    domain: tuple[float, float] = parameter(
        (0.0, 1.0), doc="input range [LOW, HIGH] per coordinate"
    )
    nan_policy: str = parameter(
        "zero",
        doc="what happens to NaN noise: zero (reference code), discard (redraw), keep",
        choices=NAN_POLICIES,
    )

    def __post_init__(self) -> None:
        check_box_params(self.epsilon, self.dim, self.domain)
        if self.nan_policy not in NAN_POLICIES:
            raise InvalidArgumentError(
                "nan_policy", self.nan_policy, f"one of {', '.join(NAN_POLICIES)}"
            )

    @property
    def allows_nan_output(self) -> bool:  # type: ignore[override]
        """True for ``nan_policy=keep``: outputs may contain NaN by design."""
        return self.nan_policy == "keep"

    @property
    def assumed_sensitivity(self) -> float:
        """The L1 sensitivity ``n·(HIGH − LOW)`` the scale is calibrated to."""
        return self.dim * (self.domain[1] - self.domain[0])

    @property
    def scale(self) -> float:
        """``b = Δ₁/ε``."""
        return self.assumed_sensitivity / self.epsilon

    def round_output(self, out: np.ndarray) -> np.ndarray:
        # Float64 bits that leak no more than the value (mechanisms/output_grid.py).
        return round_to_grid(out, self.scale)

    def noise_from_uniform(self, u: np.ndarray) -> np.ndarray:
        """The sampler's own transform, NaN policy included.

        ``zero``/``keep``: the literal formula on ``u`` (NaN → 0, or NaN kept).
        ``discard``: redrawing until ``u ≤ 1/2`` makes the accepted ``u`` uniform on
        ``[0, 1/2)``; the literal formula applied to ``u/2`` has exactly that law.
        """
        u = np.asarray(u, dtype=np.float64)
        if self.nan_policy == "discard":
            return dptext_raw_noise(0.5 * u, self.scale)
        noise = dptext_raw_noise(u, self.scale)
        if self.nan_policy == "zero":
            noise[np.isnan(noise)] = 0.0
        return noise

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        u = rng.random((n, self.dim))
        if self.nan_policy == "discard":
            noise = dptext_raw_noise(u, self.scale)
            bad = np.isnan(noise)
            while bad.any():  # about log2(n·dim) rounds, each vectorised
                noise[bad] = dptext_raw_noise(rng.random(int(bad.sum())), self.scale)
                bad = np.isnan(noise)
        else:
            noise = self.noise_from_uniform(u)
        noise += x
        return self.round_output(noise)

    def privacy_loss(self, x: Any, x_prime: Any) -> float:
        """``inf`` for distinct inputs (support argument), 0 for equal ones."""
        a, b = self.validate_pair(x, x_prime)
        return 0.0 if np.array_equal(a, b) else math.inf

    def truth(self) -> AnalyticTruth:
        x, x_prime = box_corners(self.dim, self.domain)
        sep = support_witness(x, x_prime, self.scale, self.nan_policy)
        assert sep is not None  # LOW < HIGH
        return AnalyticTruth(
            true_epsilon=math.inf,
            method="support argument (Habernal 2022, Thm. 3.2): the noise is never negative",
            true_sensitivity=self.assumed_sensitivity,
            sensitivity_norm="L1",
            witness=Witness.analytic(x, x_prime, math.inf, sep.describe()),
            notes=(
                "outputs under x lie in x + [0, ∞)^n (or NaN), so any output with a "
                "coordinate below x'_i is reachable from x but not from x'",
                f"noise scale b = {self.scale:g}, nan_policy = {self.nan_policy}",
            ),
        )
