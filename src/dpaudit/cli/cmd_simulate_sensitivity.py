"""``dpaudit simulate-sensitivity``: pairs of clipped vectors that break ADePT's 2C claim.

Reproduces the simulation behind Fig. 1 of Habernal (EMNLP 2021, §6): per
dimension, the fraction of random pairs of norm-clipped vectors whose L1
distance exceeds the claimed sensitivity, with an exact confidence interval.
"""

from __future__ import annotations

import argparse
from typing import Any

from dpaudit.auditors.sensitivity.simulation import (
    DISTRIBUTIONS,
    NORMAL_SCALES,
    SensitivitySimulationResult,
    simulate_sensitivity,
)
from dpaudit.cli.common import EXIT_OK, add_run_args, add_seed, emit, run_recorded
from dpaudit.cli.main import command_help
from dpaudit.cli.parser import integer
from dpaudit.errors import InvalidArgumentError


def _clip_norm(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InvalidArgumentError("--clip-norm", text, "a number >= 1 or inf") from None


def register(sub: Any) -> None:
    """Add the ``simulate-sensitivity`` sub-command."""
    p = sub.add_parser(
        "simulate-sensitivity",
        help=command_help("simulate-sensitivity"),
        description=__doc__,
    )
    p.add_argument("--distribution", choices=DISTRIBUTIONS, default="uniform")
    p.add_argument(
        "--dims", default="1-64", help="dimensions, e.g. 1-64, 1,2,8 or 1-8,16 (default 1-64)"
    )
    p.add_argument(
        "--pairs", type=integer, default=10_000, help="pairs per dimension (default 1e4)"
    )
    p.add_argument("--bound", type=float, default=10.0, help="clipping bound C (default 10)")
    p.add_argument(
        "--clip-norm",
        type=str,
        default="2",
        help="norm used for clipping: 2 (ADePT), 1 (the remedy), any p >= 1 or inf",
    )
    p.add_argument(
        "--claimed-sensitivity",
        type=float,
        default=None,
        help="L1 sensitivity claimed (default 2C, ADePT's Theorem 3.2)",
    )
    p.add_argument(
        "--normal-scale",
        choices=NORMAL_SCALES,
        default="std",
        help="normal: std 0.1*C (reference code, default) or variance 0.1*C (paper text)",
    )
    p.add_argument(
        "--confidence", type=float, default=0.95, help="level of each interval (default 0.95)"
    )
    add_seed(p)
    add_run_args(p)
    p.set_defaults(func=run)


def _render(result: SensitivitySimulationResult) -> str:
    scale = ""
    if result.distribution == "normal":
        scale = f", std {result.sampling_std:g} ({result.normal_scale} reading)"
    lines = [
        f"{result.distribution} vectors{scale}, clipped to L{result.clip_norm:g} norm "
        f"{result.bound:g}; claim: L1 distance <= {result.claimed_sensitivity:g}; "
        f"{result.pairs:,} pairs per dim",
        f"{'dim':>5}  {'violating':>10}  {result.confidence:.0%} interval",
    ]
    for r in result.results:
        note = f"  (+{r.boundary} within rounding of the claim)" if r.boundary else ""
        lines.append(
            f"{r.dim:>5}  {r.violating_fraction:>10.2%}  [{r.ci[0]:.2%}, {r.ci[1]:.2%}]{note}"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run the simulation and print the table."""
    result = run_recorded(
        args,
        "simulate-sensitivity",
        lambda execution: simulate_sensitivity(
            args.dims,
            distribution=args.distribution,
            pairs=args.pairs,
            bound=args.bound,
            clip_norm=_clip_norm(args.clip_norm),
            claimed_sensitivity=args.claimed_sensitivity,
            normal_scale=args.normal_scale,
            seed=args.seed,
            confidence=args.confidence,
            execution=execution,
        ),
    )
    emit(args, result, _render)
    return EXIT_OK
