"""Metrics on words for metric-DP claims (:class:`dpaudit.claims.MetricClaim`).

* :class:`EuclideanMetric` — ``d(w, w') = ‖φ(w) − φ(w')‖₂`` over an embedding
  (Feyisetan et al., WSDM 2020: d_χ-privacy with the Euclidean distance);
* :class:`MahalanobisMetric` — the regularised Mahalanobis distance
  ``d_R(w, w') = ‖Σ_R^{-1/2}(φ(w) − φ(w'))‖₂`` with ``Σ_R = λΣ̃ + (1 − λ)I``
  (Xu et al., PrivateNLP@EMNLP 2020), ``Σ̃`` the embedding's
  covariance scaled to mean variance 1;
* :class:`CosineMetric` — ``1 − cos(φ(w), φ(w'))``, the cosine distance many
  embedding-based mechanisms rank candidates by (SanText's and CusText's similarity);
* :class:`RankMetric` — ``max(r_w(w'), r_{w'}(w))``, ``r_w(w')`` the place of ``w'``
  among ``w``'s nearest words (1 for the nearest), the distance of rank-based
  claims ("within the k nearest words");
* :class:`PartitionMetric` — ``0`` for a word and itself, ``1`` inside a group,
  ``inf`` across groups: an ε-DP claim among the words of one group (CusText);
* :class:`CallableMetric` — any user function ``d(w, w')``.

Every metric answers ``distances(a, b)`` for two equal-length word lists,
``inf`` for a pair it does not constrain (``covered`` restricts a metric to
some words: SanText+ claims its bound among sensitive words only).  Words out
of the embedding's vocabulary are not covered.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpaudit.analysis.word_embedding import WordEmbedding
from dpaudit.errors import InvalidArgumentError


class WordMetric(ABC):
    """A distance between words; ``inf`` where the claim says nothing."""

    name: str = "d"

    @abstractmethod
    def distances(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """``d(a[i], b[i])`` for each ``i`` (float64)."""

    @abstractmethod
    def describe(self) -> str:
        """A short human-readable description."""


@dataclass(frozen=True, eq=False)
class _EmbeddingMetric(WordMetric):
    embedding: WordEmbedding
    covered: frozenset[str] | None = None

    def _rows(
        self, a: Sequence[str], b: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if len(a) != len(b):
            raise InvalidArgumentError("b", f"<{len(b)} words>", f"{len(a)} words (as a)")
        ia, ib = self.embedding.indices(a), self.embedding.indices(b)
        ok = (ia >= 0) & (ib >= 0)
        if self.covered is not None:
            ok &= np.array(
                [x in self.covered and y in self.covered for x, y in zip(a, b, strict=True)], bool
            )
        return ia, ib, ok

    def _scope(self) -> str:
        extra = "" if self.covered is None else f", among {len(self.covered)} covered words"
        return f"over {self.embedding.describe()}{extra}"

    def distances(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        ia, ib, ok = self._rows(a, b)
        out = np.full(len(a), math.inf)
        if np.any(ok):
            out[ok] = self._between(ia[ok], ib[ok])
        same = np.array([x == y for x, y in zip(a, b, strict=True)], dtype=bool)
        out[same] = 0.0
        return out

    def _between(self, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        """The distance of the covered pairs of rows ``(ia[k], ib[k])``: ‖φ − φ'‖₂ here."""
        diff = self._vectors(ia) - self._vectors(ib)
        return np.sqrt(np.einsum("ij,ij->i", diff, diff))

    def _vectors(self, rows: np.ndarray) -> np.ndarray:
        return self.embedding.matrix[rows].astype(np.float64)


@dataclass(frozen=True, eq=False)
class EuclideanMetric(_EmbeddingMetric):
    """``‖φ(w) − φ(w')‖₂`` over ``embedding`` (optionally only among ``covered`` words)."""

    name: str = "Euclidean"

    def describe(self) -> str:
        """E.g. ``Euclidean over glove-6B-50d (20000 words, d = 50)``."""
        return f"Euclidean distance {self._scope()}"


@dataclass(frozen=True, eq=False)
class MahalanobisMetric(_EmbeddingMetric):
    """Regularised Mahalanobis ``d_R`` (Xu et al. 2020) with weight ``lam`` on Σ̃."""

    lam: float = 0.2
    normalisation: str = "trace"
    name: str = "Mahalanobis d_R"
    _whiten: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        check_lambda(self.lam)
        root = regularised_covariance_root(self.embedding, self.lam, self.normalisation)
        object.__setattr__(self, "_whiten", np.linalg.inv(root))

    def _vectors(self, rows: np.ndarray) -> np.ndarray:
        return self.embedding.matrix[rows].astype(np.float64) @ self._whiten.T

    def describe(self) -> str:
        """E.g. ``regularised Mahalanobis d_R (λ = 0.2) over …``."""
        return f"regularised Mahalanobis d_R (λ = {self.lam:g}) {self._scope()}"


@dataclass(frozen=True, eq=False)
class CosineMetric(_EmbeddingMetric):
    """``1 − cos(φ(w), φ(w'))`` over ``embedding`` (0 for a word and itself, at most 2)."""

    name: str = "cosine"

    def _between(self, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        u, v = self._vectors(ia), self._vectors(ib)
        norms = np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1)
        cos = np.einsum("ij,ij->i", u, v) / np.where(norms > 0, norms, 1.0)
        return np.clip(1.0 - cos, 0.0, 2.0)

    def describe(self) -> str:
        """E.g. ``cosine distance 1 − cos over glove-6B-50d (…)``."""
        return f"cosine distance 1 − cos {self._scope()}"


@dataclass(frozen=True, eq=False)
class RankMetric(_EmbeddingMetric):
    """``max(r_w(w'), r_{w'}(w))``: each word's place among the other's nearest (Euclidean)."""

    name: str = "rank"

    def _between(self, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        pairs = zip(ia, ib, strict=True)
        return np.array([max(self._rank(i, j), self._rank(j, i)) for i, j in pairs], float)

    def _rank(self, i: int, j: int) -> float:
        """1 + the number of other words strictly closer to word ``i`` than word ``j`` is."""
        d = self.embedding.distances_from(int(i))
        closer = np.count_nonzero(d < d[j]) - (1 if d[i] < d[j] else 0)  # not i itself
        return float(closer + 1)

    def describe(self) -> str:
        """E.g. ``neighbour rank over glove-6B-50d (…)``."""
        return f"neighbour rank max(r_w(w'), r_w'(w)) (Euclidean order) {self._scope()}"


def check_lambda(value: float) -> float:
    """The weight λ of Σ in ``Σ_R``: a number in [0, 1], or an error naming ``lambda``."""
    if not 0.0 <= value <= 1.0:
        raise InvalidArgumentError("lambda", value, "a weight in [0, 1]")
    return value


#: How Σ is scaled before regularisation: by its mean variance tr(Σ)/d, or by the
#: variance of all matrix entries (as mldp-text does).
NORMALISATIONS = ("trace", "variance")


def regularised_covariance_root(
    embedding: WordEmbedding, lam: float, normalisation: str = "trace"
) -> np.ndarray:
    """``Σ_R^{1/2}`` with ``Σ_R = λΣ̃ + (1 − λ)I`` (Xu et al. 2020; symmetric root).

    ``Σ̃`` is the embedding's covariance divided by its mean variance
    ``tr(Σ)/d`` (``normalisation="trace"``), so that ``Σ_R`` keeps the scale of
    the identity for any λ; ``"variance"`` divides by the variance of all
    entries of the matrix instead.
    """
    if normalisation not in NORMALISATIONS:
        raise InvalidArgumentError("normalisation", normalisation, "trace or variance")
    sigma = embedding.covariance()
    if normalisation == "trace":
        sigma = sigma / (np.trace(sigma) / sigma.shape[0])
    else:
        sigma = sigma / float(np.var(embedding.matrix.astype(np.float64)))
    sigma_r = lam * sigma + (1.0 - lam) * np.eye(sigma.shape[0])
    vals, vecs = np.linalg.eigh(sigma_r)
    vals = np.maximum(vals, 1e-12)
    return (vecs * np.sqrt(vals)) @ vecs.T


@dataclass(frozen=True, eq=False)
class PartitionMetric(WordMetric):
    """``0`` for equal words, ``1`` within a group, ``inf`` across groups or for unknown words.

    With it, ``ε·d`` is a plain ε-DP claim among the words of each group
    (CusText, Chen et al., ACL Findings 2023, Def. 3).
    """

    groups: dict[str, int]
    label: str = "same output set"
    name: str = "partition"

    def distances(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        if len(a) != len(b):
            raise InvalidArgumentError("b", f"<{len(b)} words>", f"{len(a)} words (as a)")
        out = np.empty(len(a))
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            gx, gy = self.groups.get(x), self.groups.get(y)
            out[i] = 0.0 if x == y else (1.0 if gx is not None and gx == gy else math.inf)
        return out

    def describe(self) -> str:
        """E.g. ``1 within the same output set, inf otherwise``."""
        return f"1 for two words in the {self.label}, inf otherwise (ε-DP within each set)"


@dataclass(frozen=True, eq=False)
class CallableMetric(WordMetric):
    """A user function ``fn(w, w') -> float`` (non-negative; ``inf`` allowed)."""

    fn: Callable[[str, str], float]
    name: str = "user metric"

    def distances(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        if len(a) != len(b):
            raise InvalidArgumentError("b", f"<{len(b)} words>", f"{len(a)} words (as a)")
        out = np.array([float(self.fn(x, y)) for x, y in zip(a, b, strict=True)], dtype=float)
        if np.any(np.isnan(out)) or np.any(out < 0):
            raise InvalidArgumentError("metric", self.name, "a function returning d >= 0")
        return out

    def describe(self) -> str:
        """The metric's name."""
        return self.name


def plain_dp_metric(words: Sequence[str]) -> PartitionMetric:
    """``d = 1`` for any two different words of ``words``: ``ε·d`` is plain ε-DP over words.

    For word mechanisms that claim ordinary ε-DP (e.g. SynTF, Weggenmann &
    Kerschbaum, SIGIR 2018) but are audited word by word like the metric ones.
    """
    return PartitionMetric({w: 0 for w in words}, label="vocabulary")
