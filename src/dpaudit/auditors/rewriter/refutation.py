"""A rewrite whose exact loss under the recorded law exceeds the claim: a refutation, not a bound.

Pure DP requires ``p(y | x) ≤ e^a · p(y | x')`` for *every* output ``y``, where ``a`` is what
the claim allows ``y`` (``n·ε`` for a rewrite of ``n`` tokens under an ε-per-token claim).  One
scored rewrite with ``ln p(y|x) − ln p(y|x') > a`` therefore refutes the claim on its own, with
no sampling error, provided the probabilities are the code's own.  That holds for a
:class:`~dpaudit.mechanisms.rewriters.recorded.RecordedRewriter`, whose probabilities were
recorded from the user's call as it ran.  Under a *declaration* the same arithmetic describes
the declaration, and a test that did not reject it is no proof that the code follows it, so a
declared rewriter's exact loss stays a finding beside the certified verdict.

Float32 rounding of the code's own softmax moves a log-probability by about 10⁻⁶; an excess
counts only beyond :data:`ROUNDING` relative to the loss allowed.  Approximate claims (δ > 0)
need the mass of such outputs, which the certified statements measure: no refutation here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dpaudit.witness import Witness, WitnessKind

#: Relative excess below which a loss above the claim is put down to float32 rounding.
ROUNDING = 1e-4


@dataclass(frozen=True)
class ExactRefutation:
    """The worst scored rewrite against the claim: its pair, excess and worst token."""

    witness: Witness
    excess: float
    text: str


def exact_refutation(detail: Any) -> ExactRefutation | None:
    """The refutation a recorded white-box audit of a pure claim found, or None."""
    if detail.mode != "white-box" or not detail.recorded or detail.text_claim.delta > 0:
        return None
    per_unit = detail.text_claim.epsilon
    best = None
    for pair in detail.pairs:
        if not (pair.covered and pair.fidelity.matches):
            continue
        for loss, a, b in (
            (pair.forward, pair.x, pair.x_prime),
            (pair.backward, pair.x_prime, pair.x),
        ):
            tolerance = ROUNDING * (1.0 + per_unit * max(1, len(loss.worst.token_losses)))
            if loss.max_excess > tolerance and (
                best is None or loss.max_excess > best[0].max_excess
            ):
                best = (loss, a, b, pair.origin)
    if best is None:
        return None
    loss, a, b, origin = best
    worst = loss.worst
    excess = "∞" if math.isinf(loss.max_excess) else f"{loss.max_excess:.4g}"
    token = "∞" if math.isinf(worst.loss) else f"{worst.loss:.4g}"
    reason = (
        worst.reason
        or "the call never produces this rewrite for x′: a token outside its support there, "
        "or a length at which it does not stop"
        if math.isinf(worst.loss)
        else f"a token loss above the claim's {per_unit:g} per {detail.text_claim.unit.value}"
    )
    event = (
        f"rewrites scored by the call's recorded law: ln p(y|x) − ln p(y|x′) exceeds what the "
        f"claim allows y by {excess}; worst token {worst.token!r} at position {worst.position} "
        f"of {worst.output!r} (loss {token}: {reason})"
    )
    witness = Witness(WitnessKind.ANALYTIC, a, b, event, loss.document_quantiles[-1],
                      pair_origin=origin)  # fmt: skip
    text = (
        f"the call's own recorded law gives a rewrite of {a!r} a loss against {b!r} that "
        f"exceeds the claim by {excess} (worst token {worst.token!r} at position "
        f"{worst.position}, loss {token}: {reason})"
    )
    return ExactRefutation(witness, loss.max_excess, text)


__all__ = ["ROUNDING", "ExactRefutation", "exact_refutation"]
