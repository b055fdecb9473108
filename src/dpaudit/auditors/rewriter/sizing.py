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

A black-box text audit (:func:`plan_text_sizes`) has no exact losses: only its final
rewrites can refute the claim.  Its pilot draws and reads rewrites as the training stage
does; the budget buys ``n`` rewrites per document, of which a quarter (at most
:data:`MAX_TEXT_TRAINING`) choose the sets and the rest certify them, up to
:data:`MAX_TEXT_FINAL`.  When not even all of them could certify what the claim allows,
the verdict is *inconclusive* at any size that fits, so the audit runs at
:data:`TEXT_SMALL_SIZES` for the reviewer's checks instead of spending the budget on
rewrites that cannot change its verdict, and says so.
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
#: Black box: the largest pilot, and the seconds below which a pilot grows 4× (a sampler
#: that costs microseconds is timed on enough rewrites to see its slope).
MAX_PILOT_REWRITES = 2048
TEXT_PILOT_SECONDS = 0.25
#: Black box: the most training rewrites per document (they only choose the sets).
MAX_TEXT_TRAINING = 2000
#: Black box: the most final rewrites per document (kept in memory as strings).
MAX_TEXT_FINAL = 50_000
#: Black box: the sizes of an audit whose claim no final stage that fits can refute.
TEXT_SMALL_SIZES = (100, 300)


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
    black_box: bool = False
    capped: bool = False
    #: Black box: the largest ε the largest final stage that fits could certify.
    budget_ceiling: float | None = None

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
        if self.black_box and not self.certificate_decides:
            reach = f"{self.budget_ceiling:.3g}" if self.budget_ceiling is not None else ceiling
            return (
                f"{head}: no final stage that fits can certify the {allowed} the claim allows "
                f"(at most ε ≥ {reach}), so the audit is inconclusive at any size that fits "
                "and runs at these small sizes for the reviewer's checks"
            )
        if self.black_box:
            cap = (
                f" (capped at {MAX_TEXT_FINAL} final rewrites, which the budget would exceed)"
                if self.capped
                else ""
            )
            return (
                f"{head}: the final rewrites can certify ε ≥ {ceiling}, above the {allowed} "
                f"the claim allows{cap}"
            )
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
    spent, fixed, slope = _timed(pilot)
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
    timing = (float(budget_seconds), spent, fixed, slope, len(pairs))
    return _sizes(samples, final, timing, error, allowed, decides, fits)


def _sizes(
    samples: int,
    final: int,
    timing: tuple[float, float, float, float, int],
    error: float,
    allowed: float,
    decides: bool,
    fits: bool,
    **black_box: Any,
) -> RewriterSizes:
    """The chosen sizes with what they cost and can show; ``timing``: the budget, the
    pilot's seconds, fixed cost and slope, and the pairs; ``black_box``: its own fields."""
    budget, spent, fixed, slope, pairs = timing
    return RewriterSizes(
        samples=samples,
        final_samples=final,
        budget_seconds=budget,
        estimated_seconds=spent + pairs * (2 * fixed + slope * (samples + final)),
        pilot_seconds=spent,
        seconds_per_rewrite=slope,
        fixed_seconds=fixed,
        ceiling=certifiable_ceiling(final, error),
        allowed=float(allowed),
        certificate_decides=decides,
        fits=fits,
        **black_box,
    )


def _timed(pilot: Any, grow_until: float = 0.0) -> tuple[float, float, float]:
    """The pilot run at :data:`PILOT_REWRITES`, then at 4× larger sizes while the last took
    under ``grow_until`` seconds (a cheap sampler, whose small pilots time only overhead, up
    to :data:`MAX_PILOT_REWRITES`): its seconds, and the fixed cost and slope of the secant
    through the last two (a flat secant, where a pilot paid for warm-up, kept honest)."""
    started = time.perf_counter()
    points: list[tuple[int, float]] = []

    def run(n: int) -> None:
        t0 = time.perf_counter()
        pilot(n)
        points.append((n, time.perf_counter() - t0))

    for n in PILOT_REWRITES:
        run(n)
    while points[-1][1] < grow_until and 4 * points[-1][0] <= MAX_PILOT_REWRITES:
        run(4 * points[-1][0])
    spent = time.perf_counter() - started
    fixed, slope = secant(points[-2:])
    n1, t1 = points[-1]
    if slope < t1 / n1 / 4:
        slope = t1 / n1 / 4
        fixed = max(t1 - slope * n1, 0.0)
    return spent, fixed, slope


def plan_text_sizes(
    pilot: Any,
    pairs: Sequence[tuple[str, str, str]],
    budget_seconds: float,
    confidence: float,
    statements_per_pair: int,
    allowed: float,
) -> RewriterSizes:
    """Sizes for a black-box text audit of ``pairs`` within ``budget_seconds`` (module
    docstring).  ``pilot(n)`` draws and reads ``n`` rewrites of both documents of the first
    pair; ``allowed``: what the claim allows the longest output."""
    if not (math.isfinite(budget_seconds) and budget_seconds > 0):
        raise InvalidArgumentError("--time-budget", budget_seconds, "a number of seconds > 0")
    spent, fixed, slope = _timed(pilot, TEXT_PILOT_SECONDS)
    per_pair = (budget_seconds * (1 - MARGIN) - spent) / len(pairs)
    total = int((per_pair - 2 * fixed) / slope)  # the secant's slope is always > 0
    fits = total >= 2 * MIN_REWRITES
    total = min(max(total, 2 * MIN_REWRITES), MAX_TEXT_TRAINING + MAX_TEXT_FINAL)
    error = split_error(1.0 - confidence, statements_per_pair * len(pairs))
    samples = min(max(total // 4, MIN_REWRITES), MAX_TEXT_TRAINING)
    final = min(total - samples, MAX_TEXT_FINAL)
    capped = total - samples > MAX_TEXT_FINAL
    reach = certifiable_ceiling(final, error)
    decides = reach > allowed
    if not decides:
        samples, final = (
            min(n, m) for n, m in zip(TEXT_SMALL_SIZES, (samples, final), strict=True)
        )
    samples, final = _round(samples), _round(final)
    timing = (float(budget_seconds), spent, fixed, slope, len(pairs))
    return _sizes(
        samples, final, timing, error, allowed, decides, fits,
        black_box=True, capped=capped and decides, budget_ceiling=reach,
    )  # fmt: skip


def _round(n: int) -> int:
    """``n`` rounded down to two significant digits, at least :data:`MIN_REWRITES`."""
    return max(round_down(n), MIN_REWRITES)


def _fmt(v: float) -> str:
    return "any loss" if math.isinf(v) else f"{v:.4g}"


__all__ = ["RewriterSizes", "plan_rewriter_sizes", "plan_text_sizes"]
