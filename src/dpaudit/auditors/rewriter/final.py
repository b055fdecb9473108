"""The white-box rewriter audit's final stage: fresh rewrites scored exactly, counted by the core.

Every proposed set is ``{y : L(y) > c}`` or ``{y : −L(y) > c}`` with ``L(y) = ln p(y|x) −
ln p(y|x')``, the exact log-likelihood ratio of a rewrite under the two documents of its
pair (the Neyman–Pearson sets).  The core's one counting unit
(:mod:`dpaudit.auditors.core.counting`) draws each document's fresh rewrites through
:class:`LogRatioDraw` — the code under audit, then teacher forcing under both documents —
and counts the :class:`LogRatioAbove` events on the ``L`` values.  Each document of pair
``i`` has its own stream, ``(seed, i, REWRITE_FINAL, side)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.auditors.rewriter.exact import token_losses
from dpaudit.auditors.rewriter.result import TextSampler
from dpaudit.errors import InvalidArgumentError

__all__ = ["LogRatioAbove", "LogRatioDraw", "drawer"]


def drawer(rewriter: Any, sampler: TextSampler | None) -> Callable[..., list[np.ndarray]]:
    """How rewrites are drawn: the separate ``sampler`` (the code under audit) as token ids,
    or the rewriter's own sampler."""
    if sampler is None:
        return rewriter.sample_ids

    def draw(document: str, n: int, rng: np.random.Generator) -> list[np.ndarray]:
        outputs = list(sampler(document, n, rng))
        if len(outputs) != n:
            raise InvalidArgumentError("sampler", f"<{len(outputs)} outputs>", f"{n} outputs")
        if all(isinstance(t, np.ndarray) for t in outputs):
            return [np.asarray(t, dtype=np.int64) for t in outputs]  # token ids: scored as drawn
        if not all(isinstance(t, str) for t in outputs):
            raise InvalidArgumentError("sampler", "<mixed outputs>", "strings or token-id arrays")
        return [rewriter.encode_output(t, document) for t in outputs]

    return draw


@dataclass(frozen=True)
class LogRatioDraw:
    """The core's draw of a rewriter: rewrites of one document of a pair, as their ``L``.

    The input is ``(x, x', side)``: ``side`` 0 draws rewrites of ``x``, 1 of ``x'``; each
    rewrite's value is ``ln p(y|x) − ln p(y|x')`` under the declared (or recorded) law.
    """

    rewriter: Any
    sampler: TextSampler | None

    def __call__(self, pair: tuple[str, str, int], rows: int, rng: np.random.Generator) -> Any:
        """``rows`` fresh rewrites' exact log-likelihood ratios."""
        x, x_prime, side = pair
        rewriter = self.rewriter
        drawn = drawer(rewriter, self.sampler)(x if side == 0 else x_prime, rows, rng)
        if side == 0:
            # As the selection stage scores them: the drawn tokens' declared log-probabilities.
            lp_x: list[np.ndarray] = [np.zeros(0)] * len(drawn)
            for i, lp in rewriter.declared_log_probs(x, drawn):
                lp_x[i] = lp[np.arange(len(drawn[i])), drawn[i]]
        else:
            lp_x = rewriter.token_log_probs(x, drawn)
        losses = token_losses(lp_x, rewriter.token_log_probs(x_prime, drawn))
        return np.array([float(np.sum(t)) for t in losses])

    def describe(self, pair: tuple[str, str, int]) -> str:
        """What drawing on one document of the pair runs, for messages."""
        x, x_prime, side = pair
        return f"final rewrites of {(x, x_prime)[side]!r} scored under {x!r} and {x_prime!r}"


@dataclass(frozen=True)
class LogRatioAbove:
    """The set ``{y : sign·L(y) > threshold}`` on blocks of ``L`` values (``sign`` ±1)."""

    threshold: float
    sign: int

    def __call__(self, values: np.ndarray) -> np.ndarray:
        """One flag per rewrite."""
        return (values if self.sign > 0 else -values) > self.threshold
