"""``dpaudit sanity-check``: the ACL 2022 reconstruction sanity check on one mechanism.

Runs the mechanism ``--runs`` times on n zeros and on n ones, guesses the input
by per-coordinate rounding and majority vote, and reports the 2×2 table, the
paper's empirical loss and a Clopper–Pearson ε lower bound (Habernal, ACL 2022, §4).
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any

import numpy as np

from dpaudit import progress
from dpaudit.auditors.sanity.check import PATHS, TIE_RULES
from dpaudit.cli.common import (
    add_mechanism_args,
    add_run_args,
    add_seed,
    build_mechanism,
    emit_verdict,
    run_recorded,
)
from dpaudit.cli.main import command_help
from dpaudit.cli.parser import integer, positive_seconds
from dpaudit.results.audit import AuditResult


def register(sub: Any) -> None:
    """Add the ``sanity-check`` sub-command."""
    p = sub.add_parser(
        "sanity-check",
        help=command_help("sanity-check"),
        description=__doc__,
    )
    add_mechanism_args(p)
    p.add_argument(
        "--runs",
        type=integer,
        default=None,
        help="runs per input (default: fitted to --time-budget from a timed pilot: 1e6, or "
        "more where the pilot's loss is above the claim and more runs would certify it)",
    )
    p.add_argument(
        "--time-budget",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="without --runs: the seconds the check may take (default 60); the runs chosen "
        "are printed",
    )
    add_seed(p)
    p.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="confidence of the ε lower bound, in (0, 1) (default 0.95)",
    )
    p.add_argument(
        "--tie-rule",
        choices=TIE_RULES,
        default="half-even",
        help="majority vote on a tie: half-even (tie -> 0, as the reference), half-up, random",
    )
    p.add_argument(
        "--path",
        choices=PATHS,
        default="auto",
        help="fused (additive mechanisms, fast), generic (mech.sample), or auto (default)",
    )
    p.add_argument(
        "--fail-on-violation", action="store_true", help="exit 1 when a violation is found"
    )
    add_run_args(p)
    p.set_defaults(func=run)


def _render(result: AuditResult) -> str:
    d = result.detail
    (f00, f01), (f10, f11) = d.counts
    width = max(len(f"{v:,}") for v in (f00, f01, f10, f11)) + 2
    pct = f"{result.confidence:.0%}" if result.confidence * 100 % 1 == 0 else result.confidence
    lines = [
        f"sanity check: {result.claim}",
        f"  {d.runs:,} runs per input, n = {d.dim}, {d.path} path, "
        f"tie rule {d.tie_rule}, seed {result.seed}",
        "",
        f"  {'':<10}{'guess 0':>{width}}{'guess 1':>{width}}",
        f"  {'x = 0^n':<10}{f00:>{width},}{f01:>{width},}",
        f"  {'x = 1^n':<10}{f10:>{width},}{f11:>{width},}",
        "",
        f"  empirical loss (MLE, ACL 2022 §4): {d.empirical_loss:.6g}",
        f"  ε lower bound at {pct} (Clopper–Pearson, Bonferroni over 4 candidates): "
        f"{result.epsilon_lower_bound:.6g}",
    ]
    if result.witness is not None:
        lines.append(f"    witness: {result.witness.describe()}")
    lines += [f"  {f.describe()}" for f in result.declaration_findings]
    lines += [f"  note: {note}" for note in result.notes]
    lines += [
        f"  {result.verdict_text}",
        f"  time: {result.timing['total']:.2f} s "
        f"({result.timing['coordinates_per_second'] / 1e6:.3g} M output coordinates drawn/s, "
        f"{'white-box: declared transform' if d.path == 'fused' else 'black-box: sampler'})",
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run the sanity check and print the result."""
    mech = build_mechanism(args)
    _size(args, mech)
    result = run_recorded(args, "sanity-check", lambda execution: _check(args, mech, execution))
    hint = _stronger_audit_hint(args, mech, result.violation)
    return emit_verdict(args, result, lambda r: _render(r) + hint, result.violation)


#: Seconds a sanity check given no --runs may take.
DEFAULT_TIME_BUDGET = 60.0


def _size(args: argparse.Namespace, mech: Any) -> None:
    """Fill ``args.runs`` from timed pilots when it is not given (printed, not with --json)."""
    from dpaudit.api import SanityConfig, audit
    from dpaudit.auditors.sanity.sizing import plan_sanity_runs
    from dpaudit.errors import InvalidArgumentError, MissingArgumentError

    if args.runs is not None:
        if args.time_budget is not None:
            raise InvalidArgumentError("--time-budget", args.time_budget, "no --runs beside it")
        return
    if getattr(args, "resume", False):
        raise MissingArgumentError("--runs", "--resume needs the --runs the first run printed")
    pilot_seed = int(np.random.SeedSequence([args.seed, PILOT_TAG]).generate_state(1)[0])

    def pilot(runs: int) -> Any:
        config = SanityConfig(runs, seed=pilot_seed, confidence=args.confidence,
                              tie_rule=args.tie_rule, path=args.path)  # fmt: skip
        return audit(mech, method="sanity", config=config).detail.counts

    budget = DEFAULT_TIME_BUDGET if args.time_budget is None else args.time_budget
    shown, progress.ENABLED = progress.ENABLED, False  # the pilots' own bars would mislead
    try:
        sizes = plan_sanity_runs(pilot, args.epsilon, budget, args.confidence)
    finally:
        progress.ENABLED = shown
    args.runs = sizes.runs
    if not getattr(args, "json", False):
        print(f"sanity-check: {sizes.describe()}", flush=True)


#: The pilots' seed is derived from the run's seed and this tag: a stream of their own.
PILOT_TAG = 61


def _check(args: argparse.Namespace, mech: Any, execution: Any) -> AuditResult:
    """The sanity check through the one entry (imported here: the entry loads scipy)."""
    from dpaudit.api import SanityConfig, audit

    config = SanityConfig(
        args.runs,
        seed=args.seed,
        confidence=args.confidence,
        tie_rule=args.tie_rule,
        path=args.path,
    )
    return audit(mech, method="sanity", config=config, execution=execution)


def _stronger_audit_hint(args: argparse.Namespace, mech: Any, violation: bool) -> str:
    """For a known-flawed mechanism the sanity check missed: the exact stronger audit to run.

    The sanity check tries only the two inputs 0^n and 1^n with one fixed test;
    a flaw elsewhere needs the black-box audit, which searches pairs and events.
    """
    if violation or not getattr(type(mech), "known_flawed", False):
        return ""
    parts = ["dpaudit", "audit", shlex.quote(args.mechanism), "--epsilon", f"{args.epsilon:g}"]
    if args.delta is not None:
        parts += ["--delta", f"{args.delta:g}"]
    if args.dim is not None:
        parts += ["--dim", str(args.dim)]
    if args.domain is not None:
        parts += ["--domain", shlex.quote(args.domain)]
    for param in args.param:
        parts += ["-p", shlex.quote(param)]
    return (
        "\n  hint: `dpaudit mechanisms` marks this mechanism known-flawed; this check tries only"
        f" x = 0^n against x' = 1^n. A stronger test: {' '.join(parts)}"
    )
