"""One-run canary audits of DP synthetic text: the DP bigram generator, correct and broken.

    PYTHONPATH=src .venv/bin/python benchmarks/synthetic_text.py [--seeds 10]
        [--out benchmarks/results/synthetic_text.json]

:class:`~dpaudit.mechanisms.training.dp_bigram.DPBigramText` (1/z-GDP with z = 1, 16
bigrams per text, the 1000 bundled sentences as the private set) as released, and with
each planted flaw, releasing 1000 or 4000 synthetic sentences.  Each cell is a one-run
audit at the defaults of ``dpaudit audit-training dp-bigram``: 1000 random-token canaries,
each in the private set with probability 1/2, scored on the released corpus only (``echo``
and ``bigram``), confidence 0.95, the GDP claim read at δ = 10⁻⁵ and tested as a curve.
Per seed: verdict, ε_lcb, μ_lcb and seconds.  The correct generator must never be flagged.

``--multi-run-seeds S`` adds the multi-run audit with one ``echo`` canary (frequent corpus
words in bigrams no text holds) scored by ``novel`` (the share of its own bigrams the corpus
releases), ``--multi-run-runs`` trainings per world, on the correct generator and the
``unscaled-noise`` flaw (truly 4-GDP in its table), 1000 released texts, seeds 0..S-1.
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
from dpaudit.auditors.training.one_run import OneRunConfig
from dpaudit.engine.config import ExecutionConfig
from dpaudit.mechanisms.training.dp_bigram import BIGRAM_FLAWS, DPBigramText

RELEASED = (1000, 4000)


def one(flaw: str, texts: int, seed: int) -> dict[str, Any]:
    trainer = DPBigramText(flaw=flaw, texts=texts)
    start = time.perf_counter()
    config = OneRunConfig(delta=1e-5, seed=seed)
    result = audit_training(trainer, method="one-run", config=config)
    return {
        "flaw": flaw,
        "texts": texts,
        "seed": seed,
        "verdict": result.verdict,
        "epsilon_lcb": result.epsilon_lower_bound,
        "mu_lcb": result.detail.mu_lower_bound,
        "seconds": time.perf_counter() - start,
    }


def multi_run_row(flaw: str, runs: int, seed: int) -> dict[str, Any]:
    """One multi-run audit with an echo canary scored by ``novel`` (module docstring)."""
    trainer = DPBigramText(flaw=flaw, texts=1000)
    start = time.perf_counter()
    config = MultiRunConfig(
        runs=runs, canary_kind="echo", score="novel", seed=seed,
        execution=ExecutionConfig(workers=2),
    )  # fmt: skip
    result = audit_training(trainer, method="multi-run", config=config)
    return {
        "method": "multi-run",
        "flaw": flaw,
        "runs_per_world": runs,
        "seed": seed,
        "verdict": result.verdict,
        "epsilon_lcb": result.epsilon_lower_bound,
        "verdict_text": result.verdict_text,
        "seconds": time.perf_counter() - start,
    }


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (flaw, texts): violations over seeds and the bounds' median, min and max."""
    out = []
    for flaw in BIGRAM_FLAWS:
        for texts in RELEASED:
            chosen = [r for r in rows if r["flaw"] == flaw and r["texts"] == texts]
            cell: dict[str, Any] = {"flaw": flaw, "texts": texts, "audits": len(chosen)}
            cell["violations"] = sum(r["verdict"] == "violation" for r in chosen)
            for key in ("epsilon_lcb", "mu_lcb", "seconds"):
                values = [float(r[key]) for r in chosen]
                cell[key] = {
                    "median": statistics.median(values),
                    "min": min(values),
                    "max": max(values),
                }
            out.append(cell)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--multi-run-seeds", type=int, default=0)
    parser.add_argument("--multi-run-runs", type=int, default=600)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = []
    for flaw in BIGRAM_FLAWS:
        for texts in RELEASED:
            for seed in range(args.seeds):
                row = one(flaw, texts, seed)
                rows.append(row)
                print(json.dumps(row), flush=True)
    multi = []
    for flaw in ("none", "unscaled-noise"):
        for seed in range(args.multi_run_seeds):
            row = multi_run_row(flaw, args.multi_run_runs, seed)
            multi.append(row)
            print(json.dumps(row), flush=True)
    result = {
        "benchmark": "synthetic_text",
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {platform.python_version()}",
        "seeds": list(range(args.seeds)),
        "rows": rows,
        "summary": summary(rows),
        "multi_run_echo": multi,
        "seconds": time.perf_counter() - start,
    }
    print(json.dumps(result["summary"], indent=1))
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
