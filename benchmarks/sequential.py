"""Sequential against fixed final stages, in the same run: samples to detect, false alarms, bound.

For each violating mechanism and seed, the black-box audit runs twice on identical
settings, with ``AuditConfig.sequential`` off and on; the table gives the detection rate
and the outputs drawn per input (all stages, and the final stage alone) until the
verdict.  The false-alarm row audits an exactly 1-DP Laplace (output rounded with
``round_to_grid``) ``--null-runs`` times with the sequential stage.  The slack rows audit
correct mechanisms whose loss is well inside the claim, where the sequential stage stops
for futility once no statement could refute the claim at its last look.  The last row
compares the bound each plan certifies on a correct mechanism that runs to the full budget.

    python benchmarks/sequential.py --json benchmarks/results/sequential.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from dpaudit import AuditConfig, Definition, InputDomain, PrivacyClaim, audit, round_to_grid
from dpaudit.mechanisms import make_mechanism

UNIT = PrivacyClaim(Definition.PURE, 1.0, InputDomain((1,), 0.0, 1.0))


def laplace_half(x, n, rng):
    """x + Lap(1/2), rounded: true ε = 2 on [0, 1]."""
    return round_to_grid(x + rng.laplace(0.0, 0.5, size=(n, x.size)), 0.5)


def laplace_over_13(x, n, rng):
    """x + Lap(1/1.3), rounded: true ε = 1.3 on [0, 1]."""
    return round_to_grid(x + rng.laplace(0.0, 1 / 1.3, size=(n, x.size)), 1 / 1.3)


def laplace_unit(x, n, rng):
    """x + Lap(1), rounded: exactly 1-DP on [0, 1]."""
    return round_to_grid(x + rng.laplace(0.0, 1.0, size=(n, x.size)), 1.0)


def laplace_slack(x, n, rng):
    """x + Lap(2), rounded: true ε = 0.5 on [0, 1], inside a claim of 1."""
    return round_to_grid(x + rng.laplace(0.0, 2.0, size=(n, x.size)), 2.0)


def slack_cases():
    """(label, mechanism, claim, true ε) of correct mechanisms well inside their claim."""
    return [
        ("Laplace scale 2 (true ε 0.5, claim 1)", laplace_slack, UNIT, 0.5),
        ("Gaussian, analytic σ at (1, 1e-5), claim (2, 1e-5)",
         make_mechanism("gaussian", epsilon=1.0, delta=1e-5, calibration="analytic"),
         PrivacyClaim(Definition.APPROXIMATE, 2.0, InputDomain((1,), 0.0, 1.0), delta=1e-5), None),
    ]  # fmt: skip


def cases():
    """(label, mechanism, claim, true ε)."""
    adept = make_mechanism("adept-acl22", epsilon=1.0, dim=4)
    return [
        ("Laplace scale 1/2 (true ε 2)", laplace_half, UNIT, 2.0),
        ("Laplace scale 1/1.3 (true ε 1.3)", laplace_over_13, UNIT, 1.3),
        ("ADePT ACL 2022, n = 4 (true ε 4)", adept, None, 4.0),
        ("Gaussian, classic σ at ε = 3 (claim (3, 1e-5))",
         make_mechanism("gaussian", epsilon=3.0, delta=1e-5, calibration="classic"), None, None),
    ]  # fmt: skip


def drawn(result) -> tuple[int, int]:
    samples = result.samples
    return int(sum(v for v in samples.values())), int(samples.get("final", 0))


def run(mech, claim, cfg):
    return audit(mech, claim, config=cfg) if claim is not None else audit(mech, config=cfg)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200_000)
    parser.add_argument("--final-samples", type=int, default=2_000_000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--null-runs", type=int, default=200)
    parser.add_argument("--json", type=Path, default=None)
    a = parser.parse_args()
    rows, slack = [], []
    start = time.perf_counter()
    for label, mech, claim, truth in [*cases(), *slack_cases()]:
        per = {"fixed": [], "sequential": []}
        for seed in range(a.seeds):
            for mode in per:
                cfg = AuditConfig(
                    a.samples, a.final_samples, seed=seed, sequential=mode == "sequential"
                )
                r = run(mech, claim, cfg)
                total, final = drawn(r)
                per[mode].append({"violation": r.violation, "bound": r.epsilon_lower_bound,
                                  "total": total, "final": final})  # fmt: skip
        row = {"case": label, "true_epsilon": truth}
        for mode, runs in per.items():
            row[mode] = {
                "detected": sum(r["violation"] for r in runs),
                "runs": len(runs),
                "median_bound": statistics.median(r["bound"] for r in runs),
                "median_total_per_input": statistics.median(r["total"] for r in runs),
                "median_final_per_input": statistics.median(r["final"] for r in runs),
            }
        row["total_ratio"] = (
            row["fixed"]["median_total_per_input"] / row["sequential"]["median_total_per_input"]
        )
        row["final_ratio"] = (
            row["fixed"]["median_final_per_input"] / row["sequential"]["median_final_per_input"]
        )
        print(json.dumps(row), flush=True)
        (slack if label in {c[0] for c in slack_cases()} else rows).append(row)
    null = laplace_unit
    small = AuditConfig(10_000, 50_000, sequential=True)
    alarms = sum(
        audit(null, UNIT, config=AuditConfig(**{**small.__dict__, "seed": s})).violation
        for s in range(a.null_runs)
    )
    print(json.dumps({"null_runs": a.null_runs, "false_alarms": alarms}), flush=True)
    full = []
    for seed in range(3):
        bounds = {}
        for mode in ("fixed", "sequential"):
            cfg = AuditConfig(
                a.samples, a.final_samples, seed=seed, sequential=mode == "sequential"
            )
            bounds[mode] = audit(null, UNIT, config=cfg).epsilon_lower_bound
        full.append(bounds)
    ratio = float(np.median([b["sequential"] / b["fixed"] for b in full]))
    print(json.dumps({"full_budget_bounds": full, "median_ratio": ratio}), flush=True)
    record = {
        "what": "sequential vs fixed final stage, black-box audits, same settings and seeds",
        "date": time.strftime("%Y-%m-%d"),
        "samples": a.samples,
        "final_samples": a.final_samples,
        "seeds": a.seeds,
        "rows": rows,
        "slack_rows": slack,
        "null": {
            "mechanism": "x + Lap(1) rounded, exactly 1-DP",
            "runs": a.null_runs,
            "samples": [10_000, 50_000],
            "false_alarms": alarms,
        },
        "full_budget": {
            "mechanism": "x + Lap(1) rounded, exactly 1-DP",
            "bounds": full,
            "median_sequential_over_fixed": ratio,
        },
        "wall_s": round(time.perf_counter() - start, 1),
    }
    if a.json:
        a.json.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
