"""The one contract every claim meets, and the reader of any claim's JSON form.

A claim is a value saying what a mechanism promises.  Whatever its definition
— ε-DP, (ε, δ)-DP, a privacy profile, μ-GDP, Rényi DP, zCDP, f-DP, metric DP
or a text rewriter's per-token ε — it answers the same questions
(:class:`Claim`), so the core of an auditor needs to know no definition: it
asks :meth:`Claim.profile` for the largest hockey-stick divergence the claim
permits between the pair it certified, and a certified lower bound above that
refutes the claim.

==============  ================================================  ==========================
``kind``        class                                             module
==============  ================================================  ==========================
``pure``        :class:`PureDP`, :class:`PrivacyClaim`            curves, point
``approximate`` :class:`ApproxDP`, :class:`PrivacyClaim`          curves, point
``profile``     :class:`PrivacyProfile`                           curves
``gdp``         :class:`GaussianDP`                               curves
``renyi``       :class:`RenyiDP`                                  curves
``zcdp``        :class:`ZeroConcentratedDP`                       curves
``tradeoff``    :class:`TradeoffDP`                               curves
``metric``      :class:`MetricClaim`                              metric
``text``        :class:`TextClaim`                                text
==============  ================================================  ==========================

A :class:`PrivacyClaim` is ``pure`` or ``approximate`` too: it is the bare
curve plus an input domain and the calibration's notes, and its dict carries
a ``domain`` — that is how :func:`claim_from_dict` tells the two apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dpaudit.claims.curves import (
    ApproxDP,
    GaussianDP,
    PrivacyProfile,
    PureDP,
    RenyiDP,
    TradeoffDP,
    ZeroConcentratedDP,
)
from dpaudit.claims.metric import MetricClaim
from dpaudit.claims.point import PrivacyClaim
from dpaudit.claims.text import TextClaim
from dpaudit.errors import InvalidArgumentError, MissingArgumentError


@runtime_checkable
class Claim(Protocol):
    """What every claim is: printable, serialisable, and able to say what it permits.

    ``kind``: a short tag (see the module's table), written into :meth:`to_dict`.
    ``neighbouring``: which inputs the claim protects against telling apart, in words.
    """

    kind: str
    neighbouring: str

    def describe(self) -> str:
        """One line for a report, e.g. ``(1, 1e-05)-DP on [0, 1]^8``."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, with ``"kind"``; :meth:`from_dict` reads it back."""
        ...

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Claim:
        """The claim :meth:`to_dict` wrote (``type(c).from_dict(c.to_dict()) == c``).

        A claim holding a Python function (:class:`PrivacyProfile`,
        :class:`TradeoffDP`) cannot be rebuilt and raises, saying why; a
        :class:`MetricClaim` takes its metric back as an argument.
        """
        ...

    def profile(self, epsilons: Any, x: Any = None, x_prime: Any = None) -> np.ndarray:
        """The largest hockey-stick divergence δ(ε) the claim permits between ``x`` and ``x'``.

        ``sup_S Pr[M(x) ∈ S] − e^ε Pr[M(x') ∈ S]`` at each ε of ``epsilons``;
        the same for every pair of a curve claim, the pair's own for a metric
        or text claim (a text claim per token also needs the units released,
        ``units=``).  The one question the core asks: a certified δ above it
        refutes the claim.
        """
        ...


#: Each kind's class; ``pure``/``approximate`` are :class:`PrivacyClaim` when a domain is given.
CLAIM_TYPES: dict[str, type] = {
    cls.kind: cls
    for cls in (
        PureDP,
        ApproxDP,
        PrivacyProfile,
        GaussianDP,
        RenyiDP,
        ZeroConcentratedDP,
        TradeoffDP,
        MetricClaim,
        TextClaim,
    )
}


def claim_from_dict(data: Mapping[str, Any], *, metric: Any = None) -> Claim:
    """The claim whose :meth:`~Claim.to_dict` gave ``data``, chosen by its ``kind``.

    ``pure``/``approximate`` with a ``domain`` is a :class:`PrivacyClaim`,
    without one the bare :class:`PureDP`/:class:`ApproxDP`.  ``metric`` is the
    WordMetric of a ``metric`` claim (its dict names it only).
    """
    if not isinstance(data, Mapping) or "kind" not in data:
        raise MissingArgumentError("kind", "a claim's dict, as Claim.to_dict() writes it")
    kind = data["kind"]
    if kind not in CLAIM_TYPES:
        raise InvalidArgumentError("kind", kind, "one of " + ", ".join(CLAIM_TYPES))
    if kind in ("pure", "approximate") and "domain" in data:
        return PrivacyClaim.from_dict(data)
    if kind == "metric":
        return MetricClaim.from_dict(data, metric=metric)
    claim: Claim = CLAIM_TYPES[kind].from_dict(data)
    return claim
