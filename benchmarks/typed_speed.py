"""A typed integer domain against the same mechanism on an integer box, in the same run.

k-ary randomised response on 64 values (exactly 1-DP), written once for a typed
``IntRange(0, 63)`` input and once for a number in the integer box ``[0, 63]``; both
audited by ``dpaudit.audit`` at the same sizes and seeds.  Records each audit's wall
time, pairs trained and bound; the ratio typed / box is the number to watch.

    python benchmarks/typed_speed.py --json benchmarks/results/typed_speed.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from dpaudit import AuditConfig, Definition, InputDomain, PrivacyClaim, audit
from dpaudit.domains import IntRange

K, EPS = 64, 1.0
P_KEEP = float(np.exp(EPS) / (np.exp(EPS) + K - 1))


def krr_typed(x, n, rng):
    """k-RR: the input with probability e^ε/(e^ε + k − 1), else one of the others uniformly."""
    keep = rng.random(n) < P_KEEP
    other = rng.integers(0, K - 1, n)
    other = other + (other >= x)
    return np.where(keep, x, other).astype(float)


def krr_box(x, n, rng):
    """The same on a number of the integer box [0, 63]."""
    return krr_typed(round(float(x[0])), n, rng)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--final-samples", type=int, default=1_000_000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    a = parser.parse_args()
    claims = {
        "box": (
            krr_box,
            PrivacyClaim(Definition.PURE, EPS, InputDomain((1,), 0.0, 63.0, integer=True)),
        ),
        "typed": (krr_typed, PrivacyClaim(Definition.PURE, EPS, IntRange(0, K - 1))),
    }
    runs = []
    for seed in range(a.seeds):
        for label, (f, claim) in claims.items():  # A B A B: the two share the machine's state
            cfg = AuditConfig(a.samples, a.final_samples, seed=seed)
            start = time.perf_counter()
            r = audit(f, claim, config=cfg)
            row = {"seed": seed, "domain": label, "seconds": round(time.perf_counter() - start, 2),
                   "epsilon_lower_bound": r.epsilon_lower_bound, "violation": r.violation,
                   "pairs_trained": r.detail.pairs_tried}  # fmt: skip
            print(json.dumps(row), flush=True)
            runs.append(row)
    med = {d: statistics.median(r["seconds"] for r in runs if r["domain"] == d) for d in claims}
    record = {"measured": time.strftime("%Y-%m-%d"), "samples": a.samples,
              "final_samples": a.final_samples, "runs": runs, "median_seconds": med,
              "typed_over_box": med["typed"] / med["box"]}  # fmt: skip
    print(json.dumps({"median_seconds": med, "typed_over_box": record["typed_over_box"]}))
    if a.json:
        a.json.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
