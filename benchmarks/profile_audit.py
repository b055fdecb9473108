"""Certified μ lower bound of the profile auditor on Gaussian mechanisms at their exact μ.

Usage (from the repository root)::

    .venv/bin/python benchmarks/profile_audit.py [--sizes 1e6,1e7] [--seeds 5]
                                                 [--workers 1] [--json FILE]

For each Gaussian mechanism below (exact μ = Δ/σ, Dong, Roth & Su 2022) and each
final sample size n per input (selection n/10 per input, confidence 0.95), the
profile auditor (:func:`dpaudit.auditors.profile.audit_profile`) runs over seeds
``0 .. seeds−1`` with the mechanism's exact likelihood-ratio score, judging the
claim ``GaussianDP(μ)``; the row prints min / median / max of the certified
``μ_lcb`` as a fraction of μ, the number of verdicts that (wrongly) said
VIOLATION, and the mean wall time.  Goal: median ``μ_lcb ≥ 0.9·μ`` at n = 10⁷.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from dpaudit.auditors.blackbox.scores import LikelihoodRatioScore
from dpaudit.auditors.profile import ProfileAuditConfig, audit_profile
from dpaudit.claims import GaussianDP
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.mechanisms.gaussian import GaussianMechanism

CASES = {
    "analytic ε=1, δ=1e-5": GaussianMechanism(epsilon=1.0, delta=1e-5),
    "analytic ε=10, δ=0.01": GaussianMechanism(epsilon=10.0, delta=0.01),
    "classic ε=10, δ=0.01": GaussianMechanism(epsilon=10.0, delta=0.01, calibration="classic"),
}


def run_case(mech: GaussianMechanism, n: int, seeds: int, workers: int) -> dict:
    """μ_lcb/μ per seed, violations and mean wall seconds for one mechanism and size."""
    mu = 1.0 / mech.sigma
    score = LikelihoodRatioScore(mech, (0.0,), (1.0,))
    ratios, walls, alarms = [], [], 0
    for seed in range(seeds):
        cfg = ProfileAuditConfig(
            selection_samples=max(n // 10, 100),
            final_samples=n,
            seed=seed,
            execution=ExecutionConfig(workers=workers),
        )
        t0 = time.perf_counter()
        r = audit_profile(mech, 0.0, 1.0, score, GaussianDP(mu), cfg)
        walls.append(time.perf_counter() - t0)
        ratios.append(r.detail.mu_lower_bound / mu)
        alarms += r.violation
    return {
        "mu": mu,
        "n": n,
        "ratios": ratios,
        "min": min(ratios),
        "median": statistics.median(ratios),
        "max": max(ratios),
        "violations": alarms,
        "mean_wall_s": statistics.fmean(walls),
    }


def main() -> None:
    """Run every case and print a Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e6,1e7", help="final samples per input, comma-separated")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    args = ap.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    rows = []
    print("| mechanism | μ | n per input | μ_lcb/μ min / median / max | violations | wall s |")
    print("|---|---|---|---|---|---|")
    for name, mech in CASES.items():
        for n in sizes:
            row = {"case": name, **run_case(mech, n, args.seeds, args.workers)}
            rows.append(row)
            print(
                f"| {name} | {row['mu']:.4f} | {n:.0e} | {row['min']:.4f} / {row['median']:.4f}"
                f" / {row['max']:.4f} | {row['violations']} | {row['mean_wall_s']:.1f} |",
                flush=True,
            )
    goal = all(r["median"] >= 0.9 for r in rows if r["n"] >= 10_000_000)
    print(f"goal (median μ_lcb ≥ 0.9·μ at n = 10⁷): {'met' if goal else 'MISSED'}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()
