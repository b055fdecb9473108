"""Detection rate of rare leaks (issue 25, item 3): held out from tests/test_rare_events.py.

Mechanisms (all ε = 1 on [0, 1], one coordinate): Laplace that releases its exact
input with probability q; Laplace that outputs a fixed sentinel (−7.25) only under
x = 0 with probability q; Laplace that lands in [0.3 ± 5·10⁻¹⁰] under x = 0 with
probability q; and the same with q = 0 (correct: false alarms).  Further correct
rows, where the proposer's false alarms matter most because exact repeated values
are legitimate: ``geometric:0`` (round(x) plus two-sided geometric noise of
parameter e^{-ε}, Ghosh, Roughgarden & Sundararajan, STOC 2009: ε-DP since
|round(x) − round(x')| ≤ 1 on [0, 1]) and ``grid:0`` (Laplace rounded to a grid of
1/64: post-processing of an ε-DP output, Dwork & Roth 2014, Prop. 2.1).  Each row
audits ``--seeds`` seeds with the rare-event proposer off (main's search) and on
(``--modes``), and reports detections (ε_lcb > claim) with an exact
(Clopper–Pearson) 95 % interval.

usage: PYTHONPATH=src python benchmarks/rare_events.py --samples 100000 \
           --final-samples 1000000 --seeds 10 [--rows exact:1e-3,...]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import stats

from dpaudit.auditors.blackbox.auditor import AuditConfig, audit
from dpaudit.auditors.blackbox.config import SearchConfig
from dpaudit.claims import Definition, InputDomain, PrivacyClaim
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.mechanisms import Mechanism

SENTINEL = -7.25
REGION = 0.3


@dataclass(frozen=True)
class RareLeak(Mechanism):
    """``x + Lap(1/ε)`` with a rare leak of kind ``kind`` at probability ``q``."""

    name: ClassVar[str] = "bench-rare-leak"
    kind: str = "exact"
    q: float = 1e-3

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim(Definition.PURE, self.epsilon, InputDomain((1,), 0.0, 1.0))

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (1,)

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.kind == "geometric":  # two-sided geometric: difference of two geometrics
            p = 1.0 - np.exp(-self.epsilon)
            noise = rng.geometric(p, size=(n, 1)) - rng.geometric(p, size=(n, 1))
            return np.round(x) + noise.astype(np.float64)
        out = x + rng.laplace(scale=1.0 / self.epsilon, size=(n, 1))
        if self.kind == "grid":
            return np.round(out * 64.0) / 64.0
        hit = rng.random(n) < self.q
        if self.kind == "exact":
            out[hit] = x
        elif float(np.ravel(x)[0]) == 0.0:  # sentinel / region: only under x = 0
            m = int(hit.sum())
            if self.kind == "sentinel":
                out[hit, 0] = SENTINEL
            else:
                out[hit, 0] = REGION + rng.uniform(-5e-10, 5e-10, m)
        return out


def cp(k: int, n: int) -> tuple[float, float]:
    """Exact two-sided 95 % Clopper–Pearson interval of k/n."""
    lo = 0.0 if k == 0 else float(stats.beta.ppf(0.025, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(0.975, k + 1, n - k))
    return lo, hi


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--final-samples", type=int, default=1_000_000)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--workers", type=int, default=1)
    default_rows = (
        "exact:1e-3,exact:1e-4,exact:1e-5,sentinel:1e-3,sentinel:1e-4,region:1e-4,exact:0"
    )
    ap.add_argument("--rows", default=default_rows)
    ap.add_argument("--modes", default="off,on", help="proposer off (main's search), on, or both")
    a = ap.parse_args()
    modes = [(m, m == "on") for m in a.modes.split(",")]
    ex = ExecutionConfig(workers=a.workers)
    for row in a.rows.split(","):
        kind, q = row.split(":")
        mech = RareLeak(epsilon=1.0, kind=kind, q=float(q))
        res = {}
        for label, on in modes:
            base = AuditConfig(samples=a.samples, final_samples=a.final_samples)
            hits, bounds = 0, []
            for seed in range(a.seeds):
                # Value-level leaks; the float-bits sets stay off (the noise is bare float64).
                search = SearchConfig(rare_events=on, representation=False)
                cfg = dataclasses.replace(base, seed=seed, search=search)
                b = audit(mech, cfg, ex).epsilon_lower_bound
                bounds.append(round(b, 3))
                hits += b > 1.0
            res[label] = {"flagged": hits, "ci95": cp(hits, a.seeds), "bounds": bounds}
        print(json.dumps({"kind": kind, "q": float(q), "seeds": a.seeds, **res}), flush=True)


if __name__ == "__main__":
    main()
