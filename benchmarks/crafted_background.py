"""White-box multi-run audits of DP-SGD on its own data and on a crafted opposing background.

    PYTHONPATH=src .venv/bin/python benchmarks/crafted_background.py [--seeds 5] [--runs 1200]
        [--out benchmarks/results/crafted_background.json]

The built-in :class:`~dpaudit.mechanisms.training.dpsgd.DPSGD` (σ = 2, 500 steps, q = 0.032,
white box, one canary coordinate) is audited by the multi-run canary game with one Dirac
gradient canary, confidence 0.95, ``--runs`` trainings per world, for two trainers:

* ``none``: Poisson sampling as its accountant assumes (claimed ε = 1.69 at δ = 10⁻⁵); every
  verdict must be "no violation found";
* ``shuffle-as-poisson``: fixed-size batches of a fresh permutation each epoch, accounted as
  Poisson at the same rate (same claim).

Each on two backgrounds, on the same seeds: ``data``, the bundled 1000 sentences (the canary's
coordinate sees only the canary and noise), and ``opposing``, 1000 gradient records on the
canary's coordinate with the opposite sign, with the trace score fitted on ``runs // 3``
pilot runs per world (:mod:`dpaudit.auditors.training.multi_run`).  Per audit it records
the verdict, μ_lcb, the certified ε at the claim's δ, the column the selection chose and the
seconds taken.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path
from typing import Any

from dpaudit.api import audit_training
from dpaudit.auditors.training.multi_run import MultiRunConfig
from dpaudit.mechanisms.training.dpsgd import DPSGD

TRAINER = {"noise_multiplier": 2.0, "steps": 500, "canary_coordinates": 1}
FLAWS = ("none", "shuffle-as-poisson")
BACKGROUNDS = ("data", "opposing")


def one(flaw: str, background: str, seed: int, runs: int) -> dict[str, Any]:
    trainer = DPSGD(flaw=flaw, **TRAINER)
    start = time.perf_counter()
    config = MultiRunConfig(runs=runs, canary_kind="gradient", background=background, seed=seed)
    result = audit_training(trainer, method="multi-run", config=config)
    detail = result.detail
    return {
        "flaw": flaw,
        "background": background,
        "seed": seed,
        "claimed_epsilon": trainer.claim.epsilon,
        "epsilon_lcb": result.epsilon_lower_bound,
        "mu_lcb": getattr(detail, "mu_lower_bound", None),
        "verdict": result.verdict,
        "seconds": time.perf_counter() - start,
    }


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Violations, and median/min/max of ε_lcb and μ_lcb over seeds, per (flaw, background)."""
    out: list[dict[str, Any]] = []
    for flaw in FLAWS:
        for background in BACKGROUNDS:
            chosen = [r for r in rows if r["flaw"] == flaw and r["background"] == background]
            cell: dict[str, Any] = {
                "flaw": flaw,
                "background": background,
                "claimed_epsilon": chosen[0]["claimed_epsilon"],
                "violations": sum(r["verdict"] == "violation" for r in chosen),
                "audits": len(chosen),
            }
            for key in ("epsilon_lcb", "mu_lcb", "seconds"):
                values = [r[key] for r in chosen if r[key] is not None]
                if values:
                    cell[key] = {
                        "median": statistics.median(values),
                        "min": min(values),
                        "max": max(values),
                    }
            out.append(cell)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=1200)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = []
    for flaw in FLAWS:
        for background in BACKGROUNDS:
            for seed in range(args.seeds):
                row = one(flaw, background, seed, args.runs)
                rows.append(row)
                print(json.dumps(row), flush=True)
    result = {
        "benchmark": "crafted_background",
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {platform.python_version()}",
        "trainer": TRAINER,
        "runs_per_world": args.runs,
        "seeds": list(range(args.seeds)),
        "confidence": 0.95,
        "rows": rows,
        "summary": summary(rows),
        "seconds": time.perf_counter() - start,
    }
    print(json.dumps(result["summary"], indent=1))
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
