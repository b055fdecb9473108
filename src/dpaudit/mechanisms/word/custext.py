"""CusText (Chen et al., Findings of ACL 2023): customised output sets per word.

1. *Output sets* (the mapping ``f_map``): take the vocabulary in order
   (most frequent first); the first word not yet assigned and its ``K − 1``
   nearest unassigned words (Euclidean in the embedding) form one set; every
   word of the set has that set as its output set.  The sets partition the
   vocabulary (the last one may be smaller).
2. *Sampling* (the sanitisation step): for input ``x`` with output set ``Y_x``, the
   utility ``u(x, y) = (d_max − d(x, y))/(d_max − d_min)`` is the distance
   normalised to ``[0, 1]`` over ``Y_x``, and
   ``p(y | x) ∝ exp(ε·u(x, y)/2)`` for ``y ∈ Y_x`` (sensitivity ``Δu = 1``).

Claim (the paper's privacy theorem): ε-DP for any two inputs sharing an output set — a
:class:`~dpaudit.analysis.word_metrics.PartitionMetric` with ``d = 1`` inside a
set, ``inf`` across sets.  True: ``|u(x,y) − u(x',y)| ≤ 1``, so the loss is at
most ``ε/2 + ε/2 = ε``.
"""

from __future__ import annotations

import dataclasses
from functools import cached_property

import numpy as np

from dpaudit.analysis.word_metrics import PartitionMetric
from dpaudit.claims import MetricClaim
from dpaudit.mechanisms.base import parameter
from dpaudit.mechanisms.registry import register
from dpaudit.mechanisms.word.exponential import ExponentialWordMechanism
from dpaudit.validation import check_int


@register
@dataclasses.dataclass(frozen=True, eq=False)
class CusText(ExponentialWordMechanism):
    """CusText: exponential mechanism on normalised distance within customised output sets."""

    name = "custext"
    reference = "Chen et al., Findings of ACL 2023 (f_map output sets, normalised-utility EM)"
    summary = "CusText: ε-DP among the K words of each customised output set"

    k: int = parameter(20, doc="size K of each output set")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("k", self.k, minimum=1, maximum=self.embedding.size)

    @cached_property
    def group_of(self) -> np.ndarray:
        """Output-set label of every vocabulary row (the mapping ``f_map``)."""
        emb = self.embedding
        v = emb.size
        label = np.full(v, -1, dtype=np.int64)
        vectors = emb.matrix.astype(np.float64)
        g = 0
        for i in range(v):
            if label[i] >= 0:
                continue
            free = np.flatnonzero(label < 0)
            diff = vectors[free] - vectors[i]
            d = np.einsum("ij,ij->i", diff, diff)
            take = free[np.argsort(d, kind="stable")[: self.k]]
            label[take] = g
            g += 1
        return label

    @property
    def claim(self) -> MetricClaim:
        """ε-DP among the words of each output set."""
        groups = {w: int(g) for w, g in zip(self.embedding.words, self.group_of, strict=True)}
        return MetricClaim(
            self.epsilon,
            PartitionMetric(groups),
            neighbouring="two words with the same output set (ε-DP within each set)",
        )

    def log_weights(self, i: int) -> np.ndarray:
        """``ε·u(x, y)/2`` on the output set of ``x``, ``-inf`` elsewhere."""
        emb = self.embedding
        members = np.flatnonzero(self.group_of == self.group_of[i])
        diff = emb.matrix[members].astype(np.float64) - emb.matrix[i].astype(np.float64)
        d = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        span = d.max() - d.min()
        u = (d.max() - d) / span if span > 0 else np.ones_like(d)
        lw = np.full(emb.size, -np.inf)
        lw[members] = 0.5 * self.epsilon * u
        return self._with_specials(lw)
