"""Start-up time of the ``dpaudit`` command: ``--help`` and error paths, against ``import numpy``.

Every case runs in a fresh interpreter (the installed console script next to
this Python, else ``python -m dpaudit.cli.main``), ``--repetitions`` times,
interleaved with the reference ``python -c "import numpy"`` so that machine load
hits both alike.  Reported per case: the median wall time and its ratio to the
reference's median (the spread: min and max).  The error paths are those a user
meets first — no sub-command, an unknown one, a missing or invalid argument, an
unknown mechanism, a bad ``--out`` — and each must exit 2 with one line on stderr.

Usage::

    .venv/bin/python benchmarks/startup.py [--repetitions 15] [--json FILE]

Target: every case ≤ 3× the reference (well under a second on an idle core;
``import numpy`` takes about 0.1 s there).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

#: Ratio to ``python -c "import numpy"`` that every case must stay within.
TARGET_RATIO = 3.0

#: (label, arguments after ``dpaudit``, expected exit status).
CASES: list[tuple[str, list[str], int]] = [
    ("dpaudit --help", ["--help"], 0),
    ("dpaudit --version", ["--version"], 0),
    ("dpaudit audit --help", ["audit", "--help"], 0),
    ("no sub-command", [], 2),
    ("unknown sub-command", ["no-such-command"], 2),
    ("audit: missing --epsilon", ["audit", "laplace"], 2),
    ("audit: --epsilon -1", ["audit", "laplace", "--epsilon", "-1"], 2),
    ("audit: --samples 1.5", ["audit", "laplace", "--epsilon", "1", "--samples", "1.5"], 2),
    ("sanity-check: unknown mechanism", ["sanity-check", "no-such-mech", "--epsilon", "1"], 2),
    ("reproduce: unknown figure", ["reproduce", "no-such-figure", "--out", "/nonexistent/x"], 2),
    ("attack hoho: unknown scheme", ["attack", "hoho", "--scheme", "nope", "--epsilon", "1"], 2),
    (
        "utility: missing corpus file",
        ["utility", "--scheme", "ome", "--epsilon", "1", "--data", "/nonexistent/corpus.txt"],
        2,
    ),
]


def dpaudit_command() -> list[str]:
    """The console script beside this interpreter, else ``python -m dpaudit.cli.main``."""
    script = Path(sys.executable).with_name("dpaudit")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dpaudit.cli.main"]


def _wall(argv: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    return time.perf_counter() - start, proc


def benchmark(repetitions: int = 15) -> dict[str, Any]:
    """Median wall seconds of every case and of the reference, and their ratios."""
    reference_argv = [sys.executable, "-c", "import numpy"]
    command = dpaudit_command()
    times: dict[str, list[float]] = {"reference": [], **{label: [] for label, _, _ in CASES}}
    problems: list[str] = []
    for _ in range(max(1, repetitions)):
        for label, args, expected in CASES:
            times["reference"].append(_wall(reference_argv)[0])
            seconds, proc = _wall([*command, *args])
            times[label].append(seconds)
            lines = proc.stderr.strip().splitlines()
            if proc.returncode != expected or (expected == 2 and len(lines) != 1):
                problems.append(f"{label}: exit {proc.returncode}, stderr {proc.stderr!r}")
    ref = statistics.median(times["reference"])
    rows = []
    for label, _, _ in CASES:
        median = statistics.median(times[label])
        rows.append(
            {
                "case": label,
                "median_s": median,
                "min_s": min(times[label]),
                "max_s": max(times[label]),
                "ratio": median / ref,
            }
        )
    worst = max(r["ratio"] for r in rows)
    return {
        "command": " ".join(command),
        "repetitions": repetitions,
        "reference_median_s": ref,
        "reference_min_s": min(times["reference"]),
        "reference_max_s": max(times["reference"]),
        "rows": rows,
        "worst_ratio": worst,
        "target_ratio": TARGET_RATIO,
        "met": worst <= TARGET_RATIO and not problems,
        "problems": sorted(set(problems)),
    }


def render(result: dict[str, Any]) -> str:
    """A plain-text table of :func:`benchmark`'s result."""
    lines = [
        f'reference `python -c "import numpy"`: median {result["reference_median_s"]:.3f} s '
        f"(min {result['reference_min_s']:.3f}, max {result['reference_max_s']:.3f}); "
        f"{result['repetitions']} repetitions; command {result['command']}",
        f"{'case':<36} {'median':>8} {'min':>7} {'max':>7} {'ratio':>7}",
    ]
    for r in result["rows"]:
        lines.append(
            f"{r['case']:<36} {r['median_s']:>7.3f}s {r['min_s']:>6.3f}s {r['max_s']:>6.3f}s "
            f"{r['ratio']:>6.2f}×"
        )
    lines.append(
        f"worst ratio {result['worst_ratio']:.2f}× (target ≤ {result['target_ratio']:g}×): "
        f"{'met' if result['met'] else 'NOT met'}"
    )
    lines += [f"problem: {p}" for p in result["problems"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the table, optionally write JSON; exit 1 if the target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repetitions", type=int, default=15, help="runs per case (default 15)")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the result here")
    args = parser.parse_args(argv)
    result = benchmark(args.repetitions)
    print(render(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if result["met"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
