"""Claims about a whole family of guarantees: curves δ(ε), μ, ε(α), ρ, a trade-off f.

A Gaussian-noise mechanism does not claim one (ε, δ): it claims a curve.  These
values say which, in the spirit of dp_accounting's ``DpEvent``: they can be
printed, compared, serialised (``to_dict``/``from_dict``) and handed to an
auditor (:mod:`dpaudit.auditors.profile`).  Every claim answers the one
question of the :class:`~dpaudit.claims.protocol.Claim` protocol, ``profile``
— the privacy profile ``δ(ε)`` it *implies*, i.e. the largest hockey-stick
divergence ``sup_S Pr[M(x) ∈ S] − e^ε Pr[M(x') ∈ S]`` it permits between
neighbours — through the tightest sound conversion known
(:mod:`dpaudit.analysis.privacy_conversions`).  A certified
``δ_lcb(ε) > claim.profile(ε)`` therefore refutes the claim itself, whatever its
definition.

=========================== ==========================================================
:class:`PureDP`             ε-DP (Dwork, McSherry, Nissim & Smith, TCC 2006)
:class:`ApproxDP`           (ε, δ)-DP (Dwork, Kenthapadi et al., Eurocrypt 2006)
:class:`PrivacyProfile`     a whole curve δ(ε), e.g. a mechanism's own accountant
                            (Balle, Barthe & Gaboardi, NeurIPS 2018)
:class:`GaussianDP`         μ-GDP (Dong, Roth & Su, JRSS-B 2022, Def. 2.7)
:class:`RenyiDP`            (α, ε(α))-RDP at a set of orders (Mironov, CSF 2017, Def. 4)
:class:`ZeroConcentratedDP` ρ-zCDP: D_α ≤ ρα for all α > 1 (Bun & Steinke, TCC 2016,
                            Def. 1.1)
:class:`TradeoffDP`         f-DP for a trade-off function f (Dong, Roth & Su 2022,
                            Def. 2.3)
=========================== ==========================================================

The curves are the same for every pair of neighbours, so ``profile`` ignores
``x`` and ``x_prime``.  Their conversions are the leaf maths modules
:mod:`dpaudit.analysis.privacy_conversions` and :mod:`dpaudit.analysis.gaussian`
(which import only basics; ``tests/test_architecture.py`` names them as the
claims package's two exceptions).  scipy is imported lazily there, so reading a
claim costs no heavy import.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
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
from dpaudit.claims.fields import (
    MECHANISMS_NEIGHBOURS,
    check_kind,
    init_fields,
    neighbouring_entry,
)
from dpaudit.errors import InvalidArgumentError
from dpaudit.validation import check_delta, check_epsilon, check_positive

#: Conversions from Rényi guarantees to (ε, δ): the tight default and the classic one.
RDP_CONVERSIONS = ("cks", "mironov")
ZCDP_CONVERSIONS = ("cks", "bun-steinke")


def _not_serialisable(cls: type, what: str) -> InvalidArgumentError:
    return InvalidArgumentError(
        "data",
        f"<{cls.__name__}.to_dict()>",
        f"a serialisable claim: a {cls.__name__} holds {what}, a Python function that "
        f"to_dict cannot store (it keeps only the description); rebuild it with "
        f"{cls.__name__}(function, description)",
    )


@dataclass(frozen=True)
class PureDP:
    """ε-DP: ``Pr[M(x) ∈ S] ≤ e^ε Pr[M(x') ∈ S]`` for all neighbours and sets."""

    epsilon: float
    neighbouring: str = field(default=MECHANISMS_NEIGHBOURS, kw_only=True)
    kind: ClassVar[str] = "pure"
    reference: ClassVar[str] = "Dwork, McSherry, Nissim & Smith, TCC 2006"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)

    def profile(self, epsilons: Any, x: Any = None, x_prime: Any = None) -> np.ndarray:
        """``(e^ε − e^{ε'})₊/(1 + e^ε)`` (Kairouz, Oh & Viswanath, ICML 2015, Thm. 2.1)."""
        return approx_dp_profile(epsilons, self.epsilon, 0.0)

    def allowed_loss(
        self, x: Any = None, x_prime: Any = None, *, units: int | None = None
    ) -> float:
        """ε, for any two neighbours (``units`` is for text claims and is ignored)."""
        return self.epsilon

    def describe(self) -> str:
        """One line, e.g. ``1-DP``."""
        return f"{self.epsilon:g}-DP"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"kind": self.kind, "epsilon": self.epsilon, **neighbouring_entry(self.neighbouring)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PureDP:
        """The claim :meth:`to_dict` wrote."""
        check_kind(cls, data)
        return cls(**init_fields(cls, data))


@dataclass(frozen=True)
class ApproxDP:
    """(ε, δ)-DP: ``Pr[M(x) ∈ S] ≤ e^ε Pr[M(x') ∈ S] + δ`` for all neighbours and sets."""

    epsilon: float
    delta: float
    neighbouring: str = field(default=MECHANISMS_NEIGHBOURS, kw_only=True)
    kind: ClassVar[str] = "approximate"
    reference: ClassVar[str] = "Dwork, Kenthapadi, McSherry, Mironov & Naor, Eurocrypt 2006"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_delta(self.delta)

    def profile(self, epsilons: Any, x: Any = None, x_prime: Any = None) -> np.ndarray:
        """``δ + (1 − δ)(e^ε − e^{ε'})₊/(1 + e^ε)``: the profile of the dominating pair."""
        return approx_dp_profile(epsilons, self.epsilon, self.delta)

    def allowed_loss(
        self, x: Any = None, x_prime: Any = None, *, units: int | None = None
    ) -> float:
        """ε, for any two neighbours: δ is not a loss but the slack beside it."""
        return self.epsilon

    def describe(self) -> str:
        """One line, e.g. ``(1, 1e-05)-DP``."""
        return f"({self.epsilon:g}, {self.delta:g})-DP"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "kind": self.kind,
            "epsilon": self.epsilon,
            "delta": self.delta,
            **neighbouring_entry(self.neighbouring),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ApproxDP:
        """The claim :meth:`to_dict` wrote."""
        check_kind(cls, data)
        return cls(**init_fields(cls, data))


def _probabilities(out: np.ndarray, what: str, allowed: str) -> np.ndarray:
    if np.any(~(out >= 0)) or np.any(out > 1):
        raise InvalidArgumentError("function", what, allowed)
    return out


def _call_elementwise(function: Callable[..., Any], points: np.ndarray) -> Any:
    """``function`` on the whole array, else once per point (a scalar-only function)."""
    try:
        out = np.asarray(function(points), dtype=np.float64)
    except (TypeError, ValueError):
        out = None
    if out is None or out.shape != points.shape:
        flat = [float(function(float(p))) for p in points.ravel()]
        out = np.asarray(flat, dtype=np.float64).reshape(points.shape)
    return out


@dataclass(frozen=True)
class PrivacyProfile:
    """A whole privacy profile: (ε, ``function(ε)``)-DP for every ``ε ≥ 0``.

    ``function`` maps an array of ε to an array of δ (a mechanism's own
    accountant, e.g. ``lambda e: mech.privacy_profile(e, x, x')``, or
    dp_accounting's ``get_delta`` wrapped elementwise); a scalar-only function
    is called once per ε.  ``description`` says where the curve comes from — it
    is what the report prints, since a function cannot be serialised (so
    :meth:`from_dict` refuses, saying why).
    """

    function: Callable[[np.ndarray], Any] = field(compare=False)
    description: str
    neighbouring: str = field(default=MECHANISMS_NEIGHBOURS, kw_only=True)
    kind: ClassVar[str] = "profile"
    reference: ClassVar[str] = "Balle, Barthe & Gaboardi, NeurIPS 2018 (privacy profiles)"

    def __post_init__(self) -> None:
        if not callable(self.function):
            raise InvalidArgumentError("function", self.function, "a callable ε ↦ δ(ε)")
        if not self.description:
            raise InvalidArgumentError("description", self.description, "a non-empty text")

    def profile(self, epsilons: Any, x: Any = None, x_prime: Any = None) -> np.ndarray:
        """The claimed δ at each ε, checked to be probabilities."""
        eps = check_epsilon_grid(epsilons)
        out = _call_elementwise(self.function, eps)
        return _probabilities(out, self.description, "δ(ε) values in [0, 1]")

    def describe(self) -> str:
        """The description given."""
        return f"privacy profile δ(ε): {self.description}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the description; the function itself cannot be stored)."""
        return {
            "kind": self.kind,
            "description": self.description,
            **neighbouring_entry(self.neighbouring),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PrivacyProfile:
        """Always an error: the JSON form lacks the function δ(ε) (see the class)."""
        check_kind(cls, data)
        raise _not_serialisable(cls, "its curve δ(ε)")


@dataclass(frozen=True)
class GaussianDP:
    """μ-GDP: no test of ``M(x)`` against ``M(x')`` beats ``G_μ`` (DRS 2022, Def. 2.7).

    Equivalent to the profile :func:`gdp_profile` (DRS 2022, Cor. 2.13); the
    Gaussian mechanism ``x + N(0, σ²)`` of L2 sensitivity Δ is exactly
    ``Δ/σ``-GDP (DRS Thm. 2.7), see :meth:`from_sigma`.
    """

    mu: float
    neighbouring: str = field(default=MECHANISMS_NEIGHBOURS, kw_only=True)
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

    def profile(self, epsilons: Any, x: Any = None, x_prime: Any = None) -> np.ndarray:
        """``Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)``."""
        return gdp_profile(epsilons, self.mu)

    def tradeoff(self, alpha: Any) -> np.ndarray:
        """``G_μ(α) = Φ(Φ⁻¹(1 − α) − μ)``."""
        return gaussian_tradeoff(alpha, self.mu)

    def describe(self) -> str:
        """One line, e.g. ``1-GDP``."""
        return f"{self.mu:g}-GDP"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"kind": self.kind, "mu": self.mu, **neighbouring_entry(self.neighbouring)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GaussianDP:
        """The claim :meth:`to_dict` wrote."""
        check_kind(cls, data)
        return cls(**init_fields(cls, data))


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
    neighbouring: str = field(default=MECHANISMS_NEIGHBOURS, kw_only=True)
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

    def profile(self, epsilons: Any, x: Any = None, x_prime: Any = None) -> np.ndarray:
        """``min`` over the listed orders of the chosen conversion."""
        convert = rdp_delta_cks if self.conversion == "cks" else rdp_delta_mironov
        eps = check_epsilon_grid(epsilons)
        out = np.ones_like(eps)
        for a, tau in zip(self.orders, self.epsilons, strict=True):
            out = np.minimum(out, convert(eps, a, tau))
        return out

    def describe(self) -> str:
        """One line listing the curve (an accountant's hundreds of orders: the first 6 and the
        last, with how many are left out)."""
        pts = [f"ε({a:g})={e:.4g}" for a, e in zip(self.orders, self.epsilons, strict=True)]
        if len(pts) > 8:
            pts = [*pts[:6], f"… ({len(pts) - 7} more orders)", pts[-1]]
        return f"Rényi DP: {', '.join(pts)}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "kind": self.kind,
            "orders": list(self.orders),
            "epsilons": list(self.epsilons),
            "conversion": self.conversion,
            **neighbouring_entry(self.neighbouring),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RenyiDP:
        """The claim :meth:`to_dict` wrote."""
        check_kind(cls, data)
        return cls(**init_fields(cls, data))


@dataclass(frozen=True)
class ZeroConcentratedDP:
    """ρ-zCDP: ``D_α(M(x) ‖ M(x')) ≤ ρα`` for every α > 1 (Bun & Steinke, TCC 2016, Def. 1.1).

    The Gaussian mechanism with ``μ = Δ/σ`` is exactly ``μ²/2``-zCDP (Bun &
    Steinke Prop. 1.6).  ``conversion``: ``cks`` (CKS 2020, Cor. 13; tighter)
    or ``bun-steinke`` (Prop. 1.3).
    """

    rho: float
    conversion: str = "cks"
    neighbouring: str = field(default=MECHANISMS_NEIGHBOURS, kw_only=True)
    kind: ClassVar[str] = "zcdp"
    reference: ClassVar[str] = "Bun & Steinke, TCC 2016, Def. 1.1 and Prop. 1.3; CKS 2020, Cor. 13"

    def __post_init__(self) -> None:
        check_epsilon(self.rho, "rho")
        if self.conversion not in ZCDP_CONVERSIONS:
            raise InvalidArgumentError("conversion", self.conversion, " or ".join(ZCDP_CONVERSIONS))

    def epsilon_at(self, alpha: float) -> float:
        """``ρα``: the Rényi curve of the claim."""
        return self.rho * alpha

    def profile(self, epsilons: Any, x: Any = None, x_prime: Any = None) -> np.ndarray:
        """The implied profile by the chosen conversion."""
        if self.conversion == "cks":
            return zcdp_delta_cks(epsilons, self.rho)
        return zcdp_delta_bun_steinke(epsilons, self.rho)

    def describe(self) -> str:
        """One line, e.g. ``0.5-zCDP``."""
        return f"{self.rho:g}-zCDP"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "kind": self.kind,
            "rho": self.rho,
            "conversion": self.conversion,
            **neighbouring_entry(self.neighbouring),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ZeroConcentratedDP:
        """The claim :meth:`to_dict` wrote."""
        check_kind(cls, data)
        return cls(**init_fields(cls, data))


#: :meth:`TradeoffDP.profile` searches ``t = ln α`` in ``[TRADEOFF_LOG_ALPHA_MIN, 0]``: first
#: on a grid of ``TRADEOFF_GRID`` points, then by golden sections until the bracket around
#: the grid's best point is ``TRADEOFF_LOG_ALPHA_TOL`` wide.
TRADEOFF_LOG_ALPHA_MIN = -700.0
TRADEOFF_GRID = 701
TRADEOFF_LOG_ALPHA_TOL = 1e-12
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def _golden_bracket(
    h: Callable[[np.ndarray], np.ndarray], a: np.ndarray, b: np.ndarray, tol: float
) -> tuple[np.ndarray, np.ndarray]:
    """Shrink each bracket ``[a, b]`` around the maximiser of unimodal ``h`` to width ``tol``."""
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    hc, hd = h(c), h(d)
    while np.max(b - a) > tol:
        left = hc >= hd  # the maximiser lies in [a, d]
        a, b = np.where(left, a, c), np.where(left, d, b)
        c, d = (
            np.where(left, b - _GOLDEN * (b - a), d),
            np.where(left, c, a + _GOLDEN * (b - a)),
        )
        hc, hd = np.where(left, h(c), hd), np.where(left, hc, h(d))
    return a, b


@dataclass(frozen=True)
class TradeoffDP:
    """f-DP: every test of ``M(x)`` against ``M(x')`` at type-I error α errs with ≥ ``f(α)``.

    ``function`` is the trade-off function ``f`` (Dong, Roth & Su, JRSS-B 2022,
    Def. 2.2: convex, continuous, non-increasing, ``f(α) ≤ 1 − α``), vectorised
    over α or scalar-only (then called once per α); ``description`` says which
    curve it is, since a function cannot be serialised (so :meth:`from_dict`
    refuses, saying why).  μ-GDP is the case ``f = G_μ`` (:class:`GaussianDP`).

    The implied profile is the convex dual ``δ(ε) = 1 + f*(−e^ε) =
    sup_α [1 − f(α) − e^ε α]`` (DRS 2022, Prop. 2.12), see :meth:`profile`.
    """

    function: Callable[[np.ndarray], Any] = field(compare=False)
    description: str
    neighbouring: str = field(default=MECHANISMS_NEIGHBOURS, kw_only=True)
    kind: ClassVar[str] = "tradeoff"
    reference: ClassVar[str] = "Dong, Roth & Su, JRSS-B 2022, Def. 2.3 and Prop. 2.12"

    def __post_init__(self) -> None:
        if not callable(self.function):
            raise InvalidArgumentError("function", self.function, "a callable α ↦ f(α)")
        if not self.description:
            raise InvalidArgumentError("description", self.description, "a non-empty text")

    def tradeoff(self, alpha: Any) -> np.ndarray:
        """``f(α)`` at each type-I error α, checked to be probabilities."""
        a = np.asarray(alpha, dtype=np.float64)
        if np.any(~(a >= 0)) or np.any(a > 1):
            raise InvalidArgumentError("alpha", "<array>", "type-I errors in [0, 1]")
        out = _call_elementwise(self.function, a)
        return _probabilities(out, self.description, "trade-off values f(α) in [0, 1]")

    def profile(self, epsilons: Any, x: Any = None, x_prime: Any = None) -> np.ndarray:
        """``sup_α [1 − f(α) − e^ε α]``, bounded from above (sound) to within ~1e-12.

        ``h(α) = 1 − f(α) − e^ε α`` is concave (f is convex), so it is unimodal in
        ``t = ln α`` too: the best of 701 points of ``t ∈ [−700, 0]`` and its two
        neighbours bracket the maximiser, and golden sections shrink that
        bracket ``[α_a, α_b]`` to ``10⁻¹²`` in t, for every ε at once.  (A
        golden search over the whole range would be misled where rounding makes
        ``f(α)`` exactly 1 for tiny α, e.g. ``G_μ`` below α ≈ 1e-17: h is flat there.)
        On that bracket ``h ≤ 1 − f(α_b) − e^ε α_a`` (f is non-increasing), and
        below ``e^{−700}`` ``h ≤ 1 − f(e^{−700})``; the larger of the two is
        returned.  It exceeds the supremum by at most
        ``(f(α_a) − f(α_b)) + e^ε (α_b − α_a) ≈ 2·e^ε α*·10⁻¹²``, at most
        ``2·10⁻¹²`` since ``e^ε α* ≤ 1`` at any maximiser with ``h ≥ 0`` — beside
        the rounding of ``f`` itself.  Never below the supremum (up to that
        rounding), so a certified δ above it refutes the claim.
        """
        eps = check_epsilon_grid(epsilons)
        flat = eps.reshape(-1, 1)
        grid = np.linspace(TRADEOFF_LOG_ALPHA_MIN, 0.0, TRADEOFF_GRID)
        on_grid = 1.0 - self.tradeoff(np.exp(grid))[None, :] - np.exp(flat + grid[None, :])
        best = np.argmax(on_grid, axis=1)
        step = grid[1] - grid[0]
        a = np.maximum(grid[best] - step, TRADEOFF_LOG_ALPHA_MIN)
        b = np.minimum(grid[best] + step, 0.0)

        def h(t: np.ndarray) -> np.ndarray:
            return 1.0 - self.tradeoff(np.exp(t)) - np.exp(flat[:, 0] + t)

        a, b = _golden_bracket(h, a, b, TRADEOFF_LOG_ALPHA_TOL)
        bracket = 1.0 - self.tradeoff(np.exp(b)) - np.exp(flat[:, 0] + a)
        tiny = 1.0 - self.tradeoff(math.exp(TRADEOFF_LOG_ALPHA_MIN))
        return np.clip(np.maximum(bracket, tiny), 0.0, 1.0).reshape(eps.shape)

    def describe(self) -> str:
        """The description given."""
        return f"f-DP with trade-off f: {self.description}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the description; the function itself cannot be stored)."""
        return {
            "kind": self.kind,
            "description": self.description,
            **neighbouring_entry(self.neighbouring),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TradeoffDP:
        """Always an error: the JSON form lacks the trade-off function (see the class)."""
        check_kind(cls, data)
        raise _not_serialisable(cls, "its trade-off function f")


#: Any claim about a family of guarantees.
ProfileClaim = (
    PureDP | ApproxDP | PrivacyProfile | GaussianDP | RenyiDP | ZeroConcentratedDP | TradeoffDP
)
