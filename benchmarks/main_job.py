"""The README's main job, timed: ``dpaudit reproduce all --scale quick`` in a fresh folder.

Measures, in one run: the wall seconds and the CPU seconds of the command (its process and
every child, from ``getrusage``), the 1-minute load average before, during (sampled every
5 s) and after, and for each figure its work time beside two estimates: the idle one
(``FigureSpec.expected_seconds['quick']``) and the one the run made for this machine when the
figure started (the idle one times :class:`dpaudit.engine.pace.Pace`'s factor; it is what the
overrun line uses), with their ratios.  The bar: each figure's real time within [½, 2] of the
run's estimate, idle or loaded; the whole job ≤ 5 minutes on 2 idle cores.

``--load N`` starts N busy-looping processes for the whole job (a machine shared with other
work); their CPU time is not counted in the job's.

Run: ``PYTHONPATH=src python benchmarks/main_job.py --json benchmarks/results/main_job.json``
(about 4 minutes on 2 idle cores); loaded: ``... --load 4 --json
benchmarks/results/main_job_loaded.json`` (about 3× longer).
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
import threading
import time
from pathlib import Path

from dpaudit.reproduce.registry import figure_names, get_figure
from dpaudit.rundir.layout import RUN_STATUS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None)
    ap.add_argument("--load", type=int, default=0, help="busy-looping processes beside the job")
    args = ap.parse_args()
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)
    ]
    loads: list[float] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(5.0):
            loads.append(os.getloadavg()[0])

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        wall, cpu, load_before, load_after, status, done = _run_job()
    finally:
        stop.set()
        for burner in burners:
            burner.kill()
    work = status.get("work_seconds", {})
    estimated = status.get("estimated_seconds", {})
    figures = {}
    for name in figure_names():
        idle = float(get_figure(name).expected_seconds.get("quick", float("nan")))
        real, here = work.get(name), estimated.get(name)
        figures[name] = {
            "idle_estimate_s": idle,
            "estimate_s": here,
            "work_s": real,
            "ratio_to_idle_estimate": _ratio(real, idle),
            "ratio": _ratio(real, here),
        }
    ratios = [f["ratio"] for f in figures.values() if f["ratio"] is not None]
    result = {
        "measured": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "busy_processes_beside": args.load,
        "exit_code": done.returncode,
        "status": status.get("status"),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "load_1min_before": round(load_before, 2),
        "load_1min_during_median": round(sorted(loads)[len(loads) // 2], 2) if loads else None,
        "load_1min_during_max": round(max(loads), 2) if loads else None,
        "load_1min_after": round(load_after, 2),
        "pace_probe": status.get("pace_probe"),
        "ratio_range": [min(ratios), max(ratios)] if ratios else None,
        "figures": figures,
        "stderr_tail": done.stderr[-2000:] if done.returncode else "",
    }
    text = json.dumps(result, indent=2)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    print(text)


def _ratio(real: float | None, estimate: float | None) -> float | None:
    return None if real is None or not estimate else round(real / estimate, 3)


def _run_job() -> tuple[float, float, float, float, dict, subprocess.CompletedProcess]:
    """Run the job in a fresh folder: wall s, CPU s, load before/after, its status, the process."""
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
    return wall, cpu, load_before, load_after, status, done


if __name__ == "__main__":
    main()
