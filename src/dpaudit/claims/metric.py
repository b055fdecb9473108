"""Metric-DP claims (d_χ-privacy): the loss allowed between two words scales with their distance."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpaudit.analysis.privacy_conversions import approx_dp_profile, check_epsilon_grid
from dpaudit.claims.fields import check_kind
from dpaudit.claims.point import Definition
from dpaudit.errors import InvalidArgumentError, MissingArgumentError
from dpaudit.validation import check_epsilon


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
    kind: ClassVar[str] = "metric"
    reference: ClassVar[str] = "Chatzikokolakis, Andrés, Bordenabe & Palamidessi, PETS 2013"

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

    def allowed_loss(
        self, x: Any = None, x_prime: Any = None, *, units: int | None = None
    ) -> float:
        """The claimed bound ``ε·d(x, x')`` on the privacy loss of the pair of words.

        Both words are needed (the bound is the pair's own); ``units`` is for
        text claims and is ignored.  ``inf``: the claim does not constrain the pair.
        """
        if x is None or x_prime is None:
            raise MissingArgumentError("x, x_prime", "the two words: a metric claim's bound is ε·d")
        d = self.distance(x, x_prime)
        return 0.0 if d == 0 else self.epsilon * d

    def profile(self, epsilons: Any, x: Any = None, x_prime: Any = None) -> np.ndarray:
        """The pure ``ε·d(x, x')``-DP profile of the pair (1 where the claim sets no bound).

        Kairouz, Oh & Viswanath (ICML 2015, Thm. 2.1) at ``ε₀ = ε·d``:
        ``(e^{ε₀} − e^{ε'})₊/(1 + e^{ε₀})``.  Both words are needed.
        """
        loss = self.allowed_loss(x, x_prime)
        if math.isinf(loss) or loss == 0.0:  # no bound; or d = 0: the same distribution
            return np.full_like(check_epsilon_grid(epsilons), 1.0 if loss else 0.0)
        return approx_dp_profile(epsilons, loss, 0.0)

    def describe(self) -> str:
        """One line such as ``1·d-privacy, d = Euclidean over glove-6B-50d (20000 words)``."""
        return f"{self.epsilon:g}·d-privacy (metric local DP), d = {self.metric.describe()}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ε, the metric in words and the neighbouring relation.

        The metric itself (an embedding, a partition, a callable) is not stored:
        :meth:`from_dict` takes it back as an argument.
        """
        return {
            "kind": self.kind,
            "epsilon": self.epsilon,
            "metric": self.metric.describe(),
            "neighbouring": self.neighbouring,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], metric: Any = None) -> MetricClaim:
        """The claim :meth:`to_dict` wrote, over ``metric`` (its dict holds the metric's name only).

        ``from_dict(c.to_dict(), metric=c.metric) == c``; without ``metric`` an
        error says why it is needed.
        """
        check_kind(cls, data)
        if metric is None:
            raise MissingArgumentError(
                "metric",
                f"the WordMetric ({data.get('metric', '?')}): a metric claim's dict names its "
                "metric but cannot hold an embedding or a callable",
            )
        neighbouring = str(data.get("neighbouring", cls.neighbouring))
        return cls(float(data["epsilon"]), metric, neighbouring)
