"""SanText and SanText+ (Yue et al., Findings of ACL-IJCNLP 2021).

**SanText**: every word ``x`` is replaced by ``y``
drawn from the whole vocabulary with

    p(y | x) = exp(−ε·d(x, y)/2) / Σ_{y'} exp(−ε·d(x, y')/2),

``d`` the Euclidean distance of the embeddings; claimed ``ε·d``-privacy
(metric local DP).  True: ``|ln p(y|x) − ln p(y|x')| ≤ ε/2·(|d(x,y) − d(x',y)|)
+ ε/2·d(x, x') ≤ ε·d(x, x')`` by the triangle inequality.

**SanText+**: the ``w`` least frequent fraction of the
vocabulary is *sensitive* (``V_S``; GloVe rows are in frequency order, so the
last rows).  Outputs are drawn from ``V_S`` only, with the same weights
``exp(−ε·d/2)``.  A sensitive word is always replaced; a non-sensitive word is
replaced with probability ``p`` and kept with probability ``1 − p``.  The claim
is ``ε·d``-privacy among sensitive words (the metric covers ``V_S`` only): a
kept non-sensitive word is identified exactly, which the paper accepts by
design.
"""

from __future__ import annotations

import dataclasses
from functools import cached_property

import numpy as np

from dpaudit.analysis.word_metrics import EuclideanMetric
from dpaudit.claims import MetricClaim
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.base import parameter
from dpaudit.mechanisms.registry import register
from dpaudit.mechanisms.word.exponential import ExponentialWordMechanism


@register
@dataclasses.dataclass(frozen=True, eq=False)
class SanText(ExponentialWordMechanism):
    """SanText: exponential mechanism with utility ``−d_euc`` over the vocabulary."""

    name = "santext"
    reference = "Yue et al., Findings of ACL-IJCNLP 2021 (SanText: EM on −d_euc over all words)"
    summary = "SanText: p(y|x) ∝ exp(−ε·d(x,y)/2) over all words (ε·d-privacy)"

    def log_weights(self, i: int) -> np.ndarray:
        """``−ε·d(x, y)/2`` for every word ``y``."""
        return self._with_specials(-0.5 * self.epsilon * self.embedding.distances_from(i))


@register
@dataclasses.dataclass(frozen=True, eq=False)
class SanTextPlus(ExponentialWordMechanism):
    """SanText+: outputs from the sensitive words only; non-sensitive words kept w.p. 1 − p."""

    name = "santext+"
    reference = "Yue et al., Findings of ACL-IJCNLP 2021 (SanText+: sensitive words, probability p)"
    summary = "SanText+: sensitive words always replaced, others with probability p"

    p: float = parameter(0.3, doc="probability of replacing a non-sensitive word")
    w: float = parameter(0.9, doc="fraction of sensitive (least frequent) words")

    def __post_init__(self) -> None:
        super().__post_init__()
        for key in ("p", "w"):
            value = getattr(self, key)
            if not 0.0 <= value <= 1.0:
                raise InvalidArgumentError(key, value, "a probability in [0, 1]")
        if self.n_sensitive < 1:
            raise InvalidArgumentError("w", self.w, "a fraction giving at least one sensitive word")

    @property
    def n_sensitive(self) -> int:
        """``|V_S| = round(w·V)``: the last rows of the (frequency-ordered) vocabulary."""
        return round(self.w * self.embedding.size)

    @cached_property
    def sensitive_words(self) -> frozenset[str]:
        """``V_S``."""
        return frozenset(self.embedding.words[self.embedding.size - self.n_sensitive :])

    @property
    def claim(self) -> MetricClaim:
        """``ε·d_euc``-privacy among sensitive words."""
        return MetricClaim(
            self.epsilon,
            EuclideanMetric(self.embedding, covered=self.sensitive_words),
            neighbouring="any two sensitive words; the bound scales with d(w, w')",
        )

    def log_weights(self, i: int) -> np.ndarray:
        """EM over ``V_S``, mixed with a point mass on the input for non-sensitive words."""
        v = self.embedding.size
        first_sensitive = v - self.n_sensitive
        lw = -0.5 * self.epsilon * self.embedding.distances_from(i)
        lw[:first_sensitive] = -np.inf
        lw -= np.logaddexp.reduce(lw[first_sensitive:])
        if i < first_sensitive:  # non-sensitive: replaced with probability p only
            with np.errstate(divide="ignore"):
                lw = lw + np.log(self.p)
                lw[i] = np.log1p(-self.p)
        return self._with_specials(lw)
