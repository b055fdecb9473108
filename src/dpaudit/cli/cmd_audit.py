"""``dpaudit audit``: black-box ε lower bound with a re-checkable witness.

Searches input pairs and threshold attacks for a set S with
Pr[M(x) ∈ S] > e^ε·Pr[M(x') ∈ S] + δ and reports the one-sided bound
ε ≥ ln(p1_lower − δ) − ln(p2_upper) at the chosen confidence.  A violation is
reported only when that bound exceeds the claimed ε; otherwise "no violation
found" (never "the mechanism is private").
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from dpaudit.audit.blackbox import CLASSIFIERS, DEFAULT_TRAIN_SAMPLES, MODES, AuditConfig, audit
from dpaudit.audit.guard import check_sample_memory
from dpaudit.audit.pairs import parse_pair
from dpaudit.cli.common import (
    add_mechanism_args,
    add_run_args,
    add_seed,
    build_mechanism,
    emit_verdict,
    run_recorded,
)
from dpaudit.errors import InvalidArgumentError
from dpaudit.serialization import to_jsonable


def register(sub: Any) -> None:
    """Add the ``audit`` sub-command."""
    p = sub.add_parser(
        "audit",
        help="black-box ε lower bound (DP-Sniper-style, without its ln(1/c) ceiling)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_mechanism_args(p)
    p.add_argument(
        "--samples",
        type=int,
        default=1_000_000,
        metavar="N",
        help="outputs per input for each selection estimate (default 1e6; DP-Sniper: 10.7e6)",
    )
    p.add_argument(
        "--final-samples",
        type=int,
        default=10_000_000,
        metavar="N",
        help="outputs per input for the final estimate (default 1e7; DP-Sniper: 2e8)",
    )
    p.add_argument(
        "--train-samples",
        type=int,
        default=None,
        metavar="N",
        help="outputs per input for training (classifiers, threshold grid) "
        "(default: min(samples, 131072); dpsniper mode: samples)",
    )
    p.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="confidence 1−α of the bound, in (0, 1) (default 0.95; DP-Sniper: 0.9)",
    )
    p.add_argument(
        "--mode",
        choices=MODES,
        default="dpaudit",
        help="dpaudit (no ceiling, exact likelihood ratio) or dpsniper (as published)",
    )
    p.add_argument(
        "--classifier",
        choices=CLASSIFIERS,
        default="auto",
        help="attack family; auto = likelihood-ratio when the mechanism has a log-density, "
        "else logistic + mlp (dpsniper mode: logistic)",
    )
    p.add_argument(
        "--target-mass",
        type=float,
        default=0.01,
        metavar="C",
        help="DP-Sniper's target mass c in dpsniper mode (default 0.01)",
    )
    p.add_argument(
        "--final-candidates",
        type=int,
        default=1,
        metavar="K",
        help="candidates re-estimated on the final samples (Bonferroni over K; default 1)",
    )
    p.add_argument(
        "--pair",
        action="append",
        default=[],
        metavar="A;B",
        help="input pair to try, e.g. '0;1' or '0,0;1,1' (repeatable; added to the patterns)",
    )
    p.add_argument(
        "--no-patterns",
        action="store_true",
        help="try only the --pair pairs, not the generated patterns",
    )
    p.add_argument(
        "--fail-on-violation",
        action="store_true",
        help="exit with status 1 when a violation is found",
    )
    add_seed(p)
    add_run_args(p)
    p.set_defaults(func=run)


def build_config(args: argparse.Namespace, mechanism: Any) -> AuditConfig:
    """The :class:`AuditConfig` described by the command line (validated)."""
    for name in ("samples", "final_samples"):
        value = getattr(args, name)
        if value < 1:
            raise InvalidArgumentError(f"--{name.replace('_', '-')}", value, "an integer >= 1")
    if args.train_samples is not None and args.train_samples < 1:
        raise InvalidArgumentError("--train-samples", args.train_samples, "an integer >= 1")
    if not (math.isfinite(args.confidence) and 0.0 < args.confidence < 1.0):
        raise InvalidArgumentError(
            "--confidence", args.confidence, "a number in the open interval (0, 1)"
        )
    if not (math.isfinite(args.target_mass) and 0.0 < args.target_mass < 1.0):
        raise InvalidArgumentError(
            "--target-mass", args.target_mass, "a number in the open interval (0, 1)"
        )
    if args.final_candidates < 1:
        raise InvalidArgumentError("--final-candidates", args.final_candidates, "an integer >= 1")
    if args.seed < 0:
        raise InvalidArgumentError("--seed", args.seed, "an integer >= 0")
    if args.no_patterns and not args.pair:
        raise InvalidArgumentError("--no-patterns", True, "used together with --pair")
    pairs = tuple(parse_pair(text, mechanism) for text in args.pair)
    return AuditConfig(
        samples=args.samples,
        final_samples=args.final_samples,
        train_samples=args.train_samples,
        confidence=args.confidence,
        mode=args.mode,
        classifier=args.classifier,
        target_mass=args.target_mass,
        final_candidates=args.final_candidates,
        pairs=pairs,
        use_patterns=not args.no_patterns,
        seed=args.seed,
        unit_timeout=getattr(args, "unit_timeout", None),
    )


def _render(result: dict[str, Any]) -> str:
    lines = [result["verdict"]]
    found = result.get("declaration_findings", ())
    lines += [f"finding: {f['summary']} ({f['evidence']})" for f in found]
    lines.append(f"claim: {result['claim']}  (mode {result['mode']})")
    w = result["witness"]
    if w is not None:
        a = w["attack"]
        lines += [
            f"witness: x = {w['x']}, x' = {w['x_prime']}  ({w['pair_origin']})",
            f"  attack: {a['family']}; S = {{y : {a['set']}}}",
            f"  score(y) = {a['score']}; a = {a['score_inputs'][0]}, b = {a['score_inputs'][1]}",
            f"  p1 = Pr[M(x) ∈ S]  ≈ {w['p1']['estimate']:.6g} "
            f"({w['p1']['hits']}/{w['p1']['samples']}), lower bound {w['p1']['bound']:.6g}",
            f"  p2 = Pr[M(x') ∈ S] ≈ {w['p2']['estimate']:.6g} "
            f"({w['p2']['hits']}/{w['p2']['samples']}), upper bound {w['p2']['bound']:.6g}",
        ]
    lines.append(result["confidence_statement"])
    lines += [f"note: {n}" for n in result["notes"]]
    t = result["timing"]
    lines.append(f"time: {t['total']:.2f} s")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run the audit; exit 1 on a violation with ``--fail-on-violation``."""
    mechanism = build_mechanism(args)
    config = build_config(args, mechanism)
    train = config.train_samples or (
        config.samples if config.mode == "dpsniper" else min(config.samples, DEFAULT_TRAIN_SAMPLES)
    )
    check_sample_memory(mechanism, train, 2, "--train-samples", "the training outputs")
    data = run_recorded(
        args, "audit", lambda execution: to_jsonable(audit(mechanism, config, execution))
    )
    return emit_verdict(args, data, _render, data["violation"])
