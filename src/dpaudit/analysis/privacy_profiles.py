"""Claims about a whole family of guarantees, as immutable documented values.

A Gaussian-noise mechanism does not claim one (ε, δ): it claims a curve.  These
values say which, in the spirit of dp_accounting's ``DpEvent``: they can be
printed, compared, serialised (``to_dict``) and handed to an auditor
(:mod:`dpaudit.auditors.profile`).  Every claim answers one question,
``profile`` — the privacy profile ``δ(ε)`` it *implies*, i.e. the largest
hockey-stick divergence ``sup_S Pr[M(x) ∈ S] − e^ε Pr[M(x') ∈ S]`` it permits
between neighbours — through the tightest sound conversion known
(:mod:`dpaudit.analysis.privacy_conversions`).  A certified
``δ_lcb(ε) > claim.profile(ε)`` therefore refutes the claim itself, whatever its
definition.

=====================  ==========================================================
:class:`PureDP`         ε-DP (Dwork, McSherry, Nissim & Smith, TCC 2006)
:class:`ApproxDP`       (ε, δ)-DP (Dwork, Kenthapadi et al., Eurocrypt 2006)
:class:`PrivacyProfile` a whole curve δ(ε), e.g. a mechanism's own accountant
                        (Balle, Barthe & Gaboardi, NeurIPS 2018)
:class:`GaussianDP`     μ-GDP (Dong, Roth & Su, JRSS-B 2022, Def. 2.7)
:class:`RenyiDP`        (α, ε(α))-RDP at a set of orders (Mironov, CSF 2017, Def. 4)
:class:`ZeroConcentratedDP` ρ-zCDP: D_α ≤ ρα for all α > 1 (Bun & Steinke, TCC 2016,
                        Def. 1.1)
=====================  ==========================================================

These live in ``analysis/`` rather than among the basic modules because their
conversions need scipy and reuse the Gaussian maths of
:mod:`dpaudit.analysis.gaussian`, which a basic module may not import.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from dpaudit.analysis.gaussian import analytic_gaussian_sigma
from dpaudit.analysis.privacy_conversions import (
    approx_dp_profile,
    check_epsilon_grid,
    gaussian_tradeoff,
    gdp_profile,
    rdp_delta_cks,
    rdp_delta_mironov,
    zcdp_delta_bun_steinke,
    zcdp_delta_cks,
)
from dpaudit.errors import InvalidArgumentError
from dpaudit.validation import check_delta, check_epsilon, check_positive

#: Conversions from Rényi guarantees to (ε, δ): the tight default and the classic one.
RDP_CONVERSIONS = ("cks", "mironov")
ZCDP_CONVERSIONS = ("cks", "bun-steinke")


@dataclass(frozen=True)
class PureDP:
    """ε-DP: ``Pr[M(x) ∈ S] ≤ e^ε Pr[M(x') ∈ S]`` for all neighbours and sets."""

    epsilon: float
    kind: ClassVar[str] = "pure"
    reference: ClassVar[str] = "Dwork, McSherry, Nissim & Smith, TCC 2006"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)

    def profile(self, epsilons: Any) -> np.ndarray:
        """``(e^ε − e^{ε'})₊/(1 + e^ε)`` (Kairouz, Oh & Viswanath, ICML 2015, Thm. 2.1)."""
        return approx_dp_profile(epsilons, self.epsilon, 0.0)

    def describe(self) -> str:
        """One line, e.g. ``1-DP``."""
        return f"{self.epsilon:g}-DP"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"kind": self.kind, "epsilon": self.epsilon}


@dataclass(frozen=True)
class ApproxDP:
    """(ε, δ)-DP: ``Pr[M(x) ∈ S] ≤ e^ε Pr[M(x') ∈ S] + δ`` for all neighbours and sets."""

    epsilon: float
    delta: float
    kind: ClassVar[str] = "approximate"
    reference: ClassVar[str] = "Dwork, Kenthapadi, McSherry, Mironov & Naor, Eurocrypt 2006"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_delta(self.delta)

    def profile(self, epsilons: Any) -> np.ndarray:
        """``δ + (1 − δ)(e^ε − e^{ε'})₊/(1 + e^ε)``: the profile of the dominating pair."""
        return approx_dp_profile(epsilons, self.epsilon, self.delta)

    def describe(self) -> str:
        """One line, e.g. ``(1, 1e-05)-DP``."""
        return f"({self.epsilon:g}, {self.delta:g})-DP"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"kind": self.kind, "epsilon": self.epsilon, "delta": self.delta}


@dataclass(frozen=True)
class PrivacyProfile:
    """A whole privacy profile: (ε, ``function(ε)``)-DP for every ``ε ≥ 0``.

    ``function`` maps an array of ε to an array of δ (a mechanism's own
    accountant, e.g. ``lambda e: mech.privacy_profile(e, x, x')``, or
    dp_accounting's ``get_delta`` wrapped elementwise); a scalar-only function
    is called once per ε.  ``description`` says where the curve comes from — it
    is what the report prints, since a function cannot be serialised.
    """

    function: Callable[[np.ndarray], Any] = field(compare=False)
    description: str
    kind: ClassVar[str] = "profile"
    reference: ClassVar[str] = "Balle, Barthe & Gaboardi, NeurIPS 2018 (privacy profiles)"

    def __post_init__(self) -> None:
        if not callable(self.function):
            raise InvalidArgumentError("function", self.function, "a callable ε ↦ δ(ε)")
        if not self.description:
            raise InvalidArgumentError("description", self.description, "a non-empty text")

    def profile(self, epsilons: Any) -> np.ndarray:
        """The claimed δ at each ε, checked to be probabilities."""
        eps = check_epsilon_grid(epsilons)
        try:
            out = np.asarray(self.function(eps), dtype=np.float64)
        except (TypeError, ValueError):
            out = None
        if out is None or out.shape != eps.shape:
            out = np.asarray([float(self.function(float(e))) for e in eps.ravel()])
            out = out.reshape(eps.shape)
        if np.any(~(out >= 0)) or np.any(out > 1):
            raise InvalidArgumentError("function", self.description, "δ(ε) values in [0, 1]")
        return out

    def describe(self) -> str:
        """The description given."""
        return f"privacy profile δ(ε): {self.description}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the description; the function itself cannot be stored)."""
        return {"kind": self.kind, "description": self.description}


@dataclass(frozen=True)
class GaussianDP:
    """μ-GDP: no test of ``M(x)`` against ``M(x')`` beats ``T_μ`` (DRS 2022, Def. 2.7).

    Equivalent to the profile :func:`gdp_profile` (DRS 2022, Cor. 2.13); the
    Gaussian mechanism ``x + N(0, σ²)`` of L2 sensitivity Δ is exactly
    ``Δ/σ``-GDP (DRS Thm. 2.7), see :meth:`from_sigma`.
    """

    mu: float
    kind: ClassVar[str] = "gdp"
    reference: ClassVar[str] = "Dong, Roth & Su, JRSS-B 2022, Def. 2.7 and Cor. 2.13"

    def __post_init__(self) -> None:
        check_positive("mu", self.mu)
        if not math.isfinite(self.mu):
            raise InvalidArgumentError("mu", self.mu, "a finite number > 0")

    @classmethod
    def from_sigma(cls, sigma: float, sensitivity: float = 1.0) -> GaussianDP:
        """The exact μ = Δ/σ of Gaussian noise of standard deviation σ."""
        return cls(check_positive("sensitivity", sensitivity) / check_positive("sigma", sigma))

    @classmethod
    def from_approx(cls, epsilon: float, delta: float) -> GaussianDP:
        """The largest μ whose profile meets (ε, δ): ``1/σ`` of the analytic calibration.

        Balle & Wang (ICML 2018, Alg. 1) find the smallest σ with exact
        ``δ(ε) ≤ δ`` for sensitivity 1; μ = 1/σ.
        """
        return cls(1.0 / analytic_gaussian_sigma(epsilon, delta, 1.0))

    def profile(self, epsilons: Any) -> np.ndarray:
        """``Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)``."""
        return gdp_profile(epsilons, self.mu)

    def tradeoff(self, alpha: Any) -> np.ndarray:
        """``T_μ(α) = Φ(Φ⁻¹(1 − α) − μ)``."""
        return gaussian_tradeoff(alpha, self.mu)

    def describe(self) -> str:
        """One line, e.g. ``1-GDP``."""
        return f"{self.mu:g}-GDP"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"kind": self.kind, "mu": self.mu}


@dataclass(frozen=True)
class RenyiDP:
    """(α, ε(α))-RDP at each listed order: ``D_α(M(x) ‖ M(x')) ≤ ε(α)`` (Mironov 2017, Def. 4).

    ``orders`` (each > 1, increasing) and ``epsilons`` give the curve at those
    orders, as an RDP accountant reports it.  ``conversion`` picks the (ε, δ)
    conversion: ``cks`` (Canonne, Kamath & Steinke 2020, Prop. 12; tighter) or
    ``mironov`` (Mironov 2017, Prop. 3).  The implied profile is the minimum of
    the conversion over the listed orders (each is a valid bound).
    """

    orders: tuple[float, ...]
    epsilons: tuple[float, ...]
    conversion: str = "cks"
    kind: ClassVar[str] = "renyi"
    reference: ClassVar[str] = "Mironov, CSF 2017, Def. 4 and Prop. 3; CKS 2020, Prop. 12"

    def __post_init__(self) -> None:
        object.__setattr__(self, "orders", tuple(float(a) for a in self.orders))
        object.__setattr__(self, "epsilons", tuple(float(e) for e in self.epsilons))
        if not self.orders or len(self.orders) != len(self.epsilons):
            raise InvalidArgumentError("orders", self.orders, "one order per epsilon, at least one")
        if any(not (math.isfinite(a) and a > 1) for a in self.orders):
            raise InvalidArgumentError("orders", self.orders, "finite Rényi orders > 1")
        if list(self.orders) != sorted(set(self.orders)):
            raise InvalidArgumentError("orders", self.orders, "strictly increasing orders")
        for e in self.epsilons:
            check_epsilon(e, "epsilons")
        if self.conversion not in RDP_CONVERSIONS:
            raise InvalidArgumentError("conversion", self.conversion, " or ".join(RDP_CONVERSIONS))

    @classmethod
    def from_function(
        cls, curve: Callable[[float], float], orders: Any, conversion: str = "cks"
    ) -> RenyiDP:
        """Sample a curve ``α ↦ ε(α)`` (e.g. an accountant's) at the given orders."""
        grid = tuple(float(a) for a in orders)
        return cls(grid, tuple(float(curve(a)) for a in grid), conversion)

    def epsilon_at(self, alpha: float) -> float:
        """A sound ``ε(α)`` between listed orders: that of the next larger order.

        ``D_α`` is non-decreasing in α (van Erven & Harremoës 2014, Thm. 3), so
        the guarantee at a larger order covers every smaller one; ``inf``
        above the largest listed order.
        """
        for a, e in zip(self.orders, self.epsilons, strict=True):
            if alpha <= a:
                return e
        return math.inf

    def profile(self, epsilons: Any) -> np.ndarray:
        """``min`` over the listed orders of the chosen conversion."""
        convert = rdp_delta_cks if self.conversion == "cks" else rdp_delta_mironov
        eps = check_epsilon_grid(epsilons)
        out = np.ones_like(eps)
        for a, tau in zip(self.orders, self.epsilons, strict=True):
            out = np.minimum(out, convert(eps, a, tau))
        return out

    def describe(self) -> str:
        """One line listing the curve."""
        pts = ", ".join(
            f"ε({a:g})={e:.4g}" for a, e in zip(self.orders, self.epsilons, strict=True)
        )
        return f"Rényi DP: {pts}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "kind": self.kind,
            "orders": list(self.orders),
            "epsilons": list(self.epsilons),
            "conversion": self.conversion,
        }


@dataclass(frozen=True)
class ZeroConcentratedDP:
    """ρ-zCDP: ``D_α(M(x) ‖ M(x')) ≤ ρα`` for every α > 1 (Bun & Steinke, TCC 2016, Def. 1.1).

    The Gaussian mechanism with ``μ = Δ/σ`` is exactly ``μ²/2``-zCDP (Bun &
    Steinke Prop. 1.6).  ``conversion``: ``cks`` (CKS 2020, Cor. 13; tighter)
    or ``bun-steinke`` (Prop. 1.3).
    """

    rho: float
    conversion: str = "cks"
    kind: ClassVar[str] = "zcdp"
    reference: ClassVar[str] = "Bun & Steinke, TCC 2016, Def. 1.1 and Prop. 1.3; CKS 2020, Cor. 13"

    def __post_init__(self) -> None:
        check_epsilon(self.rho, "rho")
        if self.conversion not in ZCDP_CONVERSIONS:
            raise InvalidArgumentError("conversion", self.conversion, " or ".join(ZCDP_CONVERSIONS))

    def epsilon_at(self, alpha: float) -> float:
        """``ρα``: the Rényi curve of the claim."""
        return self.rho * alpha

    def profile(self, epsilons: Any) -> np.ndarray:
        """The implied profile by the chosen conversion."""
        if self.conversion == "cks":
            return zcdp_delta_cks(epsilons, self.rho)
        return zcdp_delta_bun_steinke(epsilons, self.rho)

    def describe(self) -> str:
        """One line, e.g. ``0.5-zCDP``."""
        return f"{self.rho:g}-zCDP"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"kind": self.kind, "rho": self.rho, "conversion": self.conversion}


#: Any claim about a family of guarantees.
ProfileClaim = PureDP | ApproxDP | PrivacyProfile | GaussianDP | RenyiDP | ZeroConcentratedDP
