"""The exact privacy loss of rewrites, by teacher forcing under both inputs.

For a rewriter that draws every token from a distribution computable from the
model, the privacy loss of an output ``y`` between inputs ``x`` and ``x'`` is
``Σ_t ln p(y_t | x, y_<t) − ln p(y_t | x', y_<t)``: exact, not estimated.  A
claim of ε per token allows at most ε per token and ``n·ε`` for a rewrite of
``n`` tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

QUANTILES = (0.5, 0.9, 0.99, 1.0)


@dataclass(frozen=True)
class WorstToken:
    """The token of largest loss among the rewrites scored, with what came before it."""

    output: str
    position: int
    token: str
    context: str
    loss: float
    token_losses: tuple[float, ...]
    #: Why the other document gives the token probability 0, where the law is the code's own
    #: (a recorded call) and the loss is infinite; else empty.
    reason: str = ""


@dataclass(frozen=True)
class ExactLoss:
    """The exact losses of rewrites of ``x`` scored against ``x'``.

    Attributes:
        outputs: rewrites scored.
        document_quantiles: quantiles (50 %, 90 %, 99 %, max) of the per-rewrite loss.
        max_token_loss: the largest single-token loss seen.
        max_excess: the largest ``L(y) − allowed(|y|)`` over the rewrites (> 0: the claim
            is broken at that output, under the declared decoding).
        worst: the worst token, in context.
        analytic_token_bound: the largest per-token loss the decoding allows any two
            inputs (``inf`` when nothing bounds it: no clipping, greedy, top-k, top-p).
    """

    outputs: int
    document_quantiles: tuple[float, ...]
    max_token_loss: float
    max_excess: float
    worst: WorstToken
    analytic_token_bound: float


def token_losses(lp_x: list[np.ndarray], lp_x_prime: list[np.ndarray]) -> list[np.ndarray]:
    """Per-token losses ``ln p(y_t|x,·) − ln p(y_t|x',·)`` (``+inf`` where ``x'`` cannot)."""
    with np.errstate(invalid="ignore"):
        return [np.where(a == b, 0.0, a - b) for a, b in zip(lp_x, lp_x_prime, strict=True)]


def summarise(
    rewriter: Any,
    outputs: list[np.ndarray],
    losses: list[np.ndarray],
    allowed_per_unit: float,
    other: str | None = None,
) -> ExactLoss:
    """The :class:`ExactLoss` of ``outputs`` given their per-token ``losses``.

    ``other``: the document the outputs were scored against; with it, a rewriter that can
    say why a token is impossible there (``why_impossible``, a recorded call) names the
    reason of an infinite worst loss.
    """
    doc = np.array([float(np.sum(t)) for t in losses])
    excess = doc - allowed_per_unit * np.array([len(t) for t in losses])
    flat = [(float(t.max()) if t.size else -math.inf) for t in losses]
    i = int(np.argmax(flat)) if flat else 0
    pos = int(np.argmax(losses[i])) if losses[i].size else 0
    ids = outputs[i]
    worst = WorstToken(
        output=rewriter.decode(ids),
        position=pos,
        token=rewriter.tokenizer.decode([int(ids[pos])]) if ids.size else "",
        context=rewriter.tokenizer.decode([int(t) for t in ids[:pos]]),
        loss=flat[i],
        token_losses=tuple(float(v) for v in losses[i]),
        reason=_reason(rewriter, other, ids, pos, flat[i]),
    )
    return ExactLoss(
        outputs=len(outputs),
        document_quantiles=tuple(
            float(np.quantile(doc, q, method="inverted_cdf")) for q in QUANTILES
        ),
        max_token_loss=float(max(flat)),
        max_excess=float(excess.max()),
        worst=worst,
        analytic_token_bound=analytic_bound(rewriter),
    )


def _reason(rewriter: Any, other: str | None, ids: np.ndarray, pos: int, loss: float) -> str:
    why = getattr(rewriter, "why_impossible", None)
    if other is None or why is None or not (math.isinf(loss) and loss > 0) or not ids.size:
        return ""
    return str(why(other, ids, pos))


def analytic_bound(rewriter: Any) -> float:
    """The largest per-token loss the rewriter's declared law allows any two inputs: its own
    ``analytic_token_bound()`` where it has one (a candidate set), else its decoding's at the
    model's vocabulary size."""
    own = getattr(rewriter, "analytic_token_bound", None)
    if callable(own):
        return float(own())
    vocab = int(rewriter.model.model.config.vocab_size)
    return float(rewriter.decoding.exact_worst_token_loss(vocab))
