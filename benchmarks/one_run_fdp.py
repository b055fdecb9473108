"""The one-run audit of a μ-GDP claim: tested as a curve (f-DP) or read at one δ (ε, δ).

    PYTHONPATH=src .venv/bin/python benchmarks/one_run_fdp.py [--seeds 20] [--calibration 200]
        [--out benchmarks/results/one_run_fdp.json]

Part 1 (*power*): an exactly μ-GDP release — every canary's score is ``μ·bit + N(0, 1)`` —
with ``m = 1000`` canaries, one score, the one-run rule grid of
:func:`dpaudit.auditors.training.one_run.certify_guesses`, confidence 0.95, δ = 10⁻⁵.  Per
seed it records, for a μ-GDP claim:

* ``f-dp``: μ_lcb, the largest μ whose curve the f-DP test refutes (Mahloujifar, Melis &
  Chaudhuri 2024), every rule tested twice at α/(2·rules) (``bound="f-dp"``);
* ``point, same run``: the largest μ whose ε(δ) lies below that run's (ε, δ) bound —
  the GDP claims reading the claim at δ refutes, at the same α/(2·rules);
* ``point only``: the same for the (ε, δ) bound alone at α/rules (``bound="eps-delta"``).

Part 2 (*calibration*): over ``--calibration`` seeds, how often μ_lcb exceeds the true μ on
sets whose μ is known: null scores (μ = 0), ε = 1 randomised response on the bit (exactly
μ-GDP for μ = 2Φ⁻¹(e/(1 + e)) ≈ 1.232, its curve touching G_μ at one point), and the
Gaussian release at μ = 1.  Clopper–Pearson 95 % intervals on each rate.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from dpaudit.analysis import one_run_fdp
from dpaudit.auditors.training.one_run import CurveTest, certify_guesses

CANARIES = 1000
CONFIDENCE = 0.95
DELTA = 1e-5
MUS = (0.5, 1.0, 2.0, 4.0)
RR_EPSILON = 1.0
RR_MU = 2.0 * float(stats.norm.ppf(math.exp(RR_EPSILON) / (1.0 + math.exp(RR_EPSILON))))


def gaussian_set(mu: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    inside = rng.random(CANARIES) < 0.5
    return inside, mu * inside + rng.standard_normal(CANARIES)


def point_mu(epsilon: float) -> float:
    """The largest μ with ε_μ(δ) < ``epsilon``: the GDP claims an ε bound at δ refutes."""
    if epsilon <= 0:
        return 0.0
    lo, hi = 0.0, one_run_fdp.MU_CAP
    while hi - lo > 1e-6:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if one_run_fdp.epsilon_at_delta(mid, DELTA) < epsilon else (lo, mid)
    return lo


def one_set(inside: np.ndarray, values: np.ndarray) -> dict[str, float]:
    curve = CurveTest(one_run_fdp.gaussian_inverse_blowup([1.0]), gdp=True)
    start = time.perf_counter()
    both, _, _ = certify_guesses({"score": values}, inside, CONFIDENCE, DELTA, curve)
    seconds = time.perf_counter() - start
    alone, _, _ = certify_guesses({"score": values}, inside, CONFIDENCE, DELTA)
    return {
        "fdp": max(float(r.mu_lower_bound or 0.0) for r in both),
        "point_same_run": point_mu(max(r.epsilon_lower_bound for r in both)),
        "point_only": point_mu(max(r.epsilon_lower_bound for r in alone)),
        "seconds_fdp": seconds,
    }


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def part_one(seeds: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for mu in MUS:
        runs = [
            one_set(*gaussian_set(mu, np.random.default_rng([11, int(mu * 10), s])))
            for s in range(seeds)
        ]
        row = {"mu": mu, **{k: spread([r[k] for r in runs]) for k in runs[0]}}
        out.append(row)
        print(f"μ = {mu:g}: " + ", ".join(f"{k} {row[k]['median']:.3f}" for k in runs[0]))
    return out


def calibration_set(kind: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    inside = rng.random(CANARIES) < 0.5
    if kind == "null-normal":
        return inside, rng.standard_normal(CANARIES), 0.0
    if kind == "rr-binary":
        keep = rng.random(CANARIES) < math.exp(RR_EPSILON) / (1.0 + math.exp(RR_EPSILON))
        return inside, np.where(keep, inside, ~inside).astype(float), RR_MU
    return inside, 1.0 * inside + rng.standard_normal(CANARIES), 1.0  # gaussian-1


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    lo = 0.0 if k == 0 else float(stats.beta.ppf(0.025, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(0.975, k + 1, n - k))
    return lo, hi


def part_two(seeds: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    curve = CurveTest(one_run_fdp.gaussian_inverse_blowup([1.0]), gdp=True)
    for index, kind in enumerate(("null-normal", "rr-binary", "gaussian-1")):
        over, bounds = 0, []
        for s in range(seeds):
            inside, values, truth = calibration_set(kind, np.random.default_rng([13, index, s]))
            rules, _, _ = certify_guesses({"score": values}, inside, CONFIDENCE, DELTA, curve)
            mu = max(float(r.mu_lower_bound or 0.0) for r in rules)
            bounds.append(mu)
            over += mu > truth
        lo, hi = clopper_pearson(over, seeds)
        out.append(
            {
                "set": kind,
                "true_mu": truth,
                "over": over,
                "seeds": seeds,
                "interval": [lo, hi],
                "mu_lcb": spread(bounds),
            }
        )
        print(f"{kind}: μ_lcb > {truth:.4g} on {over}/{seeds} ({lo:.3f}–{hi:.3f})")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--calibration", type=int, default=200)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    start = time.perf_counter()
    result = {
        "what": __doc__.splitlines()[0],
        "canaries": CANARIES,
        "confidence": CONFIDENCE,
        "delta": DELTA,
        "power": part_one(args.seeds),
        "calibration": part_two(args.calibration),
        "seeds": args.seeds,
        "machine": platform.platform(),
        "date": time.strftime("%Y-%m-%d"),
    }
    result["seconds"] = round(time.perf_counter() - start, 1)
    print(f"{result['seconds']} s")
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
