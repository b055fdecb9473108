"""The black-box input design: what it finds, what it costs, and that it changes nothing else.

Measures, with the design on and off in the same run (``SearchConfig(input_design=...)``,
the two audits of a seed back to back, A B A B):

1. ``cost``: the built-in 1-D Laplace (ε = 1 on [0, 1], correct) at the sizes the CLI plans
   for its default 120 s budget (10⁶ selection / 10⁷ final outputs per input): wall
   seconds and ε_lcb per seed (the bound must be bit-identical: nothing is added);
2. ``detection``: leaks away from the corners, at 2·10⁴ / 10⁵ outputs —
   ``interior``: Laplace(1) except 20× less noise for x in [0.61, 0.63];
   ``category``: k-RR over 64 values at ε = 1 whose value 37 keeps itself as at ε = 3;
   verdict, ε_lcb and the witness's pair per seed;
3. ``controls``: the correct Laplace and the correct 64-value k-RR at the same sizes
   (every one must be "no violation found", bound equal with the design off).

Run: ``PYTHONPATH=src python benchmarks/input_design.py --json
benchmarks/results/input_design.json`` (about 4 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time

import numpy as np

from dpaudit import progress
from dpaudit.adapters.reclaim import as_mechanism
from dpaudit.auditors.blackbox.auditor import AuditConfig, SearchConfig, audit
from dpaudit.claims import Definition, InputDomain, PrivacyClaim
from dpaudit.domains import IntRange
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.mechanisms import make_mechanism

K = 64
UNIT = PrivacyClaim(Definition.PURE, 1.0, InputDomain((1,), 0.0, 1.0))
CATEGORIES = PrivacyClaim(Definition.PURE, 1.0, IntRange(0, K - 1))


def interior(x, n, rng):
    scale = 0.05 if 0.61 <= float(x[0]) <= 0.63 else 1.0
    return x[0] + scale * rng.laplace(0.0, 1.0, size=(n, 1))


def laplace(x, n, rng):
    return x[0] + rng.laplace(0.0, 1.0, size=(n, 1))


def category(v, n, rng, broken=37):
    eps = 3.0 if v == broken else 1.0
    keep = rng.random(n) < math.exp(eps) / (math.exp(eps) + K - 1)
    other = rng.integers(0, K - 1, size=n)
    return np.where(keep, v, other + (other >= v))


def correct_category(v, n, rng):
    return category(v, n, rng, broken=-1)


def _run(mech, samples: int, final: int, seed: int, design: bool) -> dict:
    cfg = AuditConfig(
        samples=samples,
        final_samples=final,
        seed=seed,
        # The leaks measured here are in the values; the mechanisms add noise in bare float64.
        search=SearchConfig(input_design=design, representation=False),
    )
    start = time.perf_counter()
    r = audit(mech, cfg, ExecutionConfig(workers=2))
    w = r.witness
    return {
        "seed": seed,
        "design": design,
        "seconds": round(time.perf_counter() - start, 2),
        "verdict": r.verdict.value,
        "epsilon_lower_bound": r.epsilon_lower_bound,
        "pairs_tried": r.detail.pairs_tried,
        "witness_pair": None if w is None else (list(w.values) if w.values else [w.x, w.x_prime]),
        "witness_origin": None if w is None else w.pair_origin,
    }


def _both(mech, samples: int, final: int, seeds: int) -> list[dict]:
    rows = []
    for seed in range(seeds):
        rows += [_run(mech, samples, final, seed, d) for d in (True, False)]
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    progress.ENABLED = False
    small = (20_000, 100_000)
    out = {
        "measured": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}",
        "cost": _both(make_mechanism("laplace", epsilon=1.0), 1_000_000, 10_000_000, args.seeds),
        "detection": {
            "interior": _both(as_mechanism(interior, UNIT), *small, args.seeds),
            "category": _both(as_mechanism(category, CATEGORIES), *small, args.seeds),
        },
        "controls": {
            "laplace": _both(as_mechanism(laplace, UNIT), *small, args.seeds),
            "category": _both(as_mechanism(correct_category, CATEGORIES), *small, args.seeds),
        },
    }
    text = json.dumps(out, indent=2, default=str)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
