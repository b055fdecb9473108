"""Noisy-embedding mechanisms: perturb the word's vector, map back to the nearest word(s).

* **CMP** (Feyisetan et al., WSDM 2020, Alg. 1): ``φ̂ = φ(w) + z`` with
  noise density ``∝ exp(−ε‖z‖₂)`` in R^d (sampled as a uniform direction
  times a ``Gamma(d, 1/ε)`` radius), output the vocabulary word nearest to
  ``φ̂``.  Claim: ``ε·d_euc``-privacy (its d_χ-privacy theorem).  True: ``φ̂`` is
  ``ε·d``-private and the nearest-word map is post-processing.
* **Mahalanobis** (Xu et al., PrivateNLP@EMNLP 2020, Alg. 1): the same with
  elliptical noise ``z = Σ_R^{1/2}·(Gamma(d, 1/ε)·uniform direction)``,
  ``Σ_R = λΣ̃ + (1 − λ)I``; claim: ``ε·d_R``-privacy for the
  regularised Mahalanobis distance ``d_R(w, w') = ‖Σ_R^{-1/2}(φ(w) − φ(w'))‖``
  (:class:`~dpaudit.analysis.word_metrics.MahalanobisMetric`).
* **Vickrey** (Xu et al., EACL 2021, its selection rule): the noisy vector as in CMP
  (or Mahalanobis, ``noise=mahalanobis``); with ``y₁, y₂`` its two nearest
  words at distances ``d₁ ≤ d₂``, output ``y₁`` with probability
  ``(1 − t)·d₂ / (t·d₁ + (1 − t)·d₂)``, else ``y₂``.  Claim: that of the noise
  (``ε·d_euc`` or ``ε·d_R``) — the choice uses ``φ̂`` only, so it is
  post-processing.

Nearest words come from :meth:`WordEmbedding.nearest_from` (blocked BLAS
products over the words that the triangle inequality leaves possible).
"""

from __future__ import annotations

import dataclasses
from functools import cached_property

import numpy as np

from dpaudit.analysis.word_metrics import (
    MahalanobisMetric,
    check_lambda,
    regularised_covariance_root,
)
from dpaudit.claims import MetricClaim
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import parameter
from dpaudit.mechanisms.registry import register
from dpaudit.mechanisms.word.base import EmbeddingWordMechanism, sample_multivariate_laplace


@register
@dataclasses.dataclass(frozen=True, eq=False)
class CMP(EmbeddingWordMechanism):
    """Multivariate Laplace noise on the embedding, then the nearest word."""

    name = "cmp"
    reference = "Feyisetan et al., WSDM 2020, Alg. 1 (multivariate Laplace + nearest word)"
    summary = "CMP: φ(w) + noise ∝ exp(−ε‖z‖), nearest word (ε·d_euc-privacy)"

    def noisy_points(self, i: int, n: int, rng: np.random.Generator) -> np.ndarray:
        """``φ(w) + z`` for ``n`` draws of the noise."""
        z = sample_multivariate_laplace(rng, n, self.embedding.dim, self.epsilon)
        return self.embedding.matrix[i].astype(np.float64) + z

    def _sample_rows(self, i: int, n: int, rng: np.random.Generator) -> np.ndarray:
        idx, _ = self.embedding.nearest_from(i, self.noisy_points(i, n, rng))
        return idx[:, 0]


@register
@dataclasses.dataclass(frozen=True, eq=False)
class Mahalanobis(CMP):
    """Elliptical noise shaped by the regularised covariance ``Σ_R``, then the nearest word."""

    name = "mahalanobis"
    reference = "Xu et al., PrivateNLP@EMNLP 2020, Alg. 1 (regularised Mahalanobis noise)"
    summary = "Mahalanobis: φ(w) + Σ_R^{1/2}·noise, nearest word (ε·d_R-privacy)"

    lam: float = parameter(0.2, doc="weight λ of the covariance in Σ_R", cli="lambda")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_lambda(self.lam)

    @cached_property
    def _root(self) -> np.ndarray:
        return regularised_covariance_root(self.embedding, self.lam)

    @property
    def claim(self) -> MetricClaim:
        """``ε·d_R``-privacy."""
        return MetricClaim(self.epsilon, MahalanobisMetric(self.embedding, lam=self.lam))

    def noisy_points(self, i: int, n: int, rng: np.random.Generator) -> np.ndarray:
        """``φ(w) + Σ_R^{1/2}·z``."""
        z = sample_multivariate_laplace(rng, n, self.embedding.dim, self.epsilon)
        return self.embedding.matrix[i].astype(np.float64) + z @ self._root.T


@register
@dataclasses.dataclass(frozen=True, eq=False)
class Vickrey(EmbeddingWordMechanism):
    """Choose between the two words nearest to the noisy vector (second-price idea)."""

    name = "vickrey"
    reference = "Xu et al., EACL 2021 (Vickrey: 1st/2nd nearest word with threshold t)"
    summary = "Vickrey: 1st or 2nd nearest word of the noisy vector, threshold t"

    t: float = parameter(0.75, doc="threshold t in [0, 1] (0: always the nearest word)")
    noise: str = parameter(
        "euclidean", doc="noise of the vector", choices=("euclidean", "mahalanobis")
    )
    lam: float = parameter(0.2, doc="λ of Σ_R for noise=mahalanobis", cli="lambda")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 <= self.t <= 1.0:
            raise InvalidArgumentError("t", self.t, "a threshold in [0, 1]")
        if self.noise not in ("euclidean", "mahalanobis"):
            raise InvalidArgumentError("noise", self.noise, "euclidean or mahalanobis")
        check_lambda(self.lam)

    @cached_property
    def _base(self) -> CMP:
        if self.noise == "mahalanobis":
            return Mahalanobis(self.epsilon, self.embedding, lam=self.lam)
        return CMP(self.epsilon, self.embedding)

    @property
    def claim(self) -> MetricClaim:
        """The noise's claim (post-processing)."""
        return self._base.claim

    def _sample_rows(self, i: int, n: int, rng: np.random.Generator) -> np.ndarray:
        pts = self._base.noisy_points(i, n, rng)
        idx, dist = self.embedding.nearest_from(i, pts, k=2)
        d1, d2 = dist[:, 0], dist[:, 1]
        den = self.t * d1 + (1.0 - self.t) * d2
        with np.errstate(invalid="ignore", divide="ignore"):
            p_first = np.where(den > 0, (1.0 - self.t) * d2 / den, 1.0 - self.t)
        first = rng.random(n) < p_first
        return np.where(first, idx[:, 0], idx[:, 1])
