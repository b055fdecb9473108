"""The README's main job, timed: ``dpaudit reproduce all --scale quick`` in a fresh folder.

Measures, in one run: the wall seconds and the CPU seconds of the command (its process and
every child, from ``getrusage``), the 1-minute load average before and after, and for each
figure its work time beside its estimate (``FigureSpec.expected_seconds['quick']``, the
number the progress bar and the overrun line use) and their ratio.  The issue's bar: each
ratio within [½, 2] on an idle machine, the whole job ≤ 5 minutes on 2 idle cores.

Run: ``PYTHONPATH=src python benchmarks/main_job.py --json
benchmarks/results/main_job.json`` (the job itself: about 4 minutes on 2 idle cores).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dpaudit.reproduce.registry import figure_names, get_figure
from dpaudit.rundir.layout import RUN_STATUS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results"
        load_before = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "dpaudit.cli.main", "-q", "reproduce", "all", "--scale",
             "quick", "--out", str(out)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        load_after = os.getloadavg()[0]
        status = json.loads((out / RUN_STATUS).read_text()) if (out / RUN_STATUS).exists() else {}
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    work = status.get("work_seconds", {})
    figures = {}
    for name in figure_names():
        est = float(get_figure(name).expected_seconds.get("quick", float("nan")))
        real = work.get(name)
        figures[name] = {
            "estimate_s": est,
            "work_s": real,
            "ratio": None if real is None or not est else round(real / est, 3),
        }
    result = {
        "measured": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "exit_code": done.returncode,
        "status": status.get("status"),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "load_1min_before": round(load_before, 2),
        "load_1min_after": round(load_after, 2),
        "figures": figures,
        "stderr_tail": done.stderr[-2000:] if done.returncode else "",
    }
    text = json.dumps(result, indent=2)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
