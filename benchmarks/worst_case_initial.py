"""Black-box (final-model) multi-run audits of correct DP-SGD from zeros and from a worst-case θ₀.

    PYTHONPATH=src .venv/bin/python benchmarks/worst_case_initial.py [--seeds 5] [--runs 600]
        [--out benchmarks/results/worst_case_initial.json]

The built-in :class:`~dpaudit.mechanisms.training.dpsgd.DPSGD` (no flaw, ``white_box=False``)
is audited by the multi-run canary game with one mislabelled canary, scored by minus its loss
on the final model, confidence 0.95, ``--runs`` trainings per world, ``initial="zeros"``
beside ``initial="pretrained"`` (Annamalai & De Cristofaro, NeurIPS 2024) on the same seeds.
Two settings:

* ``subsampled``: the defaults, q = 0.032, T = 200, σ = 1 (the accountant claims ε = 3.47 at
  δ = 10⁻⁵);
* ``full-batch``: q = 1, T = 20, σ = 3 (claimed ε = 7.53), where the final model's sum of
  steps is the whole mechanism: the best any score can do is the sum's μ = √T/σ = 1.49.

Per seed it records μ_lcb and the certified ε at the claim's δ, and the score separation
``(mean_in − mean_out)/pooled std`` of the selection-free check runs (200 per world, their own
seeds); the claim is correct, so every verdict must be "no violation found".
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

from dpaudit.api import audit_training
from dpaudit.auditors.training.canaries import draw_canaries
from dpaudit.auditors.training.multi_run import MultiRunConfig
from dpaudit.mechanisms.training.dpsgd import DPSGD

SETTINGS = {
    "subsampled": {"sampling_rate": 0.032, "steps": 200, "noise_multiplier": 1.0},
    "full-batch": {"sampling_rate": 1.0, "steps": 20, "noise_multiplier": 3.0},
}
INITIALS = ("zeros", "pretrained")
SEPARATION_RUNS = 200


def separation(trainer: DPSGD, seed: int) -> float:
    """The canary score's standardised mean difference on fresh runs of both worlds."""
    drawn = draw_canaries("mislabelled", 2, trainer.base, np.random.default_rng(45))
    trainer = trainer.with_base(drawn.base)
    canary = drawn.records[0]
    scores = []
    for included in (False, True):
        data = trainer.combine(trainer.base, [canary] if included else [])
        runs = np.random.default_rng([seed, 7, int(included)]).spawn(SEPARATION_RUNS)
        scores.append(np.array([trainer.score(trainer.train(data, g), [canary])[0] for g in runs]))
    out, inside = scores
    return float((inside.mean() - out.mean()) / math.sqrt((out.var() + inside.var()) / 2))


def one(setting: str, initial: str, seed: int, runs: int) -> dict[str, Any]:
    trainer = DPSGD(white_box=False, initial=initial, **SETTINGS[setting])
    start = time.perf_counter()
    config = MultiRunConfig(runs=runs, canary_kind="mislabelled", seed=seed)
    result = audit_training(trainer, method="multi-run", config=config)
    seconds = time.perf_counter() - start
    detail = result.detail
    return {
        "setting": setting,
        "initial": initial,
        "seed": seed,
        "claimed_epsilon": trainer.claim.epsilon,
        "epsilon_lcb": result.epsilon_lower_bound,
        "mu_lcb": getattr(detail, "mu_lower_bound", None),
        "verdict": result.verdict,
        "separation": separation(trainer, seed),
        "seconds": seconds,
    }


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Median, min and max over seeds per (setting, initial)."""
    out: list[dict[str, Any]] = []
    for setting in SETTINGS:
        for initial in INITIALS:
            chosen = [r for r in rows if r["setting"] == setting and r["initial"] == initial]
            cell: dict[str, Any] = {
                "setting": setting,
                "initial": initial,
                "claimed_epsilon": chosen[0]["claimed_epsilon"],
            }
            for key in ("epsilon_lcb", "mu_lcb", "separation"):
                values = [r[key] for r in chosen if r[key] is not None]
                if values:
                    cell[key] = {
                        "median": statistics.median(values),
                        "min": min(values),
                        "max": max(values),
                    }
            cell["violations"] = sum(r["verdict"] == "violation" for r in chosen)
            out.append(cell)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=600)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = []
    for setting in SETTINGS:
        for seed in range(args.seeds):
            for initial in INITIALS:
                row = one(setting, initial, seed, args.runs)
                rows.append(row)
                print(json.dumps(row), flush=True)
    result = {
        "benchmark": "worst_case_initial",
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {platform.python_version()}",
        "runs_per_world": args.runs,
        "seeds": list(range(args.seeds)),
        "confidence": 0.95,
        "settings": SETTINGS,
        "rows": rows,
        "summary": summary(rows),
        "seconds": time.perf_counter() - start,
    }
    print(json.dumps(result["summary"], indent=1))
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
