"""Sample sizes of a command-line audit: fitted to ``--time-budget``, or estimated when given.

Every audit command that takes ``--samples``/``--final-samples`` and ``--time-budget``
(the black-box, word and whole-claim audits of ``dpaudit audit``) sizes itself here:
without sizes, timed pilot runs of the real audit fit them to the budget
(:func:`plan`, through :func:`dpaudit.engine.pilot.plan_sizes`) and the chosen sizes are
printed with the flags that repeat them; with explicit sizes, a slow audit's expected
duration is printed first (:func:`estimate`).  Either estimate is left in
``args.planned_seconds`` for :func:`dpaudit.progress.whole_run`, so the audit's stage bars
show what is left of it and say when the run falls behind.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from dpaudit import progress
from dpaudit.engine.pilot import (
    ESTIMATE_PILOT_SECONDS,
    ESTIMATE_START,
    FINAL_RATIO,
    SLOW_RUN_SECONDS,
    estimate_duration,
    plan_sizes,
    seconds_per_output,
)
from dpaudit.errors import InvalidArgumentError, MissingArgumentError

#: Seconds a default audit (no --samples/--final-samples) is sized to, on this machine.
DEFAULT_TIME_BUDGET = 120.0


def plan(
    args: argparse.Namespace,
    pilot: Callable[[int, int], Any],
    cap: int,
    pilot_samples: int,
    draw: Callable[[int], Any] | None = None,
    sized_seconds: Callable[[Any], float | None] | None = None,
    ratio: int = FINAL_RATIO,
) -> None:
    """Fill ``--samples``/``--final-samples`` from timed pilot runs when neither is given.

    ``cap``: the most selection samples planned; ``ratio``: final samples per selection
    sample (the black box's 10; the profile audit's counting is cheap, see
    :data:`dpaudit.cli.cmd_audit_profile.PLAN_RATIO`).

    The sizes are printed with the flags that repeat them exactly: a timed plan
    depends on the machine and its load, so a run to be resumed or compared
    names its sizes.  With explicit sizes and ``draw`` (``k`` outputs of the
    mechanism), a slow audit's expected duration is printed instead (:func:`estimate`;
    ``sized_seconds`` reads a pilot result's sampling time, see
    :func:`dpaudit.engine.pilot.estimate_duration`).
    """
    if args.samples is not None or args.final_samples is not None:
        if args.time_budget is not None:
            raise InvalidArgumentError(
                "--time-budget", args.time_budget, "no --samples/--final-samples beside it"
            )
        if draw is not None:
            estimate(args, pilot, draw, sized_seconds)
        return
    if getattr(args, "resume", False):
        raise MissingArgumentError(
            "--samples", "--resume needs the --samples and --final-samples the first run printed"
        )

    budget = DEFAULT_TIME_BUDGET if args.time_budget is None else args.time_budget
    shown, progress.ENABLED = progress.ENABLED, False  # the pilots' own bars would mislead
    try:
        sizes = plan_sizes(pilot, budget, pilot_samples=pilot_samples, ratio=ratio, max_samples=cap)
    finally:
        progress.ENABLED = shown
    args.samples, args.final_samples = sizes.samples, sizes.final_samples
    args.planned_seconds = sizes.estimated_seconds  # the stage bars carry it (progress.whole_run)
    if not getattr(args, "json", False):
        print(
            f"{sizes.describe()}; to repeat exactly: --samples {sizes.samples} "
            f"--final-samples {sizes.final_samples}",
            file=sys.stderr,
        )


def estimate(
    args: argparse.Namespace,
    pilot: Callable[[int, int], Any],
    draw: Callable[[int], Any],
    sized_seconds: Callable[[Any], float | None] | None = None,
) -> None:
    """Print the expected duration of a slow audit at explicit sizes before it starts.

    A quick probe times the mechanism's own sampling; when drawing the sizes'
    outputs for one pair alone would take more than ``SLOW_RUN_SECONDS``, timed
    pilots of the real audit (:func:`dpaudit.engine.pilot.estimate_duration`)
    give the expected duration, printed to stderr.  Fast mechanisms skip it
    (their runs are short and the progress bars say the rest).
    """
    samples = args.samples if args.samples is not None else max(args.final_samples // 10, 1)
    final = args.final_samples if args.final_samples is not None else 10 * args.samples
    per_output = seconds_per_output(draw)
    if per_output * 2 * (samples + final) <= SLOW_RUN_SECONDS:
        return
    # The first pilot should cost about a third of the pilots' time even for a slow
    # mechanism: its outputs are counted as if eight pairs were sampled.
    per_selection_sample = per_output * 2 * (1 + final / samples) * 8
    start = int(min(max(ESTIMATE_PILOT_SECONDS / 3 / per_selection_sample, 1), ESTIMATE_START))
    shown, progress.ENABLED = progress.ENABLED, False
    try:
        found = estimate_duration(pilot, samples, final, start=start, sized_seconds=sized_seconds)
    finally:
        progress.ENABLED = shown
    if found is not None:
        args.planned_seconds = found.estimated_seconds
    if found is not None and not getattr(args, "json", False):
        print(
            f"{found.describe()}; the mechanism costs ≈ {per_output * 1e6:.3g} µs per output",
            file=sys.stderr,
        )


#: Seconds a default white-box rewriter audit (no --samples/--final-samples) is sized to.
REWRITER_TIME_BUDGET = 180.0
#: Sizes of a rewriter audit given only one of --samples/--final-samples, or black box.
REWRITER_DEFAULT_SIZES = (100, 300)


def rewriter_sizes(args: argparse.Namespace) -> tuple[int, int] | None:
    """``--samples``/``--final-samples`` of a rewriter audit, or None to size it to the
    budget (neither given; white box or black box).  ``--time-budget`` beside explicit
    sizes is refused naming the flag; one size given alone takes the other's default."""
    given = args.samples is not None or args.final_samples is not None
    if args.time_budget is not None and given:
        raise InvalidArgumentError("--time-budget", args.time_budget, "no sizes beside it")
    if given:
        samples, final = REWRITER_DEFAULT_SIZES
        return (
            samples if args.samples is None else args.samples,
            final if args.final_samples is None else args.final_samples,
        )
    return None


def _fitted(args: argparse.Namespace, config: Any, plan: Any) -> Any:
    """``config`` at the sizes ``plan(budget)`` fits to ``--time-budget`` (default
    :data:`REWRITER_TIME_BUDGET`), with the pilots' progress bars off; the choice is
    printed (not with ``--json``)."""
    import dataclasses

    budget = REWRITER_TIME_BUDGET if args.time_budget is None else args.time_budget
    shown, progress.ENABLED = progress.ENABLED, False  # the pilots' own bars would mislead
    try:
        sizes = plan(budget)
    finally:
        progress.ENABLED = shown
    if not getattr(args, "json", False):
        print(f"audit-rewriter: {sizes.describe()}", flush=True)
    return dataclasses.replace(config, samples=sizes.samples, final_samples=sizes.final_samples)


def plan_text(
    args: argparse.Namespace, sampler: Any, pairs: Any, config: Any, embedder: Any, claim: Any
) -> Any:
    """A black-box text audit's ``config`` fitted to ``--time-budget`` by timed pilots of its
    training stage (:func:`_fitted`)."""
    from dpaudit.auditors.rewriter.blackbox import text_pilot
    from dpaudit.auditors.rewriter.sizing import plan_text_sizes

    units = args.max_new_tokens
    allowed = min(claim.allowed_loss(x, x_prime, units=units) for x, x_prime, _ in pairs)
    run = text_pilot(sampler, pairs, config, embedder)
    return _fitted(args, config, lambda budget: plan_text_sizes(
        run, pairs, budget, config.confidence, config.statements_per_pair, allowed
    ))  # fmt: skip


def plan_rewriter(args: argparse.Namespace, rewriter: Any, pairs: Any, config: Any) -> Any:
    """A white-box audit's ``config`` fitted to ``--time-budget`` by timed pilots of the real
    audit (:func:`_fitted`)."""
    from dpaudit.auditors.rewriter.sizing import plan_rewriter_sizes
    from dpaudit.auditors.rewriter.whitebox import pilot

    caps = [rewriter.length_cap(d) for x, x_prime, _ in pairs for d in (x, x_prime)]
    allowed = rewriter.claim.allowed_loss(units=max(caps))
    run = pilot(rewriter, pairs, config)
    return _fitted(args, config, lambda budget: plan_rewriter_sizes(
        run, pairs, budget, config.confidence, allowed
    ))  # fmt: skip
