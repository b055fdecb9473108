"""Point claims: ε-DP and (ε, δ)-DP over a stated input domain, with the calibration's notes.

These are plain values, separate from the code that samples or audits, in the
spirit of dp_accounting's ``DpEvent``: a claim can be printed, compared,
serialised and handed to any auditor.  :class:`PrivacyClaim` adds to the bare
curves :class:`~dpaudit.claims.curves.PureDP` and
:class:`~dpaudit.claims.curves.ApproxDP` what a mechanism states beside them
(its input domain, its neighbours, the sensitivity its calibration assumes),
and answers every question of the curve by asking it (:attr:`PrivacyClaim.curve`):
pure and approximate DP are modelled once, there.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dpaudit import domains
from dpaudit.claims.curves import ApproxDP, PureDP
from dpaudit.claims.fields import check_kind, jsonable_number, number
from dpaudit.errors import InvalidArgumentError
from dpaudit.validation import as_finite_array, check_delta, check_epsilon

if TYPE_CHECKING:
    from dpaudit.domains import TypedDomain


class Definition(enum.StrEnum):
    """Which privacy definition a claim is made under."""

    PURE = "pure"  # ε-DP: Pr[M(x)∈S] ≤ e^ε Pr[M(x')∈S]
    APPROXIMATE = "approximate"  # (ε, δ)-DP
    METRIC = "metric"  # d_X-privacy: the bound scales with the distance of x and x'


@dataclass(frozen=True)
class InputDomain:
    """The set of inputs a mechanism accepts; in local DP any two of them are neighbours.

    ``shape`` is the input's array shape.  Every coordinate lies in ``[low, high]``;
    ``integer=True`` restricts coordinates to the integers of that interval
    (categorical inputs ``0..k-1``).  Bounds may be infinite (e.g. ADePT clips
    arbitrary real vectors).
    """

    shape: tuple[int, ...]
    low: float
    high: float
    integer: bool = False

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise InvalidArgumentError("domain", (self.low, self.high), "LOW < HIGH")

    @property
    def size(self) -> int:
        """Number of coordinates of one input."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def bounded(self) -> bool:
        """True when both ends are finite."""
        return math.isfinite(self.low) and math.isfinite(self.high)

    def describe(self) -> str:
        """Human-readable form such as ``[0, 1]^8`` or ``{0..4}^1``."""
        n = "×".join(str(s) for s in self.shape) or "1"
        if self.integer:
            return f"{{{int(self.low)}..{int(self.high)}}}^{n}"
        return f"[{_fmt(self.low)}, {_fmt(self.high)}]^{n}"

    def validate(self, x: Any, name: str = "x") -> np.ndarray:
        """Return ``x`` as a float64 array of this domain's shape, or raise naming ``name``.

        A scalar is accepted for a one-coordinate domain.
        """
        arr = as_finite_array(name, x)
        if arr.shape != self.shape:
            if arr.size == self.size and arr.ndim <= 1 and self.size == 1:
                arr = arr.reshape(self.shape)
            else:
                raise InvalidArgumentError(
                    name, f"<array of shape {arr.shape}>", f"an array of shape {self.shape}"
                )
        if np.any(arr < self.low) or np.any(arr > self.high):
            raise InvalidArgumentError(
                name, _preview(arr), f"values in the input domain {self.describe()}"
            )
        if self.integer and np.any(arr != np.round(arr)):
            raise InvalidArgumentError(name, _preview(arr), f"integers in {self.describe()}")
        return arr


def _fmt(v: float) -> str:
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    return f"{v:g}"


def _preview(arr: np.ndarray) -> str:
    flat = arr.ravel()
    head = ", ".join(f"{v:g}" for v in flat[:4])
    return f"[{head}{', ...' if flat.size > 4 else ''}]"


@dataclass(frozen=True)
class PrivacyClaim:
    """What a mechanism promises.

    ``domain`` is an :class:`InputDomain` (a float/integer box, any two points
    neighbours) or a typed domain of :mod:`dpaudit.domains` (ints, booleans,
    categories, words, vectors, datasets with add/remove-one or replace-one
    neighbours).  ``neighbouring`` states in words which inputs are neighbours
    (for local DP: any two inputs of ``domain``).  ``sensitivity``/``sensitivity_norm`` record
    the sensitivity the mechanism's *calibration assumes*, which may differ from
    the true one — that gap is exactly what ADePT got wrong.
    """

    definition: Definition
    epsilon: float
    domain: InputDomain | TypedDomain
    delta: float = 0.0
    neighbouring: str = "any two inputs of the domain (local DP)"
    sensitivity: float | None = None
    sensitivity_norm: str | None = None

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_delta(self.delta)
        if self.definition is Definition.PURE and self.delta != 0.0:
            raise InvalidArgumentError("delta", self.delta, "0 for a pure ε-DP claim")
        if self.definition is Definition.METRIC:
            # A metric claim without its metric could not say what any pair is allowed.
            raise InvalidArgumentError(
                "definition", self.definition.value, "pure or approximate (use MetricClaim)"
            )

    @property
    def kind(self) -> str:
        """``"pure"`` or ``"approximate"``: the kind of :attr:`curve`."""
        return self.curve.kind

    @property
    def curve(self) -> PureDP | ApproxDP:
        """The bare guarantee, :class:`PureDP` or :class:`ApproxDP`, that does the maths."""
        if self.definition is Definition.PURE:
            return PureDP(self.epsilon, neighbouring=self.neighbouring)
        return ApproxDP(self.epsilon, self.delta, neighbouring=self.neighbouring)

    def profile(self, epsilons: Any, x: Any = None, x_prime: Any = None) -> np.ndarray:
        """The largest δ(ε) the claim permits between any two inputs: :attr:`curve`'s profile."""
        return self.curve.profile(epsilons, x, x_prime)

    def allowed_loss(
        self, x: Any = None, x_prime: Any = None, *, units: int | None = None
    ) -> float:
        """The privacy loss the claim allows between ``x`` and ``x'``: ε for any two inputs.

        Every auditor asks a claim this one question (:func:`dpaudit.auditors.core.certify.
        verdict_for` compares the certified bound with it).  For (ε, δ)-DP the
        answer is ε too: δ is not a loss but the slack subtracted from
        ``Pr[M(x) ∈ S]`` before the ratio is bounded (:attr:`delta`).  ``units``
        is for text claims (:meth:`dpaudit.claims.text.TextClaim.allowed_loss`)
        and is ignored.
        """
        return self.curve.allowed_loss(x, x_prime, units=units)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the curve's fields, the domain and the calibration's notes."""
        return {
            **self.curve.to_dict(),
            "delta": self.delta,
            "domain": domain_to_dict(self.domain),
            "neighbouring": self.neighbouring,
            "sensitivity": self.sensitivity,
            "sensitivity_norm": self.sensitivity_norm,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PrivacyClaim:
        """The claim :meth:`to_dict` wrote (``kind`` gives the definition)."""
        kind = check_kind(cls, data, ("pure", "approximate"))
        if "domain" not in data:
            raise InvalidArgumentError(
                "data",
                kind,
                "a PrivacyClaim's dict, with its domain (a bare curve: PureDP/ApproxDP)",
            )
        sensitivity = data.get("sensitivity")
        return cls(
            Definition(kind),
            float(data["epsilon"]),
            domain_from_dict(data["domain"]),
            float(data.get("delta", 0.0)),
            neighbouring=str(data.get("neighbouring", cls.neighbouring)),
            sensitivity=None if sensitivity is None else number(sensitivity),
            sensitivity_norm=data.get("sensitivity_norm"),
        )

    def describe(self) -> str:
        """One line such as ``(1, 1e-05)-DP on [0, 1]^8, assumed L1 sensitivity 8``."""
        if self.definition is Definition.APPROXIMATE:
            head = f"({self.epsilon:g}, {self.delta:g})-DP"
        elif self.definition is Definition.METRIC:
            head = f"{self.epsilon:g}·d-privacy"
        else:
            head = f"{self.epsilon:g}-DP"
        text = f"{head} on {self.domain.describe()}"
        if self.sensitivity is not None:
            text += f", assumed {self.sensitivity_norm or ''} sensitivity {self.sensitivity:g}"
        return text


# ------------------------------------------------------------------ domains as JSON
#: The typed domains of :mod:`dpaudit.domains` by the ``"type"`` their JSON form carries.
_TYPED: dict[str, type] = {
    "real": domains.RealBox,
    "int": domains.IntRange,
    "categories": domains.Categories,
    "vector": domains.Vector,
    "dataset": domains.Dataset,
}


def domain_to_dict(domain: InputDomain | TypedDomain) -> dict[str, Any]:
    """A claim's domain as JSON: an :class:`InputDomain` box or a typed domain, tagged by type."""
    if isinstance(domain, InputDomain):
        return {
            "type": "box",
            "shape": list(domain.shape),
            "low": jsonable_number(domain.low),
            "high": jsonable_number(domain.high),
            "integer": domain.integer,
        }
    if isinstance(domain, domains.RealBox):
        return {"type": "real", "low": domain.low, "high": domain.high, "dim": domain.dim}
    if isinstance(domain, domains.IntRange):
        return {"type": "int", "low": domain.low, "high": domain.high}
    if isinstance(domain, domains.Categories):
        return {"type": "categories", "values": list(domain.values), "kind": domain.kind}
    if isinstance(domain, domains.Vector):
        return {
            "type": "vector",
            "element": domain_to_dict(domain.element),
            "length": domain.length,
        }
    if isinstance(domain, domains.Dataset):
        return {
            "type": "dataset",
            "record": domain_to_dict(domain.record),
            "max_size": domain.max_size,
            "neighbours": domain.neighbours,
        }
    raise InvalidArgumentError("domain", domain, "an InputDomain or a domain of dpaudit.domains")


def domain_from_dict(data: Mapping[str, Any]) -> InputDomain | TypedDomain:
    """The domain :func:`domain_to_dict` wrote."""
    kind = data.get("type") if isinstance(data, Mapping) else None
    if kind == "box":
        return InputDomain(
            tuple(int(s) for s in data["shape"]),
            number(data["low"]),
            number(data["high"]),
            bool(data.get("integer", False)),
        )
    if kind in ("vector", "dataset"):
        inner = "element" if kind == "vector" else "record"
        rest = {k: v for k, v in data.items() if k not in ("type", inner)}
        return _TYPED[kind](domain_from_dict(data[inner]), **rest)
    if kind in _TYPED:
        rest = {k: v for k, v in data.items() if k != "type"}
        if kind == "categories":
            rest["values"] = tuple(rest["values"])
        return _TYPED[kind](**rest)
    raise InvalidArgumentError("domain", kind, "a domain type: box, " + ", ".join(_TYPED))
