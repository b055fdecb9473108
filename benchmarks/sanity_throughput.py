"""Sanity-check throughput and memory, as ratios measured in the same run.

Two paths, two different kinds of figure, each compared with its own like:

* **fused path — white-box**: it trusts (after a two-sample check) the
  mechanism's declared transform ``noise_from_uniform`` and draws one *32-bit*
  uniform per coordinate, deciding each coordinate by one integer comparison.
  Its reference is numpy's raw 32-bit fill rate (``Generator.integers`` of
  64-bit words, two 32-bit uniforms each — exactly the draws the fused path makes);
* **generic path — black-box**: it runs the mechanism's real sampler
  (``mech.sample``, 53-bit uniforms through the inverse CDF for laplace) and
  rounds the float outputs.  Its reference is numpy's own Laplace sampler,
  ``Generator.laplace`` (float64 outputs per second).

Prints, for one core (``workers=1``, in-process):

* both reference rates, measured before and after the runs;
* sanity-check throughput in output coordinates per second, attack and
  planning (decision sets, the declaration check) included, for laplace and
  dptext at n ∈ {1, 8, 128} (fused) and laplace at n ∈ {8, 128} (generic);
  only coordinates actually drawn are counted (DPText on ``1^n`` rounds every
  coordinate to 1 whatever the noise: nothing is drawn, nothing is counted);
* each figure as a ratio to its reference (both per CPU second of this process,
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
from collections.abc import Callable
from pathlib import Path

import numpy as np

from dpaudit import progress
from dpaudit.auditors.sanity.check import sanity_check
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.mechanisms import make_mechanism

FILL = 1 << 20
#: What each path is: the fused one uses the declared transform, the generic one the sampler.
PATH_KIND = {"fused": "white-box", "generic": "black-box"}
REFERENCE_NAME = {"fused": "raw 32-bit fill", "generic": "Generator.laplace"}
RSS_PROBE = """
import resource, sys, time
from dpaudit import progress
progress.ENABLED = False
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.auditors.sanity.check import sanity_check
from dpaudit.mechanisms import make_mechanism
runs = int(sys.argv[1])
t = time.perf_counter()
if runs:
    mech = make_mechanism("laplace", epsilon=1.0, dim=128)
    sanity_check(mech, runs, seed=1, execution=ExecutionConfig(workers=1))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.perf_counter() - t)
"""


def _per_cpu_second(draw: Callable[[], object], per_call: int, seconds: float) -> float:
    draw()
    calls = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        draw()
        calls += 1
    return calls * per_call / (time.process_time() - start)


def fill_rate(seconds: float) -> float:
    """Raw 32-bit uniforms per CPU second: the fused path's draws (64-bit words, two each)."""
    rng = np.random.default_rng(0)
    top = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
    words = FILL // 2
    return _per_cpu_second(
        lambda: rng.integers(0, top, size=words, dtype=np.uint64, endpoint=True), FILL, seconds
    )


def laplace_rate(seconds: float) -> float:
    """Float64 Laplace variates per CPU second from ``Generator.laplace`` (black-box reference)."""
    rng = np.random.default_rng(0)
    return _per_cpu_second(lambda: rng.laplace(0.0, 1.0, FILL), FILL, seconds)


def throughput(name: str, n: int, coords: float, path: str) -> tuple[float, float, int]:
    """(sampled coords per CPU second, per wall second, runs) of one sanity check.

    About ``coords`` output coordinates; planning (the exact decision set) included.
    """
    runs = max(1000, int(coords / (2 * n)))
    mech = make_mechanism(name, epsilon=1.0, dim=n)
    wall, cpu = time.perf_counter(), time.process_time()
    result = sanity_check(mech, runs, seed=7, path=path, execution=ExecutionConfig(workers=1))
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
    ref_seconds = 0.5 if args.quick else 2.0
    before = {"fused": fill_rate(ref_seconds), "generic": laplace_rate(ref_seconds)}
    cases = [(m, n, "fused") for m in ("laplace", "dptext") for n in (1, 8, 128)]
    cases += [("laplace", n, "generic") for n in (8, 128)]
    for name, n, path in cases:
        coords = budget / 10 if path == "generic" else budget
        rate, wall_rate, runs = throughput(name, n, coords, path)
        rows.append(
            {
                "mechanism": name,
                "n": n,
                "path": path,
                "kind": PATH_KIND[path],
                "runs": runs,
                "coords_per_cpu_s": rate,
                "coords_per_wall_s": wall_rate,
            }
        )
    after = {"fused": fill_rate(ref_seconds), "generic": laplace_rate(ref_seconds)}
    reference = {p: (before[p] + after[p]) / 2 for p in before}

    print(
        f"reference, fused path: numpy raw 32-bit uniform fill (Generator.integers, 64-bit "
        f"words) {reference['fused'] / 1e6:.0f} M/CPU-s (before {before['fused'] / 1e6:.0f}, "
        f"after {after['fused'] / 1e6:.0f})"
    )
    print(
        f"reference, generic path: numpy Generator.laplace {reference['generic'] / 1e6:.0f} "
        f"M/CPU-s (before {before['generic'] / 1e6:.0f}, after {after['generic'] / 1e6:.0f})\n"
    )
    print("Rates per CPU second of this process (robust to other load); wall rate beside.")
    print("Only coordinates actually drawn are counted.\n")
    print(
        "| mechanism | n | path | runs/input | M coords/CPU-s | reference | ratio | "
        "M coords/wall-s |"
    )
    print("|---|---:|---|---:|---:|---|---:|---:|")
    for r in rows:
        r["reference"] = REFERENCE_NAME[r["path"]]
        r["ratio_to_reference"] = r["coords_per_cpu_s"] / reference[r["path"]]
        print(
            f"| {r['mechanism']} | {r['n']} | {r['path']} ({r['kind']}) | {r['runs']:,} | "
            f"{r['coords_per_cpu_s'] / 1e6:.0f} | {r['reference']} | "
            f"{r['ratio_to_reference']:.2f} | {r['coords_per_wall_s'] / 1e6:.0f} |"
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
            json.dumps(
                {"reference_rates": reference, "throughput": rows, "peak_rss_mib": rss}, indent=2
            )
        )


if __name__ == "__main__":
    main()
