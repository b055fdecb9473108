"""Immutable descriptions of what a mechanism *claims* and what is analytically *true*.

These are plain values, separate from the code that samples or audits, in the
spirit of dp_accounting's ``DpEvent``: a claim can be printed, compared,
serialised and handed to any auditor.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dpaudit.errors import InvalidArgumentError
from dpaudit.validation import as_finite_array, check_delta, check_epsilon
from dpaudit.witness import Witness

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

    def allowed_loss(self, x: Any = None, x_prime: Any = None) -> float:
        """The privacy loss the claim allows between ``x`` and ``x'``: ε for any two inputs.

        Every auditor asks a claim this one question (:func:`dpaudit.auditors.core.certify.
        verdict_for` compares the certified bound with it).  For (ε, δ)-DP the
        answer is ε too: δ is not a loss but the slack subtracted from
        ``Pr[M(x) ∈ S]`` before the ratio is bounded (:attr:`delta`).
        """
        return self.epsilon

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


@dataclass(frozen=True)
class AnalyticTruth:
    """What is provably true about a mechanism, computed by :mod:`dpaudit.analysis`.

    ``true_epsilon`` is the exact worst case over the claimed domain (``inf``
    when the privacy loss is unbounded); ``method`` says how it was obtained
    (``closed form``, ``exhaustive search over codes``, ``support argument``...).
    """

    true_epsilon: float
    method: str
    true_delta: float = 0.0
    true_sensitivity: float | None = None
    sensitivity_norm: str | None = None
    witness: Witness | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def violates(self, claim: PrivacyClaim, rtol: float = 1e-9) -> bool:
        """True when the exact ε exceeds the claimed ε (beyond rounding)."""
        return self.true_epsilon > claim.epsilon * (1 + rtol)


@dataclass(frozen=True)
class MetricClaim:
    """A metric-DP (d_χ-privacy) claim over words (Chatzikokolakis et al., PETS 2013, Def. 1).

    For all words ``w, w'`` and output sets ``S``:
    ``Pr[M(w) ∈ S] ≤ e^{ε·d(w, w')}·Pr[M(w') ∈ S]``.  Every pair has its own
    allowed loss ``ε·d(w, w')``; ``d = inf`` marks a pair the claim does not
    constrain (a word outside the claimed vocabulary, or outside CusText's
    output set).  ``metric`` is a :class:`dpaudit.analysis.word_metrics.WordMetric`
    (Euclidean over an embedding, the regularised Mahalanobis ``d_R``, a
    partition, or a user callable).
    """

    epsilon: float
    metric: Any
    neighbouring: str = "any two words of the vocabulary; the bound scales with d(w, w')"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        if not callable(getattr(self.metric, "distances", None)):
            raise InvalidArgumentError("metric", self.metric, "a WordMetric (with .distances)")

    @property
    def definition(self) -> Definition:
        """Always :attr:`Definition.METRIC`."""
        return Definition.METRIC

    def distance(self, w: str, w_prime: str) -> float:
        """``d(w, w')`` (``inf`` when the claim does not constrain the pair)."""
        return float(self.metric.distances([w], [w_prime])[0])

    def allowed_loss(self, w: str, w_prime: str) -> float:
        """The claimed bound ``ε·d(w, w')`` on the privacy loss of the pair."""
        d = self.distance(w, w_prime)
        return 0.0 if d == 0 else self.epsilon * d

    def describe(self) -> str:
        """One line such as ``1·d-privacy, d = Euclidean over glove-6B-50d (20000 words)``."""
        return f"{self.epsilon:g}·d-privacy (metric local DP), d = {self.metric.describe()}"
