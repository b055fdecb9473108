"""Truncated Gumbel mechanism (Carvalho et al., FLAIRS 2021).

For input ``w`` (Carvalho et al. 2021, Alg. 1):

1. draw the number of candidates ``k`` from a Poisson law with mean
   ``ln(|V| − 1)`` truncated to ``1..|V| − 1``;
2. take the ``k`` words nearest to ``w`` (``w`` itself first, at distance 0);
3. add to each candidate's distance an independent Gumbel(0, b) variable
   truncated to ``[−Δ_max, Δ_max]``, and output the candidate with the smallest
   noisy distance.

The scale follows the published calibration (as in the authors'
released code): ``a = (ε − 2(1 + ln|V|)/Δ_min)/3`` and
``b = 2Δ_max / min(W(2aΔ_max), ln(aΔ_min))`` (``W`` Lambert's function),
``Δ_min``/``Δ_max`` the smallest non-zero and the largest distance between
vocabulary words.  It is defined only when ``a·Δ_min > 1``, i.e. for
``ε > 2(1 + ln|V|)/Δ_min + 3/Δ_min``; smaller ε raise an error naming ε.
Claim: ``ε·d_euc``-privacy.  The output law has no closed form (random ``k``,
truncated noise); it is audited empirically.
"""

from __future__ import annotations

import dataclasses
import math
from functools import cached_property

import numpy as np

from dpaudit.analysis.word_embedding import WordEmbedding
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.registry import register
from dpaudit.mechanisms.word.base import EmbeddingWordMechanism


def distance_range(embedding: WordEmbedding) -> tuple[float, float]:
    """``(Δ_min, Δ_max)``: smallest non-zero and largest distance between vocabulary words."""
    m = embedding.matrix.astype(np.float64)
    sq = np.einsum("ij,ij->i", m, m)
    lo, hi = math.inf, 0.0
    step = max(1, (1 << 22) // embedding.size)
    for s in range(0, embedding.size, step):
        d2 = sq[s : s + step, None] + sq[None, :] - 2.0 * (m[s : s + step] @ m.T)
        d2 = np.maximum(d2, 0.0)
        hi = max(hi, float(d2.max()))
        pos = d2[d2 > 1e-12]
        if pos.size:
            lo = min(lo, float(pos.min()))
    return math.sqrt(lo), math.sqrt(hi)


@register
@dataclasses.dataclass(frozen=True, eq=False)
class TruncatedGumbel(EmbeddingWordMechanism):
    """Random number of nearest candidates, truncated-Gumbel noisy distances, argmin."""

    name = "truncated-gumbel"
    reference = "Carvalho et al., FLAIRS 2021 (truncated Gumbel noise on nearest-word distances)"
    summary = "Truncated Gumbel: noisy distances over a random number of nearest words"

    def __post_init__(self) -> None:
        super().__post_init__()
        _ = self.scale  # fail early when ε is below the calibration's range

    @cached_property
    def _range(self) -> tuple[float, float]:
        return distance_range(self.embedding)

    @cached_property
    def scale(self) -> float:
        """The Gumbel scale ``b`` of the published calibration."""
        d_min, d_max = self._range
        v = self.embedding.size
        a = (self.epsilon - 2.0 * (1.0 + math.log(v)) / d_min) / 3.0
        if a * d_min <= 1.0:
            least = 2.0 * (1.0 + math.log(v)) / d_min + 3.0 / d_min
            raise InvalidArgumentError(
                "epsilon", self.epsilon, f"> {least:.4g} for this vocabulary (calibration range)"
            )
        from scipy.special import lambertw  # lazy: keeps `import dpaudit` light

        w = float(lambertw(2.0 * a * d_max).real)
        return 2.0 * d_max / min(w, math.log(a * d_min))

    def _sample_rows(self, i: int, n: int, rng: np.random.Generator) -> np.ndarray:
        v = self.embedding.size
        k = _truncated_poisson(rng, math.log(v - 1), 1, v - 1, n)
        k_max = int(k.max())
        d = self.embedding.distances_from(i)
        near = np.argpartition(d, k_max - 1)[:k_max] if k_max < v else np.arange(v)
        near = near[np.argsort(d[near], kind="stable")]
        noisy = d[near][None, :] + _truncated_gumbel(rng, self.scale, self._range[1], (n, k_max))
        noisy[np.arange(k_max)[None, :] >= k[:, None]] = np.inf
        return near[np.argmin(noisy, axis=1)].astype(np.int64)


def _truncated_poisson(
    rng: np.random.Generator, mean: float, low: int, high: int, n: int
) -> np.ndarray:
    """Poisson(mean) conditioned on ``low ≤ k ≤ high`` (inverse CDF on the truncated support)."""
    from scipy.stats import poisson  # lazy: keeps `import dpaudit` light

    c_lo, c_hi = poisson.cdf(low - 1, mean), poisson.cdf(high, mean)
    u = c_lo + rng.random(n) * (c_hi - c_lo)
    k = poisson.ppf(u, mean)
    return np.clip(k, low, high).astype(np.int64)


def _truncated_gumbel(
    rng: np.random.Generator, scale: float, bound: float, shape: tuple[int, int]
) -> np.ndarray:
    """Gumbel(0, scale) conditioned on ``|g| ≤ bound`` (inverse CDF on the truncated range)."""
    f_lo = math.exp(-math.exp(bound / scale))
    f_hi = math.exp(-math.exp(-bound / scale))
    u = f_lo + rng.random(shape) * (f_hi - f_lo)
    return -scale * np.log(-np.log(u))
