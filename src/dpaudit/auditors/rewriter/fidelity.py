"""Does the code sample from the distribution it declares?  A randomised PIT test.

A rewriter's declared :class:`~dpaudit.mechanisms.rewriters.decoding.Decoding`
is a hint, never a fact: the audit checks it against outputs of the real
sampler.  For each sampled token ``y_t`` with declared distribution ``p_t``
(given the input and ``y_<t``), rank the vocabulary by declared probability
and take ``u_t = P_t(tokens ranked above y_t) + V·p_t(y_t)`` with ``V``
uniform on ``[0, 1)``.  When the sampler really draws from ``p_t``, the
``u_t`` of all tokens of all outputs are i.i.d. uniform (Rosenblatt 1952, the
randomised probability integral transform), so a Kolmogorov–Smirnov test
against ``U(0, 1)`` has exactly its level.  A token drawn where the
declaration gives probability zero is a mismatch outright.  A sampler that is
sharper than declared (a lower temperature, a hidden top-k) puts ``u`` near 0;
a flatter one spreads it towards 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FidelityCheck:
    """The outcome of checking real samples against the declared decoding.

    Attributes:
        tokens: sampled tokens tested.
        impossible_tokens: of them, drawn where the declaration gives probability 0.
        ks_statistic: Kolmogorov–Smirnov distance of the PIT values from uniform.
        p_value: the test's p-value (0 when an impossible token was drawn).
        level: the test's level; ``matches`` is ``p_value >= level``.
    """

    tokens: int
    impossible_tokens: int
    ks_statistic: float
    p_value: float
    level: float

    @property
    def matches(self) -> bool:
        """True when the test finds no mismatch at its level."""
        return self.impossible_tokens == 0 and self.p_value >= self.level

    def describe(self) -> str:
        """One line for reports."""
        if self.impossible_tokens:
            return (
                f"MISMATCH: {self.impossible_tokens} of {self.tokens} sampled tokens have "
                "probability 0 under the declared decoding"
            )
        word = "matches" if self.matches else "MISMATCH"
        return (
            f"{word}: randomised PIT of {self.tokens} sampled tokens, KS D = "
            f"{self.ks_statistic:.3g}, p = {self.p_value:.3g} (level {self.level:g})"
        )

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "tokens": self.tokens,
            "impossible_tokens": self.impossible_tokens,
            "ks_statistic": self.ks_statistic,
            "p_value": self.p_value,
            "level": self.level,
            "matches": self.matches,
        }


def randomised_pit(
    log_probs: np.ndarray, tokens: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """``u_t`` for each row ``t`` of ``log_probs`` (the declared log-distribution) and its token."""
    probs = np.exp(log_probs)
    rows = np.arange(len(tokens))
    p_token = probs[rows, tokens]
    above = np.where(probs > p_token[:, None], probs, 0.0).sum(axis=1)
    # Ties are ranked by token id, so the ordering is a fixed function of the declaration.
    ids = np.arange(probs.shape[1])[None, :]
    tied = (probs == p_token[:, None]) & (ids < tokens[:, None])
    above += np.where(tied, probs, 0.0).sum(axis=1)
    return np.clip(above + rng.random(len(tokens)) * p_token, 0.0, 1.0)


def check_fidelity(
    pit_values: np.ndarray, impossible_tokens: int, level: float = 1e-3
) -> FidelityCheck:
    """The KS test of PIT values against ``U(0, 1)`` at ``level``."""
    u = np.asarray(pit_values, dtype=np.float64)
    if u.size == 0:
        return FidelityCheck(0, impossible_tokens, float("nan"), float("nan"), level)
    from scipy import stats  # here: the result types import this module, scipy.stats costs 0.6 s

    result = stats.kstest(u, "uniform")
    p = 0.0 if impossible_tokens else float(result.pvalue)
    return FidelityCheck(int(u.size), int(impossible_tokens), float(result.statistic), p, level)
