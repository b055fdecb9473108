"""Exact privacy loss of word mechanisms whose output distribution is computable.

For a mechanism with exact output probabilities ``p(y | w)`` (the
exponential-mechanism family: TEM, SanText, SanText+, CusText), the privacy
loss of a pair is

    L(w, w') = max_y |ln p(y | w) − ln p(y | w')|

(``inf`` when one input can produce an output the other cannot), attained at a
witness output ``y``.  A metric-DP claim allows ``ε·d(w, w')``; the pair
*violates* it when ``L > ε·d``, and the *ratio* ``L / (ε·d)`` says by how much.

:func:`exact_metric_truth` evaluates every pair of a small vocabulary
(``exhaustive``) or the given pairs (the CLI passes those of the geometric
search, :mod:`dpaudit.auditors.metric.pairs`), and reports the worst ratio with its
witness.  Over given pairs the worst case is a lower bound on the true worst
case (the method says so).

The mechanism is used through three attributes only — ``output_log_probs(w)``
(exact log-probabilities of every outcome code, or None), ``vocabulary`` (a
:class:`~dpaudit.analysis.word_embedding.WordEmbedding`) and ``claim`` (a
:class:`~dpaudit.claims.MetricClaim`) — so this module needs no mechanism code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.analysis.word_embedding import outcome_name
from dpaudit.errors import InvalidArgumentError

#: Vocabularies up to this size are analysed over all pairs by default.
EXHAUSTIVE_LIMIT = 400


@dataclass(frozen=True)
class PairLoss:
    """Exact loss of one pair, the output that attains it, and the claim's allowance."""

    w: str
    w_prime: str
    distance: float
    allowed_loss: float
    loss: float
    witness_output: str
    ratio: float
    violates: bool


@dataclass(frozen=True)
class MetricTruth:
    """The worst pair (by ratio ``L/(ε·d)``) among ``pairs_evaluated``, and how it was found."""

    mechanism: dict[str, object]
    claim: str
    method: str
    pairs_evaluated: int
    worst: PairLoss | None
    worst_loss: PairLoss | None
    violating_pairs: int
    top: tuple[PairLoss, ...]

    @property
    def violation(self) -> bool:
        """True when some evaluated pair's exact loss exceeds ``ε·d``."""
        return self.violating_pairs > 0


def pair_loss(mechanism: Any, w: str, w_prime: str) -> PairLoss:
    """Exact ``L(w, w')`` with its witness output, against the claim's ``ε·d(w, w')``."""
    lp, lq = _log_probs(mechanism, w), _log_probs(mechanism, w_prime)
    return pair_loss_of_laws(mechanism, w, w_prime, (lp, lq), mechanism.claim.distance(w, w_prime))


def _log_probs(mechanism: Any, w: str) -> np.ndarray:
    lp = mechanism.output_log_probs(w)
    if lp is None:
        raise InvalidArgumentError(
            "mechanism", mechanism.name, "a mechanism with a computable output distribution"
        )
    return np.asarray(lp, dtype=np.float64)


def pair_loss_of_laws(
    mech: Any, w: str, w_prime: str, laws: tuple[np.ndarray, np.ndarray], d: float
) -> PairLoss:
    """:func:`pair_loss` from the two words' log-probabilities ``laws`` already at hand."""
    lp, lq = laws
    both = np.isfinite(lp) & np.isfinite(lq)
    only = np.isfinite(lp) ^ np.isfinite(lq)
    if np.any(only):
        y = int(np.flatnonzero(only)[0])
        loss = math.inf
    else:
        with np.errstate(invalid="ignore"):  # −inf − (−inf) where neither can output y
            diff = np.where(both, np.abs(lp - lq), 0.0)
        y = int(np.argmax(diff))
        loss = float(diff[y])
    eps = mech.claim.epsilon
    allowed = math.inf if math.isinf(d) else (0.0 if d == 0 else eps * d)
    ratio = math.inf if allowed == 0 and loss > 0 else (loss / allowed if allowed else 0.0)
    if math.isinf(allowed):
        ratio = 0.0
    violates = loss > allowed * (1 + 1e-9) + 1e-12
    return PairLoss(w, w_prime, d, allowed, loss, outcome_name(mech.vocabulary, y), ratio, violates)


def exact_metric_truth(
    mechanism: Any,
    pairs: tuple[tuple[str, str], ...] = (),
    exhaustive: bool | None = None,
    top: int = 10,
) -> MetricTruth:
    """Worst exact loss ratio over all pairs (small vocabularies) and/or the given pairs.

    ``exhaustive`` defaults to ``V ≤`` :data:`EXHAUSTIVE_LIMIT`; without it only
    ``pairs`` are evaluated (at least one is then needed).
    """
    emb = mechanism.vocabulary
    if exhaustive is None:
        exhaustive = emb.size <= EXHAUSTIVE_LIMIT
    cand = list(pairs)
    if exhaustive:
        words = emb.words
        cand += [(words[i], words[j]) for i in range(emb.size) for j in range(i + 1, emb.size)]
        method = f"exact, exhaustive over all {emb.size * (emb.size - 1) // 2} word pairs"
    elif not cand:
        raise InvalidArgumentError("pairs", "none", "word pairs (or exhaustive=True)")
    else:
        method = (
            f"exact over {len(cand)} given pairs (e.g. from the geometric search): a lower "
            f"bound on the worst case over all pairs"
        )
    cache: dict[str, np.ndarray] = {}

    def lp(w: str) -> np.ndarray:
        if w not in cache:
            cache[w] = _log_probs(mechanism, w)
        return cache[w]

    dist = mechanism.claim.metric.distances([a for a, _ in cand], [b for _, b in cand])
    results = [
        pair_loss_of_laws(mechanism, a, b, (lp(a), lp(b)), float(d))
        for (a, b), d in zip(cand, dist, strict=True)
    ]
    covered = [r for r in results if math.isfinite(r.allowed_loss)]
    by_ratio = sorted(covered, key=lambda r: -r.ratio)
    worst = by_ratio[0] if by_ratio else None
    worst_loss = max(covered, key=lambda r: r.loss) if covered else None
    return MetricTruth(
        mechanism=mechanism.spec(),
        claim=mechanism.claim.describe(),
        method=method,
        pairs_evaluated=len(results),
        worst=worst,
        worst_loss=worst_loss,
        violating_pairs=sum(r.violates for r in covered),
        top=tuple(by_ratio[:top]),
    )
