"""HoHo grid speed and memory: embedding, encoding, 100 copies per target, both attacks.

Runs the full grid of HoHo §3.1 (OME at ε ∈ {0.001, 1} × λ ∈ {1, 10, 100}, SUE
and OUE at both ε; 800 sentences, 80 targets × 100 copies; HoHo and optimal
attacks) in a fresh interpreter and reports

* wall time and CPU time of the whole grid (corpus read and GloVe loading
  included), against the 60 s budget on 2 cores;
* peak RSS of that process (``ru_maxrss``) next to the peak RSS of a process
  that only loads the memory-mapped GloVe table and embeds the corpus — the
  difference is what the attacks cost;
* the grid itself (AUCs, reconstruction accuracies, optimal ≥ HoHo), so the run
  doubles as the acceptance check on the corpus given by ``--data``;
* with ``--utility``, the same grid with the sentiment classifier (timed apart).

Usage::

    .venv/bin/python benchmarks/hoho_grid.py \\
        --data /path/to/sentiment_labelled/yelp_labelled.txt [--utility] [--quick] [--json FILE]

Without ``--data`` the UCI yelp file shipped with dpaudit is used (the same
bytes).  ``--quick``: 200 sentences, 20 copies (a smoke run, not the target).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

BUDGET_SECONDS = 60.0
RSS_BUDGET_MB = 2048.0

GRID_PROBE = """
import json, resource, sys, time
t0 = time.perf_counter(); c0 = time.process_time()
from dpaudit import progress
progress.ENABLED = False
from dpaudit.attacks.grid import render_table, run_grid
from dpaudit.serialization import to_jsonable
from dpaudit.text.corpus import load_corpus
path, n, copies, utility = sys.argv[1] or None, int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
corpus = load_corpus(path)
result = run_grid(corpus, n_sentences=n, copies=copies, utility=utility == "1")
wall = time.perf_counter() - t0
cpu = time.process_time() - c0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"wall": wall, "cpu": cpu, "rss_mb": rss, "table": render_table(result),
                  "grid": to_jsonable(result)}))
"""

EMBED_PROBE = """
import json, resource, sys
from dpaudit.attacks.experiment import prepare_attack_data
from dpaudit.text.corpus import load_corpus
from dpaudit.text.embedders import glove_6b_50d
data = prepare_attack_data(load_corpus(sys.argv[1] or None), int(sys.argv[2]))
glove = glove_6b_50d()
print(json.dumps({"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "memmap": type(glove.matrix).__name__,
                  "glove_file_mb": glove.matrix.nbytes / 2**20}))
"""


def probe(code: str, *args: str) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter; its last stdout line is one JSON object."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"probe failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def acceptance(grid: dict[str, Any]) -> dict[str, bool]:
    """HoHo §3.1's findings on this run (issue 4 acceptance)."""
    rows = grid["rows"]
    ome = {(r["epsilon"], r["lam"]): r for r in rows if r["scheme"] == "ome"}
    chance = [r for r in rows if r["scheme"] != "ome" or r["lam"] == 1.0]
    leaky = [r for r in rows if r["scheme"] == "ome" and r["lam"] in (10.0, 100.0)]

    def rec(lam: float) -> list[float]:
        return [r["reconstruction_hoho"] for (e, lm), r in ome.items() if lm == lam]

    return {
        "linking AUC 1.00 for λ ∈ {10, 100}": all(
            round(r["linking_auc_hoho"], 2) == 1.0 for r in leaky
        ),
        "linking AUC within 0.05 of chance for λ = 1, SUE, OUE": all(
            abs(r["linking_auc_hoho"] - 0.5) <= 0.05 for r in chance
        ),
        "reconstruction ≈ 99% (λ=100), ≈ 91% (λ=10), ≈ 50% (λ=1) within 1 point": all(
            abs(a - 0.99) <= 0.01 for a in rec(100.0)
        )
        and all(abs(a - 0.91) <= 0.01 for a in rec(10.0))
        and all(abs(a - 0.50) <= 0.01 for a in rec(1.0)),
        "optimal linking not worse (3 paired SE) everywhere": all(
            r["optimal_not_worse"] for r in rows
        ),
        "optimal reconstruction ≥ HoHo everywhere": all(
            r["reconstruction_optimal"] >= r["reconstruction_hoho"] for r in rows
        ),
    }


def benchmark(quick: bool = False, data: str | None = None, utility: bool = False) -> dict:
    """Time the grid (and optionally the utility grid); the entry point of ``run_all.py``."""
    n, copies = (200, 20) if quick else (800, 100)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    baseline = probe(EMBED_PROBE, data or "", str(n))
    grid = probe(GRID_PROBE, data or "", str(n), str(copies), "0")
    out: dict[str, Any] = {
        "seconds": grid["wall"],
        "cpu_seconds": grid["cpu"],
        "peak_rss_mb": grid["rss_mb"],
        "embed_only_peak_rss_mb": baseline["rss_mb"],
        "glove_matrix": f"{baseline['memmap']} of {baseline['glove_file_mb']:.0f} MB",
        "ratio": f"{grid['wall'] / BUDGET_SECONDS:.0%} of the {BUDGET_SECONDS:.0f} s budget, "
        f"RSS {grid['rss_mb'] / RSS_BUDGET_MB:.0%} of 2 GB",
        "sentences": n,
        "copies": copies,
        "load_average_before": load,
        "table": grid["table"],
        "acceptance": acceptance(grid["grid"]) if not quick else {},
        "grid": grid["grid"],
    }
    if utility:
        with_utility = probe(GRID_PROBE, data or "", str(n), str(copies), "1")
        out["utility_seconds"] = with_utility["wall"] - grid["wall"]
        out["with_utility_seconds"] = with_utility["wall"]
        out["with_utility_table"] = with_utility["table"]
    return out


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", default=None, help="UCI yelp file (default: bundled copy)")
    parser.add_argument("--quick", action="store_true", help="200 sentences, 20 copies")
    parser.add_argument("--utility", action="store_true", help="also time the utility grid")
    parser.add_argument("--json", default=None, metavar="FILE", help="write the result here")
    args = parser.parse_args()
    out = benchmark(quick=args.quick, data=args.data, utility=args.utility)
    print(out["table"])
    print()
    print(
        f"grid (attacks only): {out['seconds']:.1f} s wall, {out['cpu_seconds']:.1f} s CPU "
        f"({out['ratio']}); peak RSS {out['peak_rss_mb']:.0f} MB "
        f"(embedding alone {out['embed_only_peak_rss_mb']:.0f} MB; GloVe {out['glove_matrix']}); "
        f"load average before {out['load_average_before']:.1f}"
    )
    if args.utility:
        print(
            f"with utility: {out['with_utility_seconds']:.1f} s wall "
            f"(utility part {out['utility_seconds']:.1f} s)"
        )
        print(out["with_utility_table"])
    for name, ok in out["acceptance"].items():
        print(f"  [{'ok' if ok else 'FAILED'}] {name}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
