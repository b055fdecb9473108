"""False-alarm study of the black-box audit: how often are *correct* mechanisms flagged?

Usage (from the repository root)::

    .venv/bin/python benchmarks/audit_false_alarms.py [--audits 200] [--samples 4000]
                                                     [--final-samples 20000] [--workers 2]

Runs ``--audits`` independently seeded audits (seeds 0..audits−1) of every
correct mechanism at confidence 0.95 (α = 0.05) and prints, per mechanism, the
number of false alarms (a "violation" reported for a mechanism whose claim is
true) with the exact one-sided 95% Clopper–Pearson upper bound on the
false-alarm rate.  A valid auditor has a false-alarm rate of at most α; in
practice it is far lower, because Clopper–Pearson bounds are conservative and
both of them must fail for a false alarm.  Audits run in parallel as work units
(one audit per unit, each single-threaded).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import Any

from dpaudit import progress
from dpaudit.auditors.blackbox.auditor import AuditConfig, audit
from dpaudit.auditors.core.statistics import clopper_pearson_upper
from dpaudit.engine.executor import ExecutionConfig, run_units
from dpaudit.mechanisms import make_mechanism

#: Correct mechanisms (claims that hold), with the parameters audited.
CORRECT: tuple[tuple[str, dict[str, Any]], ...] = (
    ("laplace", {}),
    ("gaussian", {}),
    ("randomized-response", {}),
    ("sue", {}),
    ("oue", {}),
    ("adept-l1", {}),
    ("adept-fixed-scale", {}),
)


@dataclass(frozen=True)
class CalibrationUnit:
    """One seeded audit."""

    name: str
    params: tuple[tuple[str, Any], ...]
    seed: int
    samples: int
    final_samples: int
    confidence: float


def run_one(unit: CalibrationUnit) -> tuple[bool, float]:
    """(violation reported, ε lower bound) of one audit, run in-process."""
    progress.ENABLED = False
    mech = make_mechanism(unit.name, epsilon=1.0, **dict(unit.params))
    cfg = AuditConfig(
        samples=unit.samples,
        final_samples=unit.final_samples,
        confidence=unit.confidence,
        seed=unit.seed,
    )
    r = audit(mech, cfg, ExecutionConfig(workers=1))
    return r.violation, r.epsilon_lower_bound


def main(argv: list[str] | None = None) -> int:
    """Run the study and print one line per mechanism."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--audits", type=int, default=200)
    parser.add_argument("--samples", type=int, default=4000)
    parser.add_argument("--final-samples", type=int, default=20000)
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    progress.ENABLED = False
    alpha = 1 - args.confidence
    print(
        f"{args.audits} audits per mechanism, ε = 1, confidence {args.confidence}, "
        f"{args.samples} selection / {args.final_samples} final samples per input"
    )
    total_alarms = total = 0
    start = time.perf_counter()
    for name, params in CORRECT:
        units = [
            CalibrationUnit(
                name, tuple(params.items()), s, args.samples, args.final_samples, args.confidence
            )
            for s in range(args.audits)
        ]
        results = run_units(run_one, units, ExecutionConfig(workers=args.workers), desc=name)
        alarms = sum(v for v, _ in results)
        bounds = sorted(b for _, b in results)
        upper = clopper_pearson_upper(alarms, len(results), 0.05)
        total_alarms += alarms
        total += len(results)
        print(
            f"{name:20s} false alarms {alarms:3d}/{len(results)}  rate ≤ {upper:.4f} (95% CP; "
            f"valid if ≤ α = {alpha:g})  median ε_lcb {bounds[len(bounds) // 2]:.3f}, "
            f"max {bounds[-1]:.3f}",
            flush=True,
        )
    upper = clopper_pearson_upper(total_alarms, total, 0.05)
    print(
        f"{'all':20s} false alarms {total_alarms:3d}/{total}  rate ≤ {upper:.4f} (95% CP)  "
        f"[{time.perf_counter() - start:.0f} s]"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
