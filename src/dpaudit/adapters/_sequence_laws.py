"""Exact privacy losses of token-by-token samplers, from the laws their code draws from.

The LM packages audited here (``invink``, ``dp-fusion-lib``) each hand one probability
vector over the vocabulary to a sampler at every step.  Recorded on ``x`` and, with the
same tokens forced, on ``x'``, those vectors give the exact privacy loss of the sampled
output, ``L(y) = Σ_t ln p_x(y_t | y_<t) − ln p_x'(y_t | y_<t)`` (the chain rule), and the
exact per-step divergences.  This module holds the arithmetic on such recordings.

Hockey-stick divergence from exact losses: for ``y ~ M(x)``,
``δ(ε) = E[(1 − e^{ε − L(y)})_+]`` (Balle et al., "Hypothesis testing interpretations and
Rényi DP", AISTATS 2020, Thm. 1 / eq. (5)); with ``m`` independent outputs the mean of the
``[0, 1]``-valued terms has a one-sided Hoeffding lower bound
``mean − sqrt(ln(1/α) / (2m))`` at confidence ``1 − α``.

Whether a recording is the law the code really draws from is checked on the draws
themselves (:func:`law_check`): the randomised probability integral transform of each
drawn token, ``u_t = F_t(y_t − 1) + V_t·p_t(y_t)`` (``F_t`` the recorded law's cumulative
sum in token order, ``V_t`` uniform), is uniform on [0, 1] and independent of the earlier
steps exactly when ``y_t`` was drawn from the recorded ``p_t`` (Brockwell, "Universal
residuals", Biometrika 2007); a Kolmogorov–Smirnov test of all steps' ``u_t`` against the
uniform law rejects a recording that missed a later change to the vector (a second draw,
a filter, a temperature).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats


def renyi_divergence(p: np.ndarray, q: np.ndarray, alpha: float) -> float:
    """``D_α(p ‖ q)`` in float64 (nats): ``ln Σ p^α q^{1−α} / (α − 1)``; ∞ off ``q``'s support."""
    p = np.asarray(p, np.float64)
    q = np.asarray(q, np.float64)
    p = p / p.sum()
    q = q / q.sum()
    on = p > 0
    if np.any(q[on] == 0):
        return math.inf
    log_terms = alpha * np.log(p[on]) + (1.0 - alpha) * np.log(q[on])
    top = float(log_terms.max())
    return (top + math.log(float(np.exp(log_terms - top).sum()))) / (alpha - 1.0)


def max_log_ratio(p: np.ndarray, q: np.ndarray) -> float:
    """``max_y |ln p(y)/q(y)|`` over the union of supports (∞ where one is 0, the other not)."""
    p = np.asarray(p, np.float64) / float(np.sum(p))
    q = np.asarray(q, np.float64) / float(np.sum(q))
    on = (p > 0) | (q > 0)
    if np.any((p[on] == 0) | (q[on] == 0)):
        return math.inf
    return float(np.max(np.abs(np.log(p[on]) - np.log(q[on]))))


@dataclass
class StepLaws:
    """The sampler's vectors on ``x`` and on ``x'`` at each step of one output of ``x``."""

    tokens: list[int] = field(default_factory=list)
    on_x: list[np.ndarray] = field(default_factory=list)
    on_x_prime: list[np.ndarray] = field(default_factory=list)

    def loss(self) -> float:
        """The exact privacy loss ``L(y)`` of this output (chain rule over the steps)."""
        total = 0.0
        for y, p, q in zip(self.tokens, self.on_x, self.on_x_prime, strict=True):
            pq = float(q[y]) / float(np.sum(q))
            if pq == 0.0:
                return math.inf
            total += math.log(float(p[y]) / float(np.sum(p))) - math.log(pq)
        return total

    def step_renyi(self, alpha: float) -> list[float]:
        """``max(D_α(p_x ‖ p_x'), D_α(p_x' ‖ p_x))`` at each step (both orders of the pair)."""
        return [
            max(renyi_divergence(p, q, alpha), renyi_divergence(q, p, alpha))
            for p, q in zip(self.on_x, self.on_x_prime, strict=True)
        ]

    def first_token_delta(self, epsilon: float) -> float:
        """Exact ``δ(ε)`` of the first token's law, both orders: a lower bound on the output's.

        The first token is a function of the drawn tokens, so its hockey-stick divergence
        ``Σ_y (p(y) − e^ε q(y))_+`` bounds that of the whole token sequence from below.
        """
        p = np.asarray(self.on_x[0], np.float64)
        q = np.asarray(self.on_x_prime[0], np.float64)
        p, q = p / p.sum(), q / q.sum()
        scale = math.exp(epsilon)
        return float(
            max(np.clip(p - scale * q, 0, None).sum(), np.clip(q - scale * p, 0, None).sum())
        )

    def step_max_log_ratio(self) -> list[float]:
        """The pure per-step loss ``max_y |ln p_x(y)/p_x'(y)|`` at each step."""
        return [max_log_ratio(p, q) for p, q in zip(self.on_x, self.on_x_prime, strict=True)]


def law_check(records: list[StepLaws], rng: np.random.Generator) -> dict[str, float]:
    """KS test of the drawn tokens' randomised PITs under the recorded laws (see module).

    ``{"steps": n, "ks_p_value": p}``: a small p says the tokens were not drawn from the
    laws recorded on ``x``; with few steps the test sees only gross differences.
    """
    u = []
    for record in records:
        for y, p in zip(record.tokens, record.on_x, strict=True):
            law = np.asarray(p, np.float64)
            law = law / law.sum()
            below = float(law[:y].sum())
            u.append(min(1.0, below + float(rng.random()) * float(law[y])))
    if not u:
        return {"steps": 0, "ks_p_value": math.nan}
    return {"steps": len(u), "ks_p_value": float(stats.kstest(u, "uniform").pvalue)}


def hockey_stick_bounds(
    losses: list[float], epsilon: float, confidence: float = 0.95
) -> dict[str, float]:
    """``δ(ε)`` from exact losses of ``m`` outputs of ``x``: the mean and its Hoeffding LCB."""
    if not losses:
        return {"delta_mean": math.nan, "delta_lcb": math.nan, "outputs": 0}
    terms = [1.0 if math.isinf(v) and v > 0 else max(0.0, -math.expm1(epsilon - v)) for v in losses]
    mean = float(np.mean(terms))
    margin = math.sqrt(math.log(1.0 / (1.0 - confidence)) / (2.0 * len(terms)))
    return {"delta_mean": mean, "delta_lcb": max(0.0, mean - margin), "outputs": len(terms)}
