"""Sizes of a white-box rewriter audit fitted to a time budget, spent where they change the verdict.

A white-box audit has two stages per pair: training rewrites (drawn, scored exactly under
both documents, checked against the declaration, and used to choose the likelihood-ratio
sets) and final rewrites (drawn and scored again, to certify the sets on fresh draws).  Both
cost about the same per rewrite: two generations and four teacher-forced scorings per pair.
A pilot on the first pair times that cost; the budget then buys ``n`` rewrites per document
over both stages, and they are split by what can change the verdict:

* when ``n`` final rewrites could certify more than the claim allows the audited rewrites
  (a per-document claim, or a small per-token one), most go to the final stage, which is
  what certifies; the training stage gets a quarter, at most :data:`MAX_TRAINING`;
* when even all of them could not (``n·ε`` for a per-token claim over long rewrites), the
  certificate is *inconclusive* whatever the split, and the verdict rests on the exact
  losses: three quarters go to the training rewrites, whose exact losses can refute the
  claim, and the rest still certify what they can.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dpaudit.auditors.core.certify import split_error
from dpaudit.auditors.core.power import certifiable_ceiling
from dpaudit.engine.pilot import round_down, secant
from dpaudit.errors import InvalidArgumentError

#: The fewest rewrites per document a stage takes (``RewriterAuditConfig``'s minimum).
MIN_REWRITES = 10
#: The most training rewrites when the final stage is what certifies.
MAX_TRAINING = 200
#: Rewrites per document of the two timed pilots (the first also pays for warm-up).
PILOT_REWRITES = (2, 6)
#: Share of the budget kept free for what the pilot cannot see (the certification's
#: bookkeeping, a slower pair).
MARGIN = 0.1


@dataclass(frozen=True)
class RewriterSizes:
    """The sizes chosen, what they cost and what they can show.

    ``seconds_per_rewrite``: one rewrite per document of one pair at one stage (the
    pilot's slope); ``fixed_seconds``: a stage's cost per pair at no rewrites; ``ceiling``:
    the largest ε the final rewrites can certify; ``allowed``: what the claim allows the
    longest audited rewrite; ``certificate_decides``: ``ceiling > allowed``.
    """

    samples: int
    final_samples: int
    budget_seconds: float
    estimated_seconds: float
    pilot_seconds: float
    seconds_per_rewrite: float
    fixed_seconds: float
    ceiling: float
    allowed: float
    certificate_decides: bool
    fits: bool

    def describe(self) -> str:
        """What was chosen and what it can see, for the line before the result."""
        flags = f"--samples {self.samples} --final-samples {self.final_samples}"
        head = (
            f"sized to the {self.budget_seconds:g} s budget ({flags}; about "
            f"{self.estimated_seconds:.0f} s, from a {self.pilot_seconds:.1f} s pilot at "
            f"{self.seconds_per_rewrite:.3g} s per rewrite and document)"
        )
        if not self.fits:
            head += "; the budget is too small for more than the fewest rewrites"
        ceiling, allowed = f"{self.ceiling:.3g}", _fmt(self.allowed)
        if self.certificate_decides:
            return (
                f"{head}: the final rewrites can certify ε ≥ {ceiling}, above the {allowed} "
                "the claim allows, so most of the budget goes to them"
            )
        return (
            f"{head}: no final stage that fits can certify the {allowed} the claim allows "
            f"(at most ε ≥ {ceiling}), so the verdict rests on the exact losses and most of "
            "the budget goes to the rewrites they are scored on"
        )


def plan_rewriter_sizes(
    pilot: Any,
    pairs: Sequence[tuple[str, str, str]],
    budget_seconds: float,
    confidence: float,
    allowed: float,
) -> RewriterSizes:
    """Sizes for a white-box audit of ``pairs`` within ``budget_seconds``.

    ``pilot(n)`` scores ``n`` rewrites per document of the first pair at one stage (the real
    audit's work, its result discarded); ``allowed``: the loss the claim allows the longest
    audited rewrite.
    """
    if not (math.isfinite(budget_seconds) and budget_seconds > 0):
        raise InvalidArgumentError("--time-budget", budget_seconds, "a number of seconds > 0")
    started = time.perf_counter()
    points = []
    for n in PILOT_REWRITES:
        t0 = time.perf_counter()
        pilot(n)
        points.append((n, time.perf_counter() - t0))
    spent = time.perf_counter() - started
    fixed, slope = secant(points)
    n1, t1 = points[-1]
    if slope < t1 / n1 / 4:  # a flat secant (the first pilot paid for warm-up) kept honest
        slope = t1 / n1 / 4
        fixed = max(t1 - slope * n1, 0.0)
    per_pair = (budget_seconds * (1 - MARGIN) - spent) / len(pairs)
    total = int((per_pair - 2 * fixed) / slope)  # rewrites per document, both stages
    fits = total >= 2 * MIN_REWRITES
    total = max(total, 2 * MIN_REWRITES)
    error = split_error(1.0 - confidence, 2 * len(pairs))
    decides = certifiable_ceiling(total - MIN_REWRITES, error) > allowed
    if decides:
        samples = min(max(total // 4, MIN_REWRITES), MAX_TRAINING)
    else:
        samples = max(total - max(total // 4, MIN_REWRITES), MIN_REWRITES)
    samples, final = _round(samples), _round(total - samples)
    return RewriterSizes(
        samples=samples,
        final_samples=final,
        budget_seconds=float(budget_seconds),
        estimated_seconds=spent + len(pairs) * (2 * fixed + slope * (samples + final)),
        pilot_seconds=spent,
        seconds_per_rewrite=slope,
        fixed_seconds=fixed,
        ceiling=certifiable_ceiling(final, error),
        allowed=float(allowed),
        certificate_decides=decides,
        fits=fits,
    )


def _round(n: int) -> int:
    """``n`` rounded down to two significant digits, at least :data:`MIN_REWRITES`."""
    return max(round_down(n), MIN_REWRITES)


def _fmt(v: float) -> str:
    return "any loss" if math.isinf(v) else f"{v:.4g}"


__all__ = ["RewriterSizes", "plan_rewriter_sizes"]
