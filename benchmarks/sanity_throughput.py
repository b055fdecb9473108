"""Sanity-check throughput and memory, as ratios measured in the same run.

Prints, for one core (``workers=1``, in-process):

* numpy's raw uniform-double fill rate (``rng.random(size)``, 2^20 per call);
* sanity-check throughput in mechanism output coordinates per second,
  attack included and planning included, for laplace and dptext at
  n ∈ {1, 8, 128} (fused path), plus the generic path of laplace at n = 128;
* each figure as a ratio to the fill rate (both per CPU second of this process,
  so other load on the machine does not distort the ratio; wall rates beside);
* peak RSS (``resource.getrusage``) of a fresh subprocess running 10^7 and
  10^8 runs at n = 128, next to the RSS of a subprocess that only imports.

Usage: ``python benchmarks/sanity_throughput.py [--quick] [--json FILE]``
(``--quick`` shortens every measurement and skips the 10^8-run RSS probe).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from dpaudit import progress
from dpaudit.audit.sanity_check import sanity_check
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.mechanisms import make_mechanism

FILL = 1 << 20
RSS_PROBE = """
import resource, sys, time
from dpaudit import progress
progress.ENABLED = False
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.audit.sanity_check import sanity_check
from dpaudit.mechanisms import make_mechanism
runs = int(sys.argv[1])
t = time.perf_counter()
if runs:
    mech = make_mechanism("laplace", epsilon=1.0, dim=128)
    sanity_check(mech, runs, seed=1, config=ExecutionConfig(workers=1))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.perf_counter() - t)
"""


def fill_rate(seconds: float) -> float:
    """Uniform doubles per CPU second from ``rng.random(size)``."""
    rng = np.random.default_rng(0)
    rng.random(FILL)
    calls = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        rng.random(FILL)
        calls += 1
    return calls * FILL / (time.process_time() - start)


def throughput(name: str, n: int, coords: float, path: str) -> tuple[float, float, int]:
    """(sampled coords per CPU second, per wall second, runs) of one sanity check.

    About ``coords`` output coordinates; planning (the exact decision set) included.
    """
    runs = max(1000, int(coords / (2 * n)))
    mech = make_mechanism(name, epsilon=1.0, dim=n)
    wall, cpu = time.perf_counter(), time.process_time()
    result = sanity_check(mech, runs, seed=7, path=path, config=ExecutionConfig(workers=1))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    # Count only coordinates that were sampled: an input whose per-coordinate decision
    # is constant (DPText on 1^n: noise >= 0, every coordinate rounds to 1) costs nothing.
    probs = result.coordinate_probability or (0.5, 0.5)
    sampled = sum(1 for p in probs if 0.0 < p < 1.0)
    total = sampled * runs * result.output_dim
    return total / cpu, total / wall, runs


def peak_rss(runs: int) -> tuple[float, float]:
    """(peak RSS in MiB, seconds) of a fresh process running ``runs`` runs at n = 128."""
    proc = subprocess.run(
        [sys.executable, "-c", RSS_PROBE, str(runs)], capture_output=True, text=True, check=True
    )
    kib, seconds = proc.stdout.split()
    return int(kib) / 1024, float(seconds)


def main() -> None:
    """Run every measurement and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="short measurements")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args()
    progress.ENABLED = False
    budget = 2e8 if args.quick else 2e9

    rows = []
    fill_before = fill_rate(0.5 if args.quick else 2.0)
    cases = [(m, n, "fused") for m in ("laplace", "dptext") for n in (1, 8, 128)]
    cases.append(("laplace", 128, "generic"))
    for name, n, path in cases:
        coords = budget / 10 if path == "generic" else budget
        rate, wall_rate, runs = throughput(name, n, coords, path)
        rows.append(
            {
                "mechanism": name,
                "n": n,
                "path": path,
                "runs": runs,
                "coords_per_cpu_s": rate,
                "coords_per_wall_s": wall_rate,
            }
        )
    fill_after = fill_rate(0.5 if args.quick else 2.0)
    fill = (fill_before + fill_after) / 2

    print(
        f"numpy rng.random({FILL}) fill rate: {fill / 1e6:.0f} M doubles per CPU second "
        f"(before {fill_before / 1e6:.0f}, after {fill_after / 1e6:.0f})\n"
    )
    print("Rates per CPU second of this process (robust to other load); wall rate beside.\n")
    print(
        "| mechanism | n | path | runs/input | M coords/CPU-s | ratio to fill | M coords/wall-s |"
    )
    print("|---|---:|---|---:|---:|---:|---:|")
    for r in rows:
        r["ratio_to_fill"] = r["coords_per_cpu_s"] / fill
        print(
            f"| {r['mechanism']} | {r['n']} | {r['path']} | {r['runs']:,} | "
            f"{r['coords_per_cpu_s'] / 1e6:.0f} | {r['ratio_to_fill']:.2f} | "
            f"{r['coords_per_wall_s'] / 1e6:.0f} |"
        )

    rss = {"import only": peak_rss(0), "1e7 runs": peak_rss(10**7)}
    if not args.quick:
        rss["1e8 runs"] = peak_rss(10**8)
    print("\n| laplace, n = 128, 1 worker | peak RSS (MiB) | seconds |")
    print("|---|---:|---:|")
    for label, (mib, secs) in rss.items():
        print(f"| {label} | {mib:.0f} | {secs:.1f} |")

    if args.json:
        Path(args.json).write_text(
            json.dumps({"fill_rate": fill, "throughput": rows, "peak_rss_mib": rss}, indent=2)
        )


if __name__ == "__main__":
    main()
