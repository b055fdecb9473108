"""The two input domains most mechanisms share: boxes ``[LOW, HIGH]^n`` and categories ``{0..k−1}``.

Vector mechanisms (Laplace, Gaussian, ADePT, DPText, the ACL 2022 baselines,
OME, the library adapters) take an input in a box ``[LOW, HIGH]^n`` in which
every pair of inputs is neighbouring (local DP, as in Habernal, ACL 2022, §4);
categorical ones (randomised response, GRR, pure-ldp) take one category of
``{0..k−1}`` (Wang et al., USENIX Security 2017, §4).  Each mechanism still
declares its own ``dim``/``domain``/``k`` parameters (their defaults and docs
differ); this module holds the validation, the claim and the corner inputs
they have in common, so every mechanism rejects a bad domain with the same
message.  :class:`BoxMechanism` is the base of the mechanisms whose claim is
exactly "pure ε-DP on the box" and whose output has one coordinate per input
coordinate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from dpaudit.claims import Definition, InputDomain, PrivacyClaim
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.validation import check_epsilon, check_int


def check_box_domain(domain: Any, *, finite: bool = True) -> tuple[float, float]:
    """``domain`` as ``(LOW, HIGH)`` floats with ``LOW < HIGH``, or raise naming ``domain``.

    ``finite=False`` admits infinite ends (ADePT clips arbitrary real vectors);
    NaN is rejected either way.
    """
    low, high = (float(v) for v in domain)
    if finite and not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise InvalidArgumentError("domain", domain, "LOW,HIGH finite with LOW < HIGH")
    if not low < high:  # also False when an end is NaN
        raise InvalidArgumentError("domain", domain, "LOW,HIGH with LOW < HIGH")
    return low, high


def check_box_params(
    epsilon: float, dim: int, domain: Any, *, finite: bool = True
) -> tuple[float, float]:
    """The checks of a box mechanism, in order: ε, ``dim`` an integer >= 1, the box."""
    check_epsilon(epsilon)
    check_int("dim", dim, minimum=1)
    return check_box_domain(domain, finite=finite)


def box_claim(
    epsilon: float,
    dim: int,
    domain: tuple[float, float],
    *,
    delta: float = 0.0,
    sensitivity: float | None = None,
    sensitivity_norm: str | None = None,
) -> PrivacyClaim:
    """The claim "(ε, δ)-DP on ``[LOW, HIGH]^dim``, any two inputs neighbouring".

    Pure ε-DP when ``delta`` is 0, approximate (ε, δ)-DP otherwise.
    ``sensitivity``/``sensitivity_norm`` record what the calibration assumes.
    """
    return PrivacyClaim(
        definition=Definition.APPROXIMATE if delta > 0 else Definition.PURE,
        epsilon=epsilon,
        delta=delta,
        domain=InputDomain((dim,), *domain),
        sensitivity=sensitivity,
        sensitivity_norm=sensitivity_norm,
    )


def box_corners(dim: int, domain: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """The opposite corners ``LOW^n`` and ``HIGH^n`` (the worst pair of most box mechanisms)."""
    low, high = domain
    return np.full(dim, low), np.full(dim, high)


@dataclass(frozen=True)
class BoxMechanism(Mechanism, abstract=True):
    """A mechanism on ``[LOW, HIGH]^dim`` with outputs of shape ``(dim,)``, claiming pure ε-DP.

    Subclasses declare the ``dim`` and ``domain`` parameters.  When the noise is
    calibrated to a sensitivity, they name its norm in :attr:`sensitivity_norm`
    and define ``assumed_sensitivity``; the claim then records it.
    """

    if TYPE_CHECKING:
        dim: int
        domain: tuple[float, float]
        assumed_sensitivity: float

    #: Norm of ``assumed_sensitivity`` (None: the claim states no sensitivity).
    sensitivity_norm: ClassVar[str | None] = None

    @property
    def claim(self) -> PrivacyClaim:
        if self.sensitivity_norm is None:
            return box_claim(self.epsilon, self.dim, self.domain)
        return box_claim(
            self.epsilon,
            self.dim,
            self.domain,
            sensitivity=self.assumed_sensitivity,
            sensitivity_norm=self.sensitivity_norm,
        )

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.dim,)


def check_category_params(epsilon: float, k: int) -> None:
    """The checks of a categorical mechanism: ε, then ``k`` an integer >= 2."""
    check_epsilon(epsilon)
    check_int("k", k, minimum=2)


def category_claim(epsilon: float, k: int) -> PrivacyClaim:
    """The claim "ε-DP on one category of ``{0..k−1}``, any two categories neighbouring"."""
    return PrivacyClaim(
        definition=Definition.PURE,
        epsilon=epsilon,
        domain=InputDomain((1,), 0, k - 1, integer=True),
    )
