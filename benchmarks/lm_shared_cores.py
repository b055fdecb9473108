"""A white-box rewriter cell on idle cores, then beside one CPU-bound competitor per core.

One competing process per core takes half of every core, so a cell that shares fairly
runs at most 2× slower (the share of the cores it lost); a cell whose torch threads
busy-wait or oversubscribe the cores runs far slower than that.  Measured in one run,
the same cell each time (DP-Prompt on the default model, one pair, fixed seed):

* ``idle``: nothing else running, torch's default thread count;
* ``shared, threads as is``: the competitors running, torch's default thread count;
* ``shared, dpaudit's choice``: the competitors running, the thread count dpaudit's CLI and
  figures pick from the machine's pace (:func:`dpaudit.engine.pace.threads_for_now`: one
  thread when the probe finds the machine busy).

The rows are the median of ``--repeats`` runs each, interleaved (idle, shared, shared, …).

Usage::

    python benchmarks/lm_shared_cores.py [--model smollm2|tiny] [--repeats 3] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import statistics
import time
from typing import Any

import torch

from dpaudit.auditors.rewriter import RewriterAuditConfig, audit_rewriter
from dpaudit.engine.pace import probe_pace, threads_for_now
from dpaudit.mechanisms.rewriters import dp_prompt
from dpaudit.text.models import load_model, tiny_model
from dpaudit.text.models.loading import torch_threads

PAIRS = [("the patient was sick today", "the patient was happy today", "one word")]


def _spin() -> None:  # a CPU-bound competitor: never waits
    x = 0
    while True:
        x = (x * 1103515245 + 12345) % 2147483648


def _cell(model: Any) -> float:
    """Wall seconds of one white-box cell: sample, score exactly, certify."""
    rewriter = dp_prompt(model, 10.0, clip=(-10.0, 10.0), max_new_tokens=8)
    start = time.perf_counter()
    audit_rewriter(rewriter, PAIRS, RewriterAuditConfig(samples=10, final_samples=20, seed=0))
    return time.perf_counter() - start


def _shared(model: Any, threads: int | None) -> tuple[float, float, int | None]:
    """The cell beside one spinning process per core: (seconds, pace probe, threads used)."""
    cores = os.cpu_count() or 1
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(cores)]
    for p in spinners:
        p.start()
    try:
        time.sleep(0.5)
        pace = probe_pace()
        chosen = threads_for_now(pace) if threads == -1 else threads
        with torch_threads(chosen):
            seconds = _cell(model)
    finally:
        for p in spinners:
            p.terminate()
        for p in spinners:
            p.join()
    return seconds, pace, chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2", choices=("smollm2", "tiny"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    model = load_model(None, kind="causal") if args.model == "smollm2" else tiny_model("causal")
    _cell(model)  # warm-up: first-call costs out of every row
    idle, as_is, chosen, paces, picks = [], [], [], [], []
    for _ in range(args.repeats):
        idle.append(_cell(model))
        as_is.append(_shared(model, None)[0])
        seconds, pace, pick = _shared(model, -1)
        chosen.append(seconds)
        paces.append(pace)
        picks.append(pick)
    base = statistics.median(idle)
    rows = {
        "idle": base,
        "shared, threads as is": statistics.median(as_is),
        "shared, dpaudit's choice": statistics.median(chosen),
    }
    report = {
        "what": "one white-box DP-Prompt cell (1 pair, 10 + 20 rewrites of ≤ 8 tokens), "
        "idle and beside one CPU-bound process per core; medians of the repeats",
        "when": time.strftime("%Y-%m-%d"),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "torch_threads_default": torch.get_num_threads(),
        },
        "model": args.model,
        "repeats": args.repeats,
        "seconds": rows,
        "slowdown": {k: v / base for k, v in rows.items()},
        "allowed_slowdown": 2.0,
        "pace_probes_when_shared": paces,
        "threads_chosen_when_shared": picks,
        "raw": {"idle": idle, "shared, threads as is": as_is, "shared, dpaudit's choice": chosen},
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0 if report["slowdown"]["shared, dpaudit's choice"] <= 2.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
