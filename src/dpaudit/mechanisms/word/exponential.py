"""Exponential-mechanism word sanitisers: the output distribution is known exactly.

``p(y | w) ∝ exp(ε·u(w, y)/2)`` over a set of output words (McSherry & Talwar,
FOCS 2007, with utility ``u``).  Subclasses give the unnormalised
log-weights of every outcome code (:meth:`ExponentialWordMechanism.log_weights`,
``-inf`` outside the support); sampling is by inverse CDF on the normalised
distribution (one ``searchsorted`` per block, no per-sample Python), and
:meth:`output_log_probs` exposes the exact distribution to
:mod:`dpaudit.analysis.word_loss` — which computes the *true* loss of a pair,
``max_y |ln p(y|w) − ln p(y|w')|``, for comparison with ``ε·d(w, w')``.
"""

from __future__ import annotations

import dataclasses
from abc import abstractmethod

import numpy as np

from dpaudit.mechanisms.word.base import (
    N_SPECIAL,
    UNCHANGED,
    EmbeddingWordMechanism,
    sample_from_log_probs,
)


@dataclasses.dataclass(frozen=True, eq=False)
class ExponentialWordMechanism(EmbeddingWordMechanism, abstract=True):
    """Base of TEM, SanText(+) and CusText: exact log-probabilities, inverse-CDF sampling."""

    @abstractmethod
    def log_weights(self, i: int) -> np.ndarray:
        """Unnormalised log-probabilities of all ``V + N_SPECIAL`` codes for row ``i``."""

    def row_log_probs(self, i: int) -> np.ndarray:
        """Normalised log-probabilities of all codes for vocabulary row ``i``."""
        lw = self.log_weights(i)
        top = np.max(lw)
        return lw - (top + np.log(np.sum(np.exp(lw - top))))  # log-sum-exp, stable

    def output_log_probs(self, word: str) -> np.ndarray:
        """Exact log-probabilities of all codes for ``word`` (OOV: UNCHANGED with probability 1)."""
        i = self.embedding.index(word)
        if i < 0:
            out = np.full(self.embedding.size + N_SPECIAL, -np.inf)
            out[self.embedding.size + UNCHANGED] = 0.0
            return out
        return self.row_log_probs(i)

    def _sample_rows(self, i: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return sample_from_log_probs(self.log_weights(i), n, rng)

    def _with_specials(self, log_w_vocab: np.ndarray) -> np.ndarray:
        """Append ``-inf`` for the special codes (built-in mechanisms never produce them)."""
        return np.concatenate([log_w_vocab, np.full(N_SPECIAL, -np.inf)])
